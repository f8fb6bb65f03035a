package txnindex

import (
	"fmt"
	"slices"
)

// Variant selects whose consumer rules Consumer follows. For logs a Kafka
// broker wrote, all three deliver the same records (a transaction's first
// offset is always a batch base offset, so their different tests select the
// same batches); they part ways on hand-made or hostile input, which the
// tests exercise.
type Variant uint8

// Consumer variants.
const (
	// VariantJava is the Apache Kafka consumer's CompletedFetch: aborted
	// entries in a min-heap by first offset; a producer enters the aborted
	// set when an entry's first offset is <= the batch's last offset, and
	// leaves it on its ABORT marker; bookkeeping runs even for batches
	// wholly below the position.
	VariantJava Variant = iota
	// VariantLibrdkafka is rdkafka_msgset_reader.c: per-producer sorted
	// first offsets with a cursor; a transactional, non-control batch is
	// skipped when its base offset >= the producer's current first offset;
	// an ABORT marker at or past the position advances the cursor when the
	// current first offset is <= the marker's offset.
	VariantLibrdkafka
	// VariantFranzGo is franz-go's kgo source.go: batches wholly below the
	// position are dropped before any bookkeeping; a transactional batch
	// (control included) is aborted when its base offset >= the producer's
	// smallest remaining first offset; an ABORT control record inside an
	// aborted batch pops that offset, at most once per batch.
	VariantFranzGo
)

// String names the client.
func (v Variant) String() string {
	switch v {
	case VariantLibrdkafka:
		return "librdkafka"
	case VariantFranzGo:
		return "franz-go"
	}
	return "java"
}

// ParseVariant parses "java", "librdkafka" or "franz-go".
func ParseVariant(s string) (Variant, error) {
	switch s {
	case "java", "":
		return VariantJava, nil
	case "librdkafka":
		return VariantLibrdkafka, nil
	case "franz-go", "franzgo", "kgo":
		return VariantFranzGo, nil
	}
	return 0, fmt.Errorf("txnindex: unknown consumer variant %q (want java, librdkafka or franz-go)", s)
}

// Consumer is one partition's fetch-response filter. It keeps the position
// across responses, as a consumer does, and the aborted-transaction state of
// the response it is working through. The zero value is a read_uncommitted
// Java consumer at offset 0.
type Consumer struct {
	Isolation Isolation
	Variant   Variant
	Position  int64 // the next offset the consumer wants (nextFetchOffset)

	// Log, when set, resolves batches and aborted-list elements to the
	// broker's transactions and index entries, for reasons. Decisions are
	// the same without it.
	Log *Log

	// Java: the queue of aborted transactions ordered by first offset,
	// and the set of producers whose aborted transaction is under way.
	queue []AbortedTransaction
	qi    int
	set   map[ProducerID]AbortedTransaction

	// librdkafka and franz-go: per producer, sorted first offsets and a cursor.
	perPID map[ProducerID]*pidAborts

	txns txnCursor // resolves Decision.Txn for batches of Log in order
}

type pidAborts struct {
	offs []int64
	i    int
}

func (p *pidAborts) current() (int64, bool) {
	if p == nil || p.i >= len(p.offs) {
		return 0, false
	}
	return p.offs[p.i], true
}

// NewConsumer returns a consumer at position.
func NewConsumer(iso Isolation, v Variant, position int64) *Consumer {
	return &Consumer{Isolation: iso, Variant: v, Position: position}
}

// Process filters one fetch response, yielding one or two decisions per
// returned batch in offset order (a batch that starts below the position is
// split). fetchOffset is the offset the fetch asked for. It returns false if
// yield asked to stop.
func (c *Consumer) Process(resp *FetchResponse, fetchOffset int64, yield func(Decision) bool) bool {
	c.begin(resp.AbortedTransactions)
	for i := range resp.Batches {
		bi := -1
		if resp.FirstBatch >= 0 {
			bi = resp.FirstBatch + i
		}
		if !c.batch(&resp.Batches[i], bi, fetchOffset, yield) {
			return false
		}
	}
	return true
}

