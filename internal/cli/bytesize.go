package cli

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A flag holding a size in bytes: its default shows as people read sizes
// ("64 KiB", "5.9 GiB", not 6319050752), and it takes a plain count of
// bytes or one with a unit (512MiB, 2 GiB, 1.5GB).

type byteSize int64

type intByteSize int

func (b *byteSize) String() string { return bytesText(int64(*b)) }
func (b *byteSize) Set(s string) error {
	n, err := parseBytes(s, math.MaxInt64)
	*b = byteSize(n)
	return err
}

func (b *intByteSize) String() string { return bytesText(int64(*b)) }
func (b *intByteSize) Set(s string) error {
	n, err := parseBytes(s, math.MaxInt)
	*b = intByteSize(n)
	return err
}

var byteUnits = []struct {
	name string
	n    float64
}{
	{"tib", 1 << 40}, {"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10},
	{"tb", 1e12}, {"gb", 1e9}, {"mb", 1e6}, {"kb", 1e3}, {"b", 1},
}

// bytesText is n in the largest binary unit it reaches: exactly when the
// unit divides it ("64 KiB", "1 GiB"), else to one decimal ("5.9 GiB").
func bytesText(n int64) string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		switch {
		case n < u.n:
		case n%u.n == 0:
			return fmt.Sprintf("%d %s", n/u.n, u.name)
		default:
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.n), u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// parseBytes reads a size, at most most bytes.
func parseBytes(s string, most int64) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.name) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.name)), u.n
			break
		}
	}
	if mult == 1 {
		if n, err := strconv.ParseInt(t, 10, 64); err == nil && n >= 0 && n <= most {
			return n, nil
		}
		return 0, fmt.Errorf("want a size in bytes, such as 1048576, 512MiB or 2GiB, at most %d", most)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*mult > float64(most) {
		return 0, fmt.Errorf("want a size in bytes, such as 1048576, 512MiB or 2GiB, at most %d", most)
	}
	return int64(f * mult), nil
}

// sizeNote ends a size flag's usage; flag.PrintDefaults names the
// flag's argument by its back-quoted word.
const sizeNote = " (a `size`: bytes, or with a unit: 512KiB, 2GiB)"

// bytesFlag is fs.Int64 for a size in bytes.
func bytesFlag(fs *flag.FlagSet, name string, value int64, usage string) *int64 {
	p := new(int64)
	*p = value
	fs.Var((*byteSize)(p), name, usage+sizeNote)
	return p
}

// intBytesFlag is fs.Int for a size in bytes.
func intBytesFlag(fs *flag.FlagSet, name string, value int, usage string) *int {
	p := new(int)
	*p = value
	fs.Var((*intByteSize)(p), name, usage+sizeNote)
	return p
}
