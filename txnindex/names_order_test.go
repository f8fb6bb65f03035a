package txnindex

import (
	"slices"
	"testing"
)

// TestNaturalCompare: digit runs compare as numbers, leading zeros aside.
func TestNaturalCompare(t *testing.T) {
	in := []string{"__consumer_offsets-39", "t10", "__consumer_offsets-8", "t2", "a", "t02x", "t2x"}
	slices.SortFunc(in, NaturalCompare)
	want := []string{"__consumer_offsets-8", "__consumer_offsets-39", "a", "t2", "t02x", "t2x", "t10"}
	if !slices.Equal(in, want) {
		t.Errorf("%q, want %q", in, want)
	}
}