// begin sets up the aborted-transaction state for a new response. Java,
// librdkafka and franz-go all treat a null and an empty list alike: no
// filtering at all.
func (c *Consumer) begin(list []AbortedTransaction) {
	c.queue, c.qi = c.queue[:0], 0
	clear(c.set)
	clear(c.perPID)
	if c.Isolation != ReadCommitted || len(list) == 0 {
		return
	}
	switch c.Variant {
	case VariantJava:
		c.queue = append(c.queue, list...)
		// A stable sort gives the heap's order for distinct first
		// offsets; ties between producers pop in either order with the
		// same effect, since both producers join the set.
		slices.SortStableFunc(c.queue, func(a, b AbortedTransaction) int {
			return cmpInt64(a.FirstOffset, b.FirstOffset)
		})
		if c.set == nil {
			c.set = make(map[ProducerID]AbortedTransaction)
		}
	default:
		if c.perPID == nil {
			c.perPID = make(map[ProducerID]*pidAborts)
		}
		for _, a := range list {
			p := c.perPID[a.ProducerID]
			if p == nil {
				p = &pidAborts{}
				c.perPID[a.ProducerID] = p
			}
			p.offs = append(p.offs, a.FirstOffset)
		}
		// Both sort each producer's first offsets: Redpanda does not
		// return them in order (see franz-go's buildAborter).
		for _, p := range c.perPID {
			slices.Sort(p.offs)
		}
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// batch decides one batch and advances the position.
func (c *Consumer) batch(b *Batch, bi int, fetchOffset int64, yield func(Decision) bool) bool {
	d := Decision{From: b.BaseOffset, To: b.LastOffset(), Batch: b, BatchIndex: int32(bi), FetchOffset: fetchOffset, Uncommitted: Delivered}
	if c.Log != nil && bi >= 0 {
		d.Txn = c.txns.of(c.Log, bi)
	}
	pos := c.Position
	aborted, inSet := false, false
	var el AbortedTransaction

	rc := c.Isolation == ReadCommitted && b.HasProducerID()
	switch c.Variant {
	case VariantJava:
		if rc && len(c.queue) > 0 {
			for c.qi < len(c.queue) && c.queue[c.qi].FirstOffset <= b.LastOffset() {
				a := c.queue[c.qi]
				c.set[a.ProducerID] = a
				c.qi++
			}
			if b.IsAbortMarker() {
				delete(c.set, b.ProducerID)
			} else if len(c.set) > 0 {
				el, inSet = c.set[b.ProducerID]
				aborted = inSet && b.IsTransactional()
			}
		}
	case VariantLibrdkafka:
		if rc && len(c.perPID) > 0 {
			p := c.perPID[b.ProducerID]
			if first, ok := p.current(); ok {
				el, inSet = AbortedTransaction{b.ProducerID, first}, b.BaseOffset >= first
				if b.IsTransactional() && !b.IsControl() && inSet {
					aborted = true
				} else if b.IsAbortMarker() && b.BaseOffset >= pos && first <= b.BaseOffset {
					p.i++
				}
			}
		}
	case VariantFranzGo:
		if rc && len(c.perPID) > 0 && b.LastOffset() >= pos {
			p := c.perPID[b.ProducerID]
			if first, ok := p.current(); ok {
				el, inSet = AbortedTransaction{b.ProducerID, first}, b.BaseOffset >= first
				if b.IsTransactional() && inSet {
					aborted = true
					if b.IsAbortMarker() {
						p.i++
					}
				}
			}
		}
	}

	switch {
	case b.Records == 0 && b.Magic() >= 2:
		d.Verdict, d.Cause = Missing, CauseGapEmptiedBatch
		d.Uncommitted = Missing
	case b.IsControl():
		d.Verdict, d.Uncommitted = Control, Control
		switch {
		case b.IsCommitMarker():
			d.Cause = CauseCommitMarker
		case b.IsAbortMarker():
			d.Cause = CauseAbortMarker
		default:
			d.Cause = CauseOtherControl
		}
	case b.Magic() < 2:
		d.Verdict, d.Cause = Delivered, CauseLegacy
	case c.Isolation != ReadCommitted:
		d.Verdict, d.Cause = Delivered, CauseReadUncommitted
	case aborted:
		d.Verdict, d.Cause, d.Abort = Aborted, CauseAbortedTxn, el
		if c.Log != nil {
			d.AbortInfo = c.Log.LookupAbort(el.ProducerID, el.FirstOffset)
		}
	case !b.IsTransactional() && inSet:
		d.Verdict, d.Cause, d.Abort = Delivered, CauseNonTxnFromAbortedProducer, el
	case !b.IsTransactional():
		d.Verdict, d.Cause = Delivered, CauseNonTransactional
	default:
		d.Verdict, d.Cause = Delivered, CauseNotAborted
	}

	if b.NextOffset() > c.Position {
		c.Position = b.NextOffset()
	}
	if b.BaseOffset < pos {
		before := d
		before.To = min(b.LastOffset(), pos-1)
		before.Verdict, before.Cause, before.Bound = BeforePosition, CauseBelowPosition, pos
		before.Uncommitted = BeforePosition
		if !yield(before) {
			return false
		}
		if b.LastOffset() < pos {
			return true
		}
		d.From = pos
	}
	return yield(d)
}
