package api

import (
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestMetaLaneRows: the meta message carries txnindex's lane rule for the
// page: each lane's default row, whether it is folded into the
// non-transactional row, and its distinguishing label.
func TestMetaLaneRows(t *testing.T) {
	b := newBuilder("t")
	b.data(8070450532247924917, 1, false) // idempotent: folded
	b.data(7, 2, true)
	b.data(8070450532247953281, 1, false)
	b.marker(7, txnindex.ControlCommit)
	lanes := lanesJSON(txnindex.Build(&b.p))
	type want struct {
		row     int
		folded  bool
		display string
	}
	wants := []want{{-1, true, "no producer id"}, {0, true, "producer 8070…24917"}, {1, false, "producer 7"}, {0, true, "producer 8070…53281"}}
	if len(lanes) != len(wants) {
		t.Fatalf("%d lanes: %+v", len(lanes), lanes)
	}
	for i, w := range wants {
		if l := lanes[i]; l.Lane != i || l.Row != w.row || l.Folded != w.folded || l.Display != w.display {
			t.Errorf("lane %d: row %d folded %v display %q, want %+v", i, l.Row, l.Folded, l.Display, w)
		}
	}
}
