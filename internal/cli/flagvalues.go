package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/txnindex"
)

// Duration and count flags whose defaults show in the one duration and
// number format of every page and line ("15m", "100,000"), not Go's
// ("15m0s", 100000), and that take what they show.

type durationValue time.Duration

func (d *durationValue) String() string { return txnindex.Duration(time.Duration(*d)) }

// Set takes Go's durations (1h30m, 250ms), with spaces between the parts
// and days (2d 3h) as the default shows them.
func (d *durationValue) Set(s string) error {
	t := strings.NewReplacer(" ", "", ",", "").Replace(strings.TrimSpace(s))
	var days int64
	if i := strings.IndexByte(t, 'd'); i > 0 {
		n, err := strconv.ParseInt(t[:i], 10, 64)
		if err != nil || n < 0 || n > 100_000 {
			return fmt.Errorf("want a duration such as 250ms, 5s, 15m, 1h30m or 2d, found %q", s)
		}
		days, t = n, t[i+1:]
	}
	var rest time.Duration
	if t != "" {
		v, err := time.ParseDuration(t)
		if err != nil {
			return fmt.Errorf("want a duration such as 250ms, 5s, 15m, 1h30m or 2d, found %q", s)
		}
		rest = v
	}
	*d = durationValue(time.Duration(days)*24*time.Hour + rest)
	return nil
}

// durationNote ends a duration flag's usage: flag.PrintDefaults names
// the flag's argument by its back-quoted word.
const durationNote = " (a `duration`: 250ms, 5s, 15m, 1h30m)"

// durationFlag is fs.Duration shown in the one duration format.
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	*p = value
	fs.Var((*durationValue)(p), name, usage+durationNote)
	return p
}

type countValue int

func (c *countValue) String() string { return txnindex.Count(int64(*c)) }

// Set takes a count with or without thousands separators (100,000 or
// 100_000 or 100000).
func (c *countValue) Set(s string) error {
	n, err := strconv.Atoi(strings.NewReplacer(",", "", "_", "").Replace(strings.TrimSpace(s)))
	if err != nil {
		return fmt.Errorf("want a whole number such as 100,000, found %q", s)
	}
	*c = countValue(n)
	return nil
}

// countNote ends a count flag's usage.
const countNote = " (a `count`)"

// countFlag is fs.Int shown in the one number format.
func countFlag(fs *flag.FlagSet, name string, value int, usage string) *int {
	p := new(int)
	*p = value
	fs.Var((*countValue)(p), name, usage+countNote)
	return p
}
