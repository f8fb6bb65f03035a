package present

import (
	"fmt"

	"github.com/txnscope/txnscope/txnindex"
)

// logBuilder writes a partition the way a broker would lay it out: batches
// at consecutive offsets and byte positions, markers of 78 bytes, segments
// rolled on request. Tests read like the scenario they describe. It is
// txnindex's test builder (txnindex/helpers_test.go), whose tests cannot
// share it with this package's.
type logBuilder struct {
	p    txnindex.Partition
	next int64 // next offset
	pos  int64 // byte position in the current segment
	ts   int64
}

func newLog() *logBuilder {
	b := &logBuilder{ts: 1_700_000_000_000}
	b.p.Topic, b.p.LogStartOffset, b.p.HighWatermark = "t", -1, -1
	b.p.Segments = []txnindex.Segment{{Name: segName(0), BaseOffset: 0}}
	return b
}

func segName(base int64) string { return fmt.Sprintf("%020d.log", base) }

func (b *logBuilder) add(bt txnindex.Batch) *logBuilder {
	bt.Segment = int32(len(b.p.Segments) - 1)
	bt.SetPosition(b.pos)
	if bt.Size == 0 {
		bt.Size = 61 + 20*bt.Records
		if bt.IsControl() {
			bt.Size = 78
		}
	}
	bt.BaseTimestamp, bt.MaxTimestamp = b.ts, b.ts
	b.ts += 10
	b.pos += int64(bt.Size)
	b.p.Segments[len(b.p.Segments)-1].Size = b.pos
	b.p.Batches = append(b.p.Batches, bt)
	b.next = bt.LastOffset() + 1
	return b
}

// txn appends a transactional data batch of n records from pid.
func (b *logBuilder) txn(pid txnindex.ProducerID, n int) *logBuilder {
	return b.add(txnindex.BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, Magic: 2, ProducerID: pid,
		Attributes: txnindex.AttrTransactional, Records: int32(n), BaseSequence: 0, CoordinatorEpoch: -1, Control: txnindex.ControlNone}.Batch())
}

// plain appends a non-transactional batch of n records; pid may be -1.
func (b *logBuilder) plain(pid txnindex.ProducerID, n int) *logBuilder {
	return b.add(txnindex.BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, Magic: 2, ProducerID: pid,
		Records: int32(n), BaseSequence: -1, CoordinatorEpoch: -1, Control: txnindex.ControlNone}.Batch())
}

func (b *logBuilder) marker(pid txnindex.ProducerID, ct txnindex.ControlType, epoch int16) *logBuilder {
	return b.add(txnindex.BatchFields{BaseOffset: b.next, LastOffset: b.next, Magic: 2, ProducerID: pid, ProducerEpoch: epoch,
		Attributes: txnindex.AttrTransactional | txnindex.AttrControl, Records: 1, BaseSequence: -1, Control: ct, CoordinatorEpoch: 0}.Batch())
}

func (b *logBuilder) commit(pid txnindex.ProducerID) *logBuilder {
	return b.marker(pid, txnindex.ControlCommit, 0)
}
func (b *logBuilder) abort(pid txnindex.ProducerID) *logBuilder {
	return b.marker(pid, txnindex.ControlAbort, 0)
}

func (b *logBuilder) build() *txnindex.Log { return txnindex.Build(&b.p) }

const (
	p1 txnindex.ProducerID = 1
	p2 txnindex.ProducerID = 2
	p3 txnindex.ProducerID = 3
)

// txnAt appends a transactional data batch of n records from pid at epoch.
func (b *logBuilder) txnAt(pid txnindex.ProducerID, epoch int16, n int) *logBuilder {
	return b.add(txnindex.BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, Magic: 2, ProducerID: pid, ProducerEpoch: epoch,
		Attributes: txnindex.AttrTransactional, Records: int32(n), BaseSequence: 0, CoordinatorEpoch: -1, Control: txnindex.ControlNone}.Batch())
}
