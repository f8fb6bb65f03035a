package txnindex

import (
	"fmt"
	"strings"
)

// logBuilder writes a partition the way a broker would lay it out: batches
// at consecutive offsets and byte positions, markers of 78 bytes, segments
// rolled on request. Tests read like the scenario they describe. The
// other packages' tests use its exported twin, testfixture.LogBuilder;
// testfixture imports txnindex, so this package's tests keep their own.
type logBuilder struct {
	p    Partition
	next int64 // next offset
	pos  int64 // byte position in the current segment
	ts   int64
}

func newLog() *logBuilder {
	b := &logBuilder{ts: 1_700_000_000_000}
	b.p.Topic, b.p.LogStartOffset, b.p.HighWatermark = "t", -1, -1
	b.p.Segments = []Segment{{Name: segName(0), BaseOffset: 0}}
	return b
}

func segName(base int64) string { return fmt.Sprintf("%020d.log", base) }

func (b *logBuilder) add(bt Batch) *logBuilder {
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
func (b *logBuilder) txn(pid ProducerID, n int) *logBuilder {
	return b.add(BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, Magic: 2, ProducerID: pid,
		Attributes: AttrTransactional, Records: int32(n), BaseSequence: 0, CoordinatorEpoch: -1, Control: ControlNone}.Batch())
}

// plain appends a non-transactional batch of n records; pid may be -1.
func (b *logBuilder) plain(pid ProducerID, n int) *logBuilder {
	return b.add(BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, Magic: 2, ProducerID: pid,
		Records: int32(n), BaseSequence: -1, CoordinatorEpoch: -1, Control: ControlNone}.Batch())
}

func (b *logBuilder) marker(pid ProducerID, ct ControlType, epoch int16) *logBuilder {
	return b.add(BatchFields{BaseOffset: b.next, LastOffset: b.next, Magic: 2, ProducerID: pid, ProducerEpoch: epoch,
		Attributes: AttrTransactional | AttrControl, Records: 1, BaseSequence: -1, Control: ct, CoordinatorEpoch: 0}.Batch())
}

func (b *logBuilder) commit(pid ProducerID) *logBuilder { return b.marker(pid, ControlCommit, 0) }
func (b *logBuilder) abort(pid ProducerID) *logBuilder  { return b.marker(pid, ControlAbort, 0) }

// emptied appends a batch the cleaner kept as an empty header over n offsets.
func (b *logBuilder) emptied(pid ProducerID, n int, control bool) *logBuilder {
	attrs := int16(AttrTransactional)
	if control {
		attrs |= AttrControl
	}
	return b.add(BatchFields{BaseOffset: b.next, LastOffset: b.next + int64(n) - 1, Magic: 2, ProducerID: pid,
		Attributes: attrs, Records: 0, BaseSequence: -1, CoordinatorEpoch: -1, Control: ControlNone, Size: 61}.Batch())
}

// skip leaves n offsets out, as compaction does.
func (b *logBuilder) skip(n int) *logBuilder { b.next += int64(n); return b }

// roll starts a new segment at the next offset.
func (b *logBuilder) roll() *logBuilder {
	b.p.Segments = append(b.p.Segments, Segment{Name: segName(b.next), BaseOffset: b.next})
	b.pos = 0
	return b
}

func (b *logBuilder) build() *Log { return Build(&b.p) }

// verdictLetters renders per-offset verdicts: D delivered, A aborted,
// C control, P pending, B before position, G gap. Tables state expectations
// in this alphabet; spaces in expectations are ignored.
var verdictLetter = map[Verdict]byte{Delivered: 'D', Aborted: 'A', Control: 'C', Pending: 'P', BeforePosition: 'B', Missing: 'G', Unpredictable: 'U'}

func letters(l *Log, o ConsumeOptions) string {
	var sb strings.Builder
	next := int64(-1)
	for d := range l.Decisions(o) {
		if next >= 0 && d.From != next {
			fmt.Fprintf(&sb, "<jump %d->%d>", next, d.From)
		}
		for off := d.From; off <= d.To; off++ {
			sb.WriteByte(verdictLetter[d.Verdict])
		}
		next = d.To + 1
	}
	return sb.String()
}

func strip(s string) string { return strings.ReplaceAll(s, " ", "") }
