package gen

import (
	"fmt"

	"github.com/txnscope/txnscope/txnindex"
)

// Start is the timestamp of a Writer's first batch, 2026-01-01T00:00:00Z
// (the scenario builder's too); each next batch is a second later.
const Start = 1_767_225_600_000

// Writer lays batch headers out in memory as a broker appends them:
// consecutive offsets and positions, per-producer sequences, a timestamp a
// second apart, segments rolled on demand. Nothing is encoded: sizes are
// those of v2 batches of 24-byte records (61 + 24n) and 78-byte markers,
// so a million batches cost no start-up time for nothing the loader needs
// to prove.
type Writer struct {
	p        txnindex.Partition
	next     int64
	pos      int64
	ts       int64
	sequence map[txnindex.ProducerID]int32
}

// NewWriter starts partition 0 of topic with one segment at offset 0, log
// start and high watermark left to Build (-1).
func NewWriter(topic string) *Writer {
	w := &Writer{p: txnindex.Partition{Topic: topic, LogStartOffset: -1, HighWatermark: -1}, ts: Start}
	w.p.Segments = []txnindex.Segment{{Name: fmt.Sprintf("%020d.log", 0)}}
	return w
}

// Partition is the partition written so far. Build it, or change its
// batches first (a test's timestamps); further writes append to it.
func (w *Writer) Partition() *txnindex.Partition { return &w.p }

func (w *Writer) add(b txnindex.Batch) {
	b.Segment = int32(len(w.p.Segments) - 1)
	b.SetPosition(w.pos)
	b.BaseTimestamp, b.MaxTimestamp = w.ts, w.ts
	w.ts += 1000
	w.pos += int64(b.Size)
	w.p.Segments[len(w.p.Segments)-1].Size = w.pos
	w.p.Batches = append(w.p.Batches, b)
	w.next = b.LastOffset() + 1
}

// Data appends a data batch of n records from producer pid (-1: no
// producer id), transactional or not. An idempotent producer's batches
// carry consecutive sequence numbers.
func (w *Writer) Data(pid txnindex.ProducerID, n int, txn bool) {
	if w.sequence == nil {
		w.sequence = map[txnindex.ProducerID]int32{}
	}
	b := txnindex.BatchFields{BaseOffset: w.next, LastOffset: w.next + int64(n) - 1, Magic: 2, ProducerID: pid,
		Records: int32(n), Size: int32(61 + 24*n), BaseSequence: -1, CoordinatorEpoch: -1, Control: txnindex.ControlNone}.Batch()
	if pid >= 0 {
		b.SetBaseSequence(w.sequence[pid])
		w.sequence[pid] += int32(n)
	}
	if txn {
		b.SetAttributes(txnindex.AttrTransactional)
	}
	w.add(b)
}

// Marker appends producer pid's end-transaction marker (COMMIT or ABORT).
func (w *Writer) Marker(pid txnindex.ProducerID, ct txnindex.ControlType) {
	w.add(txnindex.BatchFields{BaseOffset: w.next, LastOffset: w.next, Magic: 2, ProducerID: pid, Records: 1, Size: 78,
		Attributes: txnindex.AttrTransactional | txnindex.AttrControl, BaseSequence: -1, Control: ct, CoordinatorEpoch: 0}.Batch())
}

// Skip leaves n offsets without a batch, as the log cleaner does when it
// removes records.
func (w *Writer) Skip(n int64) { w.next += n }

// Roll starts a new segment at the next offset.
func (w *Writer) Roll() {
	w.p.Segments = append(w.p.Segments, txnindex.Segment{Name: fmt.Sprintf("%020d.log", w.next), BaseOffset: w.next})
	w.pos = 0
}
