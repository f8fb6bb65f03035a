package txnindex

import "testing"

// TestCleanerMarkedAgreesWithCompaction: the header test the loader's span
// scan applies (CleanerMarked) says "marked" exactly where compaction finds
// evidence on a one-batch log.
func TestCleanerMarkedAgreesWithCompaction(t *testing.T) {
	cases := []struct {
		name           string
		attr           int16
		delta, records int32
	}{
		{"data batch, every offset", AttrTransactional, 2, 3},
		{"data batch, offsets removed", 0, 4, 2},
		{"data batch, emptied", 0, 2, 0},
		{"marker", AttrTransactional | AttrControl, 0, 1},
		{"marker emptied", AttrTransactional | AttrControl, 0, 0},
		{"marker with a delete horizon", AttrTransactional | AttrControl | AttrDeleteHorizon, 0, 1},
		{"tombstone past its horizon", AttrDeleteHorizon, 0, 1},
	}
	for _, tc := range cases {
		b := BatchFields{BaseOffset: 10, LastOffset: 10 + int64(tc.delta), ProducerID: 7, ProducerEpoch: 0, BaseSequence: -1,
			Records: tc.records, Position: 0, Size: 100, Attributes: tc.attr, Magic: 2, Control: ControlNone, CoordinatorEpoch: -1}.Batch()
		if tc.attr&AttrControl != 0 && tc.records > 0 {
			b = BatchFields{BaseOffset: 10, LastOffset: 10, ProducerID: 7, BaseSequence: -1, Records: tc.records, Size: 100,
				Attributes: tc.attr, Magic: 2, Control: ControlCommit, CoordinatorEpoch: 0}.Batch()
		}
		l := Build(&Partition{Topic: "t", Batches: []Batch{b}, LogStartOffset: 10, HighWatermark: -1})
		if got, want := CleanerMarked(tc.attr, tc.delta, tc.records), l.compaction() != nil; got != want {
			t.Errorf("%s: CleanerMarked %v, compaction evidence %v (%+v)", tc.name, got, want, l.compaction())
		}
	}
}
