package testfixture

import (
	"slices"

	"github.com/txnscope/txnscope/txnindex"
)

// PrefixLog is l as the broker has it once the first k of bs are written
// (bs: l's batches, then any a lesson appends), for the lesson tests to
// compare each step with: built from the batches alone, so no .txnindex
// entry of a later marker; the high watermark at the log end, never past
// l's own unless the batch is one the lesson appended. A segment whose
// .txnindex l lost (no file beside its .index, while its aborted
// transactions imply entries) lists none of the markers the files hold;
// markers appended later (a remedy's ABORT) get their entries as the
// broker writes them.
func PrefixLog(l *txnindex.Log, bs []txnindex.Batch, k int) *txnindex.Log {
	n := 1
	if k > 0 {
		n = int(bs[k-1].Segment) + 1
	}
	segs := slices.Clone(l.Segments[:n])
	for i := range segs {
		segs[i].TxnIndex, segs[i].TxnIndexOnDisk, segs[i].TxnIndexAbsent = nil, false, false
	}
	hw := l.LogStartOffset
	if k > 0 {
		hw = bs[k-1].NextOffset()
		if k <= len(l.Batches) {
			hw = min(hw, l.HighWatermark)
		}
	}
	build := func() *txnindex.Log {
		return txnindex.Build(&txnindex.Partition{Topic: l.Topic, Partition: l.Partition, Segments: segs, Batches: slices.Clone(bs[:k]),
			LogStartOffset: l.LogStartOffset, HighWatermark: hw})
	}
	p := build()
	lost := false
	for i := range segs {
		if l.Segments[i].TxnIndexAbsent && i < len(l.RebuiltIndex) && len(l.RebuiltIndex[i]) > 0 {
			segs[i].TxnIndex, segs[i].TxnIndexOnDisk = nil, true
			for _, e := range p.RebuiltIndex[i] {
				if e.LastOffset >= l.LogEndOffset {
					segs[i].TxnIndex = append(segs[i].TxnIndex, e)
				}
			}
			lost = true
		}
	}
	if lost {
		p = build()
	}
	return p
}
