package live

import (
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// TestCompareDeliveredClipsAtPosition: the engine's delivered offsets are
// compared only below the committed position kgo reached, a range crossing
// it cut there; an offset kgo delivered and the engine did not is named.
func TestCompareDeliveredClipsAtPosition(t *testing.T) {
	p := &txnindex.Partition{Topic: "t", LogStartOffset: -1, HighWatermark: -1}
	add := func(base, last int64, pid txnindex.ProducerID, attrs int16, ct txnindex.ControlType) {
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: base, LastOffset: last, ProducerID: pid, Magic: 2, Attributes: attrs,
			Control: ct, Records: int32(last - base + 1), Size: 100, BaseSequence: -1, CoordinatorEpoch: -1}.Batch())
	}
	add(0, 1, -1, 0, txnindex.ControlNone)
	add(2, 4, 7, txnindex.AttrTransactional, txnindex.ControlNone)
	add(5, 5, 7, txnindex.AttrTransactional|txnindex.AttrControl, txnindex.ControlAbort)
	add(6, 9, -1, 0, txnindex.ControlNone)
	l := txnindex.Build(p)
	// Delivered: 0-1 and 6-9; kgo reached 8.
	if m := compareDelivered(l, 0, 8, [][2]int64{{0, 1}, {6, 7}}); m != "" {
		t.Errorf("agreeing offsets: %s", m)
	}
	m := compareDelivered(l, 0, 8, [][2]int64{{0, 4}, {6, 7}})
	if !strings.Contains(m, "the engine delivers 0-1,6-7, kgo's read_committed filter on the broker's responses delivered 0-4,6-7") {
		t.Errorf("differing offsets: %q", m)
	}
}
