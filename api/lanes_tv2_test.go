package api

import (
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestLanesJSONTV2: the meta message's lane of a transactions v2 producer
// carries txnindex's epoch label, in "epochs" and in "label".
func TestLanesJSONTV2(t *testing.T) {
	p := &txnindex.Partition{Topic: "tv2", LogStartOffset: -1, HighWatermark: -1}
	for i, e := range []int16{0, 1, 1, 2} {
		attrs, ct := int16(txnindex.AttrTransactional), txnindex.ControlNone
		if i%2 == 1 {
			attrs, ct = attrs|txnindex.AttrControl, txnindex.ControlCommit
		}
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: int64(i), LastOffset: int64(i), ProducerID: 7, ProducerEpoch: e, Magic: 2,
			Attributes: attrs, Records: 1, BaseSequence: -1, CoordinatorEpoch: -1, Control: ct, Size: 70}.Batch())
	}
	lanes := lanesJSON(txnindex.Build(p))
	want := "epochs 0–2 (transactions v2: one bump per transaction)"
	if len(lanes) != 2 || lanes[1].Epochs != want || lanes[1].Label != "producer 7 "+want || lanes[1].Txns != 2 {
		t.Errorf("lanes %+v", lanes)
	}
}
