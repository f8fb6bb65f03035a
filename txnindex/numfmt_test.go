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
