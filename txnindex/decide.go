package txnindex

import (
	"iter"
	"math"
)

// ConsumeOptions describe the consumer whose decisions Decisions plays.
type ConsumeOptions struct {
	// From is the position the consumer starts (or seeks) at. Below the
	// log start offset, or -1, it starts at the log start offset, as a
	// consumer with auto.offset.reset=earliest does after
	// OFFSET_OUT_OF_RANGE.
	From      int64
	Isolation Isolation
	Variant   Variant
	MaxBytes  int32 // per-partition fetch size; <= 0 means DefaultMaxBytes

	// EachBatch is, for VariantKafkaJS, a consumer run with eachBatch and
	// its default auto-resolve instead of eachMessage: after a response
	// its position passes every record of it (runner.js processEachBatch
	// resolves batch.lastOffset()), not only the delivered ones.
	EachBatch bool
	// KafkaJSCodecs is, for VariantKafkaJS, a kafkajs with codec packages
	// registered for snappy, lz4 and zstd (CompressionCodecs), which then
	// decompresses every batch instead of failing the fetch.
	KafkaJSCodecs bool
	// AbortedToReadEnd emulates kfake's aborted lists instead of Apache
	// Kafka's (FetchRequest.AbortedToReadEnd).
	AbortedToReadEnd bool
}

// Decisions plays a consumer that fetches from o.From until it reaches the
// LSO (read_committed) or the high watermark, each fetch emulated by
// FetchInto and filtered by a Consumer, and yields a decision for every
// offset range of the log in offset order: batches below the position, the
// fetched batches, the batches it could not reach (pending), and the gaps
// between them. It walks the log once and allocates only its own state.
func (l *Log) Decisions(o ConsumeOptions) iter.Seq[Decision] {
	return func(yield func(Decision) bool) {
		l.decide(o, yield)
	}
}

func (l *Log) decide(o ConsumeOptions, yield func(Decision) bool) {
	switch o.Variant {
	case VariantKafkaGo, VariantKafkaPython:
		l.decideUnfiltered(o, yield)
		return
	case VariantKafkaJS:
		l.decideKafkaJS(o, yield)
		return
	}
	from := o.From
	if from < l.LogStartOffset {
		from = l.LogStartOffset
	}
	maxOffset := l.HighWatermark
	if o.Isolation == ReadCommitted {
		maxOffset = l.LastStableOffset
	}
	gw := gapWalk{gaps: l.Gaps}
	gw.skip()
	// emit yields the gaps that lie before d, then d.
	emit := func(d *Decision) bool {
		if d.From > gw.next && !gw.yieldBefore(d.From, yield) {
			return false
		}
		return yield(*d)
	}
	c := Consumer{Isolation: o.Isolation, Variant: o.Variant, Position: from, Log: l}
	next := 0 // index of the first batch not yet decided

	// skipped decides batches no fetch returned, below the position.
	skipped := func(upto int) bool {
		for ; next < upto; next++ {
			b := &l.Batches[next]
			d := l.unfetched(next, &c.txns)
			d.Verdict, d.Uncommitted, d.Cause, d.Bound = BeforePosition, BeforePosition, CauseBelowPosition, from
			if b.LastOffset() < l.LogStartOffset {
				d.Cause, d.Bound = CauseBelowLogStart, l.LogStartOffset
			}
			if !emit(&d) {
				return false
			}
		}
		return true
	}

	// The fetched batches, decided by Consumer.batch as Consumer.Process
	// does, with the gaps between them: this loop runs once per batch.
	resp := FetchResponse{AbortedTransactions: make([]AbortedTransaction, 0, abortedListCap)}
	c.queue = make([]AbortedTransaction, 0, abortedListCap)
	var out [2]Decision
	pos := from
	for pos < maxOffset {
		l.FetchInto(FetchRequest{Offset: pos, MaxBytes: o.MaxBytes, Isolation: o.Isolation}, &resp)
		if resp.Err != FetchOK || len(resp.Batches) == 0 {
			break
		}
		if !skipped(resp.FirstBatch) {
			return
		}
		c.begin(resp.AbortedTransactions)
		for i := range resp.Batches {
			n := c.batch(&resp.Batches[i], resp.FirstBatch+i, pos, &out)
			if !emit(&out[0]) || n == 2 && !emit(&out[1]) {
				return
			}
		}
		next = resp.FirstBatch + len(resp.Batches)
		if c.Position <= pos {
			break // no progress: a batch the consumer cannot pass
		}
		pos = c.Position
	}
	// The batches from next below the position were passed over. Found
	// walking from next, not by binary search: where segments overlap
	// (a segment's batches below the end of the one before) the offsets
	// do not only grow, and the walk stops where a consumer at pos would
	// start, the first batch from next that reaches pos, however the
	// batches are split into segments (segsum decides a segment's window
	// with the same walk). The skipped loop visits those batches anyway.
	upto := next
	for upto < len(l.Batches) && l.Batches[upto].LastOffset() < pos {
		upto++
	}
	if !skipped(upto) {
		return
	}
	// What the consumer never reached.
	for ; next < len(l.Batches); next++ {
		b := &l.Batches[next]
		d := l.unfetched(next, &c.txns)
		d.Verdict, d.Bound = Pending, maxOffset
		switch {
		case b.LastOffset() < maxOffset:
			d.Cause, d.Bound = CauseUnreachable, pos
		case o.Isolation == ReadCommitted:
			d.Cause = CauseAtOrAboveLSO
		default:
			d.Cause = CauseAtOrAboveHWM
		}
		switch {
		case b.Records == 0 && b.Magic() >= 2:
			d.Uncommitted = Missing
		case b.IsControl():
			d.Uncommitted = Control
		case b.LastOffset() < l.HighWatermark:
			d.Uncommitted = Delivered
		default:
			d.Uncommitted = Pending
		}
		if !emit(&d) {
			return
		}
	}
	gw.yieldRest(yield)
}

