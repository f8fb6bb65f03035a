package api

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestFromPosition: what decide --from writes below the position is one
// before_position range from the log start, whatever the sequence held
// there (batches, gaps, or nothing: a log read from a producer snapshot),
// then every decision from the position on as it is, a gap across the
// position cut there.
func TestFromPosition(t *testing.T) {
	d := func(from, to int64, v txnindex.Verdict) txnindex.Decision {
		return txnindex.Decision{From: from, To: to, Verdict: v}
	}
	// The log: start 10, end 30.
	whole := []txnindex.Decision{
		d(10, 11, txnindex.Delivered), d(12, 14, txnindex.Missing), d(15, 19, txnindex.Delivered),
		d(20, 24, txnindex.Aborted), d(25, 29, txnindex.Delivered),
	}
	for _, c := range []struct {
		name string
		seq  []txnindex.Decision
		pos  int64
		want string
	}{
		{"a position at the log start leaves the sequence as it is", whole, 10,
			"10-11 delivered, 12-14 gap, 15-19 delivered, 20-24 aborted, 25-29 delivered"},
		{"a position below the log start leaves it as it is", whole, 3,
			"10-11 delivered, 12-14 gap, 15-19 delivered, 20-24 aborted, 25-29 delivered"},
		{"the offsets below a position at a decision's start are one range", whole, 20,
			"10-19 before_position@20, 20-24 aborted, 25-29 delivered"},
		{"a batch split at the position: its part below is in the range",
			[]txnindex.Decision{d(10, 16, txnindex.BeforePosition), d(17, 19, txnindex.Delivered), d(20, 29, txnindex.Pending)}, 17,
			"10-16 before_position@17, 17-19 delivered, 20-29 pending"},
		{"a gap across the position is cut there", whole, 13,
			"10-12 before_position@13, 13-14 gap, 15-19 delivered, 20-24 aborted, 25-29 delivered"},
		{"a gap from the log start across the position is cut there",
			[]txnindex.Decision{d(10, 14, txnindex.Missing), d(15, 29, txnindex.Delivered)}, 12,
			"10-11 before_position@12, 12-14 gap, 15-29 delivered"},
		{"a gap a seeded replay begins later: the same",
			[]txnindex.Decision{d(11, 14, txnindex.Missing), d(15, 29, txnindex.Delivered)}, 12,
			"10-11 before_position@12, 12-14 gap, 15-29 delivered"},
		{"a log read from a snapshot holds nothing low: the range is the same",
			[]txnindex.Decision{d(18, 19, txnindex.BeforePosition), d(20, 24, txnindex.Aborted), d(25, 29, txnindex.Delivered)}, 20,
			"10-19 before_position@20, 20-24 aborted, 25-29 delivered"},
		{"a position past the log end: every offset is below it", whole, 35,
			"10-29 before_position@35"},
		{"a position at the log end", whole, 30,
			"10-29 before_position@30"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &txnindex.Log{LogStartOffset: 10, LogEndOffset: 30}
			var got []string
			for d := range FromPosition(l, slices.Values(c.seq), c.pos) {
				s := fmt.Sprintf("%d-%d %s", d.From, d.To, d.Verdict)
				if d.Verdict == txnindex.BeforePosition {
					if d.Cause != txnindex.CauseBelowPosition {
						t.Errorf("%s: cause %v", s, d.Cause)
					}
					s += fmt.Sprintf("@%d", d.Bound)
				}
				got = append(got, s)
			}
			if g := strings.Join(got, ", "); g != c.want {
				t.Errorf("position %d:\ngot  %s\nwant %s", c.pos, g, c.want)
			}
		})
	}
	// A consumer of the sequence that stops is not called again.
	l := &txnindex.Log{LogStartOffset: 10, LogEndOffset: 30}
	n := 0
	for range FromPosition(l, slices.Values(whole), 20) {
		if n++; n == 2 {
			break
		}
	}
}
