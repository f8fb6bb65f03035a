package txnindex

import (
	"math"
	"testing"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 32767: "32,767", -1234: "-1,234",
		1234567: "1,234,567", -100000: "-100,000", math.MaxInt64: "9,223,372,036,854,775,807", math.MinInt64: "-9,223,372,036,854,775,808"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 batches"}, {1, "1 batch"}, {2, "2 batches"}, {-1, "-1 batch"}, {1000, "1,000 batches"}, {2147483648, "2,147,483,648 batches"}} {
		if got := Plural(c.n, "batch", "batches"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Plural(int32(1), "record", "records"); got != "1 record" {
		t.Errorf("int32: %q", got)
	}
}

func TestDuration(t *testing.T) {
	for _, c := range durationTable {
		if got := DurationMs(c.Ms); got != c.Text {
			t.Errorf("DurationMs(%d) = %q, want %q", c.Ms, got, c.Text)
		}
	}
}

// durationTable is milliseconds and their text.
var durationTable = []struct {
	Ms   int64
	Text string
}{
	{-5, "0s"}, {0, "0s"}, {1, "1ms"}, {850, "850ms"}, {999, "999ms"}, {1000, "1s"}, {1499, "1s"}, {1500, "2s"}, {42_000, "42s"},
	{59_499, "59s"}, {59_500, "1m"}, {60_000, "1m"}, {1_200_000, "20m"}, {1_205_000, "20m 5s"}, {3_599_000, "59m 59s"},
	{3_600_000, "1h"}, {100_003_000, "27h 46m"}, {172_799_000, "47h 59m"}, {172_800_000, "2d"},
	{339*86_400_000 + 3_600_000 + 59_000, "339d 1h"}, {1204 * 86_400_000, "1,204d"},
}