// abortedListCap is the aborted-list storage a pass starts with (4 KiB
// for the list and as much for the Java queue). The lists are bounded by
// what one fetch's range overlaps, not by the log's length (the 1 MiB
// fetches of BenchmarkDecide's log list at most 155 elements at 10k
// batches, 176 at 1M), so a pass whose lists stay under this allocates the
// same whatever the batch count, and one with longer lists grows them a
// few times, not per batch.
const abortedListCap = 256

// gapWalk yields, in order, the gaps decided on their own: an emptied
// batch's offsets and an overlap are decided with their batch.
type gapWalk struct {
	gaps []Gap
	i    int
	next int64 // From of gaps[i], MaxInt64 when none is left
}

// skip moves i to the next gap decided on its own and sets next.
func (g *gapWalk) skip() {
	for g.i < len(g.gaps) && (g.gaps[g.i].Cause == GapEmptiedBatch || g.gaps[g.i].Cause == GapOverlap) {
		g.i++
	}
	g.next = math.MaxInt64
	if g.i < len(g.gaps) {
		g.next = g.gaps[g.i].From
	}
}

// yieldBefore yields the gaps that start below off.
func (g *gapWalk) yieldBefore(off int64, yield func(Decision) bool) bool {
	for g.i < len(g.gaps) && g.gaps[g.i].From < off {
		if !g.yieldOne(yield) {
			return false
		}
	}
	return true
}

// yieldRest yields the gaps left.
func (g *gapWalk) yieldRest(yield func(Decision) bool) {
	for g.i < len(g.gaps) && g.yieldOne(yield) {
	}
}

func (g *gapWalk) yieldOne(yield func(Decision) bool) bool {
	gp := &g.gaps[g.i]
	g.i++
	g.skip()
	return yield(Decision{From: gp.From, To: gp.To, Verdict: Missing, Uncommitted: Missing, Cause: gapCause(gp.Cause), BatchIndex: -1, FetchOffset: -1})
}

// unfetched starts a decision for batch i that no fetch returned.
func (l *Log) unfetched(i int, txns *txnCursor) Decision {
	b := &l.Batches[i]
	return Decision{From: b.BaseOffset, To: b.LastOffset(), Batch: b, BatchIndex: int32(i), FetchOffset: -1, Txn: txns.of(l, i)}
}

// Delivered returns the offset ranges a consumer with options o receives, in
// order, merging adjacent ranges. It is a convenience over Decisions.
func (l *Log) Delivered(o ConsumeOptions) [][2]int64 {
	var out [][2]int64
	for d := range l.Decisions(o) {
		if d.Verdict != Delivered {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1]+1 == d.From {
			out[n-1][1] = d.To
			continue
		}
		out = append(out, [2]int64{d.From, d.To})
	}
	return out
}
