package txnindex

import (
	"fmt"
	"strconv"
	"time"
)

// The one format of counts and durations in text ("1 offset", "1 batch",
// "1,234,567 records", CLI included): every CLI text printer and the
// labels here use Count and Plural. Counts are quantities; offsets,
// producer ids and epochs are identifiers that a reader copies into
// kafka-transactions.sh or kcat, and stay plain digits.

// Count writes n with comma thousands separators, as the browser's
// Number.toLocaleString does in English: 32,767.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Plural writes n and the noun that agrees with it: "1 batch",
// "0 batches", "1,024 batches".
func Plural[N ~int | ~int32 | ~int64](n N, one, many string) string {
	if n == 1 || n == -1 {
		return Count(int64(n)) + " " + one
	}
	return Count(int64(n)) + " " + many
}

// Bytes is a byte count for a reader, in binary units to one decimal:
// "12.3 MiB", "2.1 KiB", "90 B" (the replay line, the lazy join's note).
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Duration is the one format of a duration in text, pages and CLI alike:
// at most two units, the larger first, the smaller left out when zero,
// whole units passed (a duration is rounded to the second, then each unit
// truncated, so that a page never says 19h beside a reason's 18h):
//
//	850ms, 42s, 20m, 20m 5s, 27h 46m, 339d 1h, 1,204d
//
// Hours run to 48 before days take over, as a transaction's age in hours
// is what a reader compares with transaction.timeout.ms. Zero and negative
// durations are "0s". static/js/format.js's duration is the same function
// for the browser; TestUIFormatMatchesGo runs both over the same inputs.
func Duration(d time.Duration) string {
	if d < time.Second {
		if ms := d.Milliseconds(); ms > 0 {
			return strconv.FormatInt(ms, 10) + "ms"
		}
		return "0s"
	}
	s := int64(d.Round(time.Second) / time.Second)
	two := func(big int64, bu string, small int64, su string) string {
		if small == 0 {
			return Count(big) + bu
		}
		return Count(big) + bu + " " + strconv.FormatInt(small, 10) + su
	}
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return two(s/60, "m", s%60, "s")
	case s < 48*3600:
		return two(s/3600, "h", s%3600/60, "m")
	}
	return two(s/86400, "d", s%86400/3600, "h")
}

// DurationMs is Duration of ms milliseconds.
func DurationMs(ms int64) string { return Duration(time.Duration(ms) * time.Millisecond) }
