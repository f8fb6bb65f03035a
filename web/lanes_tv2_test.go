package web

import (
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestLaneRowTV2: a transactions v2 producer that ran 3,000 transactions
// (its epoch bumped by every marker) is one lane row (and the only one), labelled as such
// rather than as 3,000 fencings.
func TestLaneRowTV2(t *testing.T) {
	p := &txnindex.Partition{Topic: "tv2", LogStartOffset: -1, HighWatermark: -1}
	off := int64(0)
	add := func(attrs int16, ct txnindex.ControlType, epoch int16) {
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: off, LastOffset: off, ProducerID: 42, ProducerEpoch: epoch, Magic: 2,
			Attributes: attrs, Records: 1, BaseSequence: -1, CoordinatorEpoch: -1, Control: ct, Size: 70}.Batch())
		off++
	}
	for e := range int16(3000) {
		add(txnindex.AttrTransactional, txnindex.ControlNone, e)
		add(txnindex.AttrTransactional|txnindex.AttrControl, txnindex.ControlCommit, e+1)
	}
	v := timelineView("s", "tv2", txnindex.Build(p))
	// One row: lane 0 (no batch without a producer id) is empty and not drawn.
	if len(v.Lanes) != 1 {
		t.Fatalf("%d lane rows: %+v", len(v.Lanes), v.Lanes)
	}
	if got, want := v.Lanes[0].Epochs, "epochs 0–3000 (transactions v2: one bump per transaction)"; got != want {
		t.Errorf("lane epochs %q, want %q", got, want)
	}
}
