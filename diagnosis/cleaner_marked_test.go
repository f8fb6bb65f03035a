package diagnosis_test

import (
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// TestCleanerMarkedAgreesWithCompaction: the header test the loader's span
// scan applies (CleanerMarked) says "marked" exactly where compaction finds
// evidence on a one-batch log.
func TestCleanerMarkedAgreesWithCompaction(t *testing.T) {
	cases := []struct {
		name           string
		attr           int16
		delta, records int32
	}{
		{"data batch, every offset", txnindex.AttrTransactional, 2, 3},
		{"data batch, offsets removed", 0, 4, 2},
		{"data batch, emptied", 0, 2, 0},
		{"marker", txnindex.AttrTransactional | txnindex.AttrControl, 0, 1},
		{"marker emptied", txnindex.AttrTransactional | txnindex.AttrControl, 0, 0},
		{"marker with a delete horizon", txnindex.AttrTransactional | txnindex.AttrControl | txnindex.AttrDeleteHorizon, 0, 1},
		{"tombstone past its horizon", txnindex.AttrDeleteHorizon, 0, 1},
	}
	for _, tc := range cases {
		b := txnindex.BatchFields{BaseOffset: 10, LastOffset: 10 + int64(tc.delta), ProducerID: 7, ProducerEpoch: 0, BaseSequence: -1,
			Records: tc.records, Position: 0, Size: 100, Attributes: tc.attr, Magic: 2, Control: txnindex.ControlNone, CoordinatorEpoch: -1}.Batch()
		if tc.attr&txnindex.AttrControl != 0 && tc.records > 0 {
			b = txnindex.BatchFields{BaseOffset: 10, LastOffset: 10, ProducerID: 7, BaseSequence: -1, Records: tc.records, Size: 100,
				Attributes: tc.attr, Magic: 2, Control: txnindex.ControlCommit, CoordinatorEpoch: 0}.Batch()
		}
		l := txnindex.Build(&txnindex.Partition{Topic: "t", Batches: []txnindex.Batch{b}, LogStartOffset: 10, HighWatermark: -1})
		c := diagnosis.Compaction(l)
		if got, want := txnindex.CleanerMarked(tc.attr, tc.delta, tc.records), c != nil; got != want {
			t.Errorf("%s: CleanerMarked %v, compaction evidence %v (%+v)", tc.name, got, want, c)
		}
	}
}
