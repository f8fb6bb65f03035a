package cli

import (
	"math"
	"testing"
	"time"
)

// TestSizeFlags: a size flag takes a plain count of bytes or a number with
// a unit, and shows its default as people read sizes.
func TestSizeFlags(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "1048576", want: 1 << 20},
		{in: "0", want: 0},
		{in: "512KiB", want: 512 << 10},
		{in: "2 GiB", want: 2 << 30},
		{in: "1.5gib", want: 3 << 29},
		{in: "2GB", want: 2e9},
		{in: "100b", want: 100},
		{in: "1.5", bad: true},         // a fraction of a byte
		{in: "-1", bad: true},          // negative
		{in: "-1MiB", bad: true},       // negative with a unit
		{in: "9EiB", bad: true},        // no such unit
		{in: "99999999TiB", bad: true}, // past int64
		{in: "NaNMiB", bad: true},      // not a number
		{in: "9223372036854775808", bad: true},
	} {
		var b byteSize
		err := b.Set(c.in)
		switch {
		case c.bad && err == nil:
			t.Errorf("%q: took %d, want an error", c.in, b)
		case !c.bad && (err != nil || int64(b) != c.want):
			t.Errorf("%q: %d, %v; want %d", c.in, b, err, c.want)
		}
	}
	var small intByteSize
	if err := small.Set("3GiB"); math.MaxInt < 3<<30 && err == nil {
		t.Errorf("3GiB taken into an int of this platform")
	}
	for n, want := range map[int64]string{0: "0 B", 1000: "1000 B", 1 << 10: "1 KiB", 65536: "64 KiB", 1 << 30: "1 GiB", 6319050752: "5.9 GiB", 1<<20 + 1: "1.0 MiB"} {
		b := byteSize(n)
		if got := b.String(); got != want {
			t.Errorf("%d shows as %q, want %q", n, got, want)
		}
	}
}

// TestDurationAndCountFlags: duration and count flags take what their
// defaults show ("2d 3h", "100,000") as well as Go's forms, and refuse
// what is neither.
func TestDurationAndCountFlags(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "15m", want: 15 * time.Minute},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "1h 30m", want: 90 * time.Minute},
		{in: "250ms", want: 250 * time.Millisecond},
		{in: "2d 3h", want: 51 * time.Hour},
		{in: "2d", want: 48 * time.Hour},
		{in: "0", want: 0},
		{in: "15", bad: true},
		{in: "d3h", bad: true},
		{in: "xd", bad: true},
		{in: "999999999d", bad: true},
	} {
		var d durationValue
		err := d.Set(c.in)
		switch {
		case c.bad && err == nil:
			t.Errorf("%q: took %v, want an error", c.in, time.Duration(d))
		case !c.bad && (err != nil || time.Duration(d) != c.want):
			t.Errorf("%q: %v, %v; want %v", c.in, time.Duration(d), err, c.want)
		}
		if !c.bad {
			var back durationValue
			if err := back.Set(d.String()); err != nil || back != d {
				t.Errorf("%q shows as %q, which reads back as %v, %v", c.in, d.String(), time.Duration(back), err)
			}
		}
	}
	for in, want := range map[string]int{"100,000": 100000, "100_000": 100000, "42": 42, "-1": -1} {
		var n countValue
		if err := n.Set(in); err != nil || int(n) != want {
			t.Errorf("%q: %d, %v; want %d", in, n, err, want)
		}
	}
	var n countValue
	if err := n.Set("ten"); err == nil {
		t.Errorf("\"ten\" taken as %d", n)
	}
	if n = 100000; n.String() != "100,000" {
		t.Errorf("100000 shows as %q", n.String())
	}
}
