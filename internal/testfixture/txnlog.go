package testfixture

import (
	"fmt"

	"github.com/txnscope/txnscope/txnindex"
)

// LogBuilder writes a partition the way a broker would lay it out: batches
// at consecutive offsets and byte positions, markers of 78 bytes, segments
// rolled on request. Tests read like the scenario they describe.
//
// txnindex's own tests keep a copy (txnindex/helpers_test.go): this package
// imports txnindex, so txnindex's tests cannot import it.
type LogBuilder struct {
	// Partition is the partition built so far. A test may set what the
	// builder does not write itself: the log start, the producers seeded
	// from a snapshot or DescribeProducers, the snapshot read.
	Partition txnindex.Partition
	next      int64 // next offset
	pos       int64 // byte position in the current segment
	ts        int64
}

// NewLog starts an empty partition "t" at offset 0, with one segment and
// no log start or high watermark known.
func NewLog() *LogBuilder {
	b := &LogBuilder{ts: 1_700_000_000_000}
	b.Partition.Topic, b.Partition.LogStartOffset, b.Partition.HighWatermark = "t", -1, -1
	b.Partition.Segments = []txnindex.Segment{{Name: segName(0), BaseOffset: 0}}
	return b
}

func segName(base int64) string { return fmt.Sprintf("%020d.log", base) }

// StartAt makes the first segment begin at offset base, as when retention
// or compaction deleted what came before it; the next batch is at base.
func (b *LogBuilder) StartAt(base int64) *LogBuilder {
	b.Partition.Segments[0] = txnindex.Segment{Name: segName(base), BaseOffset: base}
	b.next = base
	return b
}

func (b *LogBuilder) add(bt txnindex.Batch) *LogBuilder {
	bt.Segment = int32(len(b.Partition.Segments) - 1)
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
	b.Partition.Segments[len(b.Partition.Segments)-1].Size = b.pos
	b.Partition.Batches = append(b.Partition.Batches, bt)
	b.next = bt.LastOffset() + 1
	return b
}

// Txn appends a transactional data batch of n records from pid.
func (b *LogBuilder) Txn(pid txnindex.ProducerID, n int) *LogBuilder {
	return b.TxnAt(pid, 0, n)
}

// TxnAt appends a transactional data batch of n records from pid at epoch.
func (b *LogBuilder) TxnAt(pid txnindex.ProducerID, epoch int16, n int) *LogBuilder {
	return b.add(txnindex.BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, Magic: 2, ProducerID: pid, ProducerEpoch: epoch,
		Attributes: txnindex.AttrTransactional, Records: int32(n), BaseSequence: 0, CoordinatorEpoch: -1, Control: txnindex.ControlNone}.Batch())
}

// Plain appends a non-transactional batch of n records; pid may be -1.
func (b *LogBuilder) Plain(pid txnindex.ProducerID, n int) *LogBuilder {
	return b.add(txnindex.BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, Magic: 2, ProducerID: pid,
		Records: int32(n), BaseSequence: -1, CoordinatorEpoch: -1, Control: txnindex.ControlNone}.Batch())
}

// Marker appends pid's control batch of type ct at epoch.
func (b *LogBuilder) Marker(pid txnindex.ProducerID, ct txnindex.ControlType, epoch int16) *LogBuilder {
	return b.add(txnindex.BatchFields{BaseOffset: b.next, LastOffset: b.next, Magic: 2, ProducerID: pid, ProducerEpoch: epoch,
		Attributes: txnindex.AttrTransactional | txnindex.AttrControl, Records: 1, BaseSequence: -1, Control: ct, CoordinatorEpoch: 0}.Batch())
}

// Commit appends pid's COMMIT marker at epoch 0.
func (b *LogBuilder) Commit(pid txnindex.ProducerID) *LogBuilder {
	return b.Marker(pid, txnindex.ControlCommit, 0)
}

// Abort appends pid's ABORT marker at epoch 0.
func (b *LogBuilder) Abort(pid txnindex.ProducerID) *LogBuilder {
	return b.Marker(pid, txnindex.ControlAbort, 0)
}

// Roll starts a new segment at the next offset.
func (b *LogBuilder) Roll() *LogBuilder {
	b.Partition.Segments = append(b.Partition.Segments, txnindex.Segment{Name: segName(b.next), BaseOffset: b.next})
	b.pos = 0
	return b
}

// Build replays the partition as the broker does.
func (b *LogBuilder) Build() *txnindex.Log { return txnindex.Build(&b.Partition) }

// CoordState is the coordinator's record of transactional id id: producer
// pid at epoch in state st over parts, with a 60 s timeout and no
// producer-id rotation under way.
func CoordState(id string, pid txnindex.ProducerID, epoch int16, st txnindex.TxnStatus, parts ...txnindex.TopicPartition) txnindex.TxnCoordinatorState {
	s := txnindex.TxnCoordinatorState{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, State: st, Partitions: parts,
		PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, TimeoutMs: 60000, StartTimestamp: -1,
		LastUpdateTimestamp: 1_700_000_000_000, Source: "__transaction_state-0", Offset: 0}
	s.SortPartitions()
	return s
}

// GroupAt is group's committed offset off for partition t-0.
func GroupAt(group string, off int64) txnindex.GroupOffset {
	return txnindex.GroupOffset{Group: group, Topic: "t", Partition: 0, Offset: off, LeaderEpoch: -1, CommitTimestamp: 1,
		ExpireTimestamp: -1, ProducerID: -1, Source: "__consumer_offsets-0", RecordOffset: 0}
}
