package txnindex

import (
	"fmt"
	"math"
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
	// VariantKafkaJS is kafkajs 2.2.4, which filters record by record
	// (src/consumer/filterAbortedMessages.js); see clients.go.
	VariantKafkaJS
	// VariantKafkaGo is segmentio/kafka-go 0.4.x, which filters nothing;
	// see clients.go.
	VariantKafkaGo
	// VariantKafkaPython is kafka-python 2.0.x, which cannot read
	// committed; see clients.go.
	VariantKafkaPython
)

// Variants are every consumer variant, the three that follow Kafka's rule
// first.
var Variants = []Variant{VariantJava, VariantLibrdkafka, VariantFranzGo, VariantKafkaJS, VariantKafkaGo, VariantKafkaPython}

// Client reports whether v is one of the clients that do not follow
// Kafka's read_committed rule, whose decisions Log.Decisions makes record
// by record (clients.go) rather than with Consumer.
func (v Variant) Client() bool { return v >= VariantKafkaJS }

// String names the client.
func (v Variant) String() string {
	switch v {
	case VariantLibrdkafka:
		return "librdkafka"
	case VariantFranzGo:
		return "franz-go"
	case VariantKafkaJS:
		return "kafkajs"
	case VariantKafkaGo:
		return "kafka-go"
	case VariantKafkaPython:
		return "kafka-python"
	}
	return "java"
}

// ParseVariant parses a variant's name (Variant.String).
func ParseVariant(s string) (Variant, error) {
	switch s {
	case "java", "":
		return VariantJava, nil
	case "librdkafka":
		return VariantLibrdkafka, nil
	case "franz-go", "franzgo", "kgo":
		return VariantFranzGo, nil
	case "kafkajs":
		return VariantKafkaJS, nil
	case "kafka-go", "kafkago", "segmentio":
		return VariantKafkaGo, nil
	case "kafka-python", "kafkapython":
		return VariantKafkaPython, nil
	}
	return 0, fmt.Errorf("txnindex: unknown consumer variant %q (want java, librdkafka, franz-go, kafkajs, kafka-go or kafka-python)", s)
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
	qHead int64 // queue[qi].FirstOffset, MaxInt64 when none is left: the test every batch makes
	set   map[ProducerID]AbortedTransaction
	// setSlot mirrors set, direct-mapped by producer id, for the lookup
	// every batch makes (see setGet).
	setSlot     [setSlots]setSlot
	setOverflow int // producers in set whose slot speaks for another

	// librdkafka and franz-go: per producer, sorted first offsets and a
	// cursor, as a range of queue (sorted by producer, then first offset).
	perPID map[ProducerID]int32 // index in ranges
	ranges []pidAborts

	txns       txnCursor // resolves Decision.Txn for batches of Log in order
	keysUnique bool      // Log.abortKeysUnique, as of the response's begin
	abortMemo  struct {
		log  *Log
		el   AbortedTransaction
		info *AbortInfo
	}
}

// pidAborts is one producer's first offsets, queue[i:end].
type pidAborts struct {
	i, end int32
}

// current returns the producer's smallest remaining first offset.
func (c *Consumer) current(pid ProducerID) (p *pidAborts, first int64, ok bool) {
	k, found := c.perPID[pid]
	if !found {
		return nil, 0, false
	}
	p = &c.ranges[k]
	if p.i >= p.end {
		return p, 0, false
	}
	return p, c.queue[p.i].FirstOffset, true
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
	var out [2]Decision
	for i := range resp.Batches {
		bi := -1
		if resp.FirstBatch >= 0 {
			bi = resp.FirstBatch + i
		}
		n := c.batch(&resp.Batches[i], bi, fetchOffset, &out)
		if !yield(out[0]) || n == 2 && !yield(out[1]) {
			return false
		}
	}
	return true
}

// begin sets up the aborted-transaction state for a new response. Java,
// librdkafka and franz-go all treat a null and an empty list alike: no
// filtering at all.
func (c *Consumer) begin(list []AbortedTransaction) {
	c.queue, c.qi, c.qHead = c.queue[:0], 0, math.MaxInt64
	c.keysUnique = c.Log != nil && c.Log.abortKeysUnique()
	clear(c.set)
	c.setSlot, c.setOverflow = [setSlots]setSlot{}, 0
	clear(c.perPID)
	c.ranges = c.ranges[:0]
	if c.Isolation != ReadCommitted || len(list) == 0 {
		return
	}
	// One queue, reused from response to response, for every variant: a
	// consumer allocates for the longest aborted list and the most
	// producers one response has, not per response.
	c.queue = append(c.queue, list...)
	switch c.Variant {
	case VariantJava:
		// A stable sort gives the heap's order for distinct first
		// offsets; ties between producers pop in either order with the
		// same effect, since both producers join the set.
		slices.SortStableFunc(c.queue, func(a, b AbortedTransaction) int {
			return cmpInt64(a.FirstOffset, b.FirstOffset)
		})
		if c.set == nil {
			c.set = make(map[ProducerID]AbortedTransaction)
		}
		c.qHead = c.queue[0].FirstOffset
	default:
		// Both sort each producer's first offsets: Redpanda does not
		// return them in order (see franz-go's buildAborter).
		slices.SortFunc(c.queue, func(a, b AbortedTransaction) int {
			if a.ProducerID != b.ProducerID {
				return cmpInt64(int64(a.ProducerID), int64(b.ProducerID))
			}
			return cmpInt64(a.FirstOffset, b.FirstOffset)
		})
		if c.perPID == nil {
			c.perPID = make(map[ProducerID]int32)
		}
		for i, a := range c.queue {
			if i == 0 || c.queue[i-1].ProducerID != a.ProducerID {
				c.perPID[a.ProducerID] = int32(len(c.ranges))
				c.ranges = append(c.ranges, pidAborts{i: int32(i)})
			}
			c.ranges[len(c.ranges)-1].end = int32(i + 1)
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

// batch decides one batch into out[0], or, when the batch starts below the
// position and reaches it, into out[0] (the offsets below the position) and
// out[1], and returns how many; it advances the position. The decision is
// written in place, not returned, and the header's part of the verdict comes
// from a table (batchClasses), because this runs once per batch of a pass.
func (c *Consumer) batch(b *Batch, bi int, fetchOffset int64, out *[2]Decision) int {
	iso := 0
	if c.Isolation == ReadCommitted {
		iso = 1
	}
	cl := &batchClasses[iso][b.classIndex()]
	last := b.LastOffset()
	pos := c.Position
	var txn *Txn
	if l := c.Log; l != nil && bi >= 0 {
		// resolve, with its common case inline: a call here would cost
		// a pass more than the lookup does.
		cand := uint32(cl.is/clTxnCandidate) & 1 & b2u(b.ProducerID > NoProducerID)
		if t := &c.txns; t.ready(l, bi) && !t.slotMiss(b, cand) {
			t.last = bi
			txn = t.slotTxn(l, bi, b, cand)
		} else {
			txn = t.resolve(l, bi, b, cand)
		}
	}
	aborted, inSet := false, false
	var el AbortedTransaction

	// The aborted-transaction bookkeeping runs for every batch with a
	// producer id (HasProducerID), whatever its records or kind. Batches
	// without one are mixed in at random, so the Java consumer's is
	// written to do nothing for them without branching on it: they pop
	// nothing from the queue and are in no set.
	hasPID := b.ProducerID > NoProducerID
	if c.Isolation == ReadCommitted && cl.is&clV2 != 0 {
		switch c.Variant {
		case VariantJava:
			// An empty aborted list leaves the queue and the set empty:
			// nothing to pop, delete or find.
			limit := last
			if !hasPID {
				limit = math.MinInt64
			}
			if c.qHead <= limit {
				c.pop(limit)
			}
			if cl.is&clAbortMarker != 0 {
				if hasPID && len(c.set) > 0 {
					c.setDelete(b.ProducerID)
				}
			} else if len(c.set) > 0 {
				el, inSet = c.setGet(b.ProducerID)
				inSet = b2u(inSet)&b2u(hasPID) != 0
				aborted = inSet && cl.is&clTransactional != 0
			}
		case VariantLibrdkafka:
			if !hasPID {
				break
			}
			if len(c.perPID) > 0 {
				if p, first, ok := c.current(b.ProducerID); ok {
					el, inSet = AbortedTransaction{b.ProducerID, first}, b.BaseOffset >= first
					if cl.is&clTransactional != 0 && cl.is&clControl == 0 && inSet {
						aborted = true
					} else if cl.is&clAbortMarker != 0 && b.BaseOffset >= pos && first <= b.BaseOffset {
						p.i++
					}
				}
			}
		case VariantFranzGo:
			if hasPID && len(c.perPID) > 0 && last >= pos {
				if p, first, ok := c.current(b.ProducerID); ok {
					el, inSet = AbortedTransaction{b.ProducerID, first}, b.BaseOffset >= first
					if cl.is&clTransactional != 0 && inSet {
						aborted = true
						if cl.is&clAbortMarker != 0 {
							p.i++
						}
					}
				}
			}
		}
	}

	// Field by field: a composite literal is built on the stack and copied.
	d := &out[0]
	d.From, d.To, d.Verdict, d.Cause, d.Uncommitted = b.BaseOffset, last, cl.verdict, cl.cause, cl.uncommitted
	d.BatchIndex, d.Batch, d.Txn, d.FetchOffset = int32(bi), b, txn, fetchOffset
	d.Abort, d.AbortInfo, d.Bound = AbortedTransaction{}, nil, 0
	// Only a read_committed data batch of a producer in the aborted set
	// departs from its header's verdict (aborted implies inSet).
	if inSet && cl.is&clRCData != 0 {
		switch {
		case aborted:
			d.Verdict, d.Cause, d.Abort = Aborted, CauseAbortedTxn, el
			if c.Log != nil {
				if e := txnEntry(txn); e != nil && c.keysUnique && e.Entry.ProducerID == el.ProducerID && e.Entry.FirstOffset == el.FirstOffset {
					d.AbortInfo = e // = LookupAbort(el), see Log.abortKeysUnique
				} else {
					d.AbortInfo = c.lookupAbort(el)
				}
			}
		case cl.is&clTransactional == 0:
			d.Verdict, d.Cause, d.Abort = Delivered, CauseNonTxnFromAbortedProducer, el
		}
	}

	if next := last + 1; next > c.Position {
		c.Position = next
	}
	if b.BaseOffset >= pos {
		return 1
	}
	// The batch starts below the position: its offsets there are before
	// the position, the rest (if any) decided as above.
	out[1] = *d
	d.To = min(last, pos-1)
	d.Verdict, d.Cause, d.Bound = BeforePosition, CauseBelowPosition, pos
	d.Uncommitted = BeforePosition
	if last < pos {
		return 1
	}
	out[1].From = pos
	return 2
}

// pop moves the queue's transactions that start at or before limit into
// the set, as the Java consumer's CompletedFetch.consumeAbortedTransactionsUpTo
// does with the batch's last offset before it looks at a batch: it polls
// while the head's first offset is <= that offset.
func (c *Consumer) pop(limit int64) {
	for c.qi < len(c.queue) && c.queue[c.qi].FirstOffset <= limit {
		c.setPut(c.queue[c.qi])
		c.qi++
	}
	c.qHead = math.MaxInt64
	if c.qi < len(c.queue) {
		c.qHead = c.queue[c.qi].FirstOffset
	}
}

const setSlots = 64

// setSlot is the Java aborted set's state for producer pid, when valid.
type setSlot struct {
	pid     ProducerID
	el      AbortedTransaction
	valid   bool // the slot speaks for pid: present and el are set's
	present bool
}

// setPut is set[a.ProducerID] = a. The slot follows when it speaks for
// the producer or for one no longer in the set; otherwise the producer
// lives in the map only, and setOverflow counts it.
func (c *Consumer) setPut(a AbortedTransaction) {
	s := &c.setSlot[uint64(a.ProducerID)%setSlots]
	mine := s.valid && s.pid == a.ProducerID
	if !mine {
		_, in := c.set[a.ProducerID]
		switch {
		case !s.present:
			if in {
				c.setOverflow-- // moves from the map alone into the slot
			}
			mine = true
		case !in:
			c.setOverflow++
		}
	}
	c.set[a.ProducerID] = a
	if mine {
		*s = setSlot{pid: a.ProducerID, el: a, valid: true, present: true}
	}
}

// setDelete is delete(set, pid).
func (c *Consumer) setDelete(pid ProducerID) {
	if s := &c.setSlot[uint64(pid)%setSlots]; s.valid && s.pid == pid {
		s.present, s.el = false, AbortedTransaction{}
	} else if _, in := c.set[pid]; in {
		c.setOverflow--
	}
	delete(c.set, pid)
}

// setGet is set[pid]: a slot compare for the producers the slots speak
// for, and the map only while some producer lives there alone.
func (c *Consumer) setGet(pid ProducerID) (AbortedTransaction, bool) {
	if s := &c.setSlot[uint64(pid)%setSlots]; s.valid && s.pid == pid {
		return s.el, s.present
	}
	if c.setOverflow == 0 {
		return AbortedTransaction{}, false
	}
	el, ok := c.set[pid]
	return el, ok
}

func txnEntry(t *Txn) *AbortInfo {
	if t == nil {
		return nil
	}
	return t.Entry
}

// lookupAbort is Log.LookupAbort remembering its last answer: a Log's
// entries do not change, and the batches of one aborted transaction come
// one after another with the same aborted-list element, so a pass probes
// the log-wide map once per aborted transaction rather than per batch.
func (c *Consumer) lookupAbort(el AbortedTransaction) *AbortInfo {
	m := &c.abortMemo
	if m.log != c.Log || m.el != el {
		m.log, m.el, m.info = c.Log, el, c.Log.LookupAbort(el.ProducerID, el.FirstOffset)
	}
	return m.info
}

// batchClass is what a batch's header alone says about its decision.
type batchClass struct {
	verdict, uncommitted Verdict
	cause                Cause
	is                   classBits
}

type classBits uint8

const (
	clV2            classBits = 1 << iota // magic 2: it may have a producer id
	clTransactional                       // IsTransactional
	clControl                             // IsControl
	clAbortMarker                         // IsAbortMarker
	clTxnCandidate                        // txnCandidate, but for the producer id
	// clRCData: a read_committed data batch, whose verdict the aborted
	// set may change.
	clRCData
)

// classIndex packs the header bits a decision reads: the transactional and
// control attributes, the magic, the control type, and whether the batch
// has records (none, some, or a negative count no broker writes).
func (b *Batch) classIndex() int {
	f := int(b.flags)
	k := f>>4&0x3 | f>>(flagMagicShift-2)&0xfc // attributes 0x10, 0x20; magic and control type
	switch {
	case b.Records == 0:
		k |= 0x100
	case b.Records < 0:
		k |= 0x200
	}
	return k
}

// batchClasses, per isolation (ReadUncommitted, ReadCommitted) and
// classIndex, are made by deciding a sample batch of each class the long
// way (classify), so the table cannot disagree with the Batch methods.
var batchClasses = func() (t [2][0x300]batchClass) {
	for k := range 0x300 {
		var b Batch
		b.flags = uint16(k&0x3)<<4 | uint16(k&0xfc)<<(flagMagicShift-2)
		switch k >> 8 {
		case 0:
			b.Records = 1
		case 2:
			b.Records = -1
		}
		if b.classIndex() != k {
			panic("txnindex: batch class index does not round-trip")
		}
		b.ProducerID = 1
		t[0][k] = classify(&b, ReadUncommitted)
		t[1][k] = classify(&b, ReadCommitted)
	}
	return t
}()

// classify is the verdict of batch b by its header, before the aborted set
// is consulted.
func classify(b *Batch, iso Isolation) batchClass {
	cl := batchClass{uncommitted: Delivered}
	for _, f := range []struct {
		bit classBits
		is  bool
	}{{clV2, b.Magic() >= 2}, {clTransactional, b.IsTransactional()}, {clControl, b.IsControl()},
		{clAbortMarker, b.IsAbortMarker()}, {clTxnCandidate, txnCandidate(b)}} {
		if f.is {
			cl.is |= f.bit
		}
	}
	switch {
	case b.Records == 0 && b.Magic() >= 2:
		cl.verdict, cl.cause = Missing, CauseGapEmptiedBatch
		cl.uncommitted = Missing
	case b.IsControl():
		cl.verdict, cl.uncommitted = Control, Control
		switch {
		case b.IsCommitMarker():
			cl.cause = CauseCommitMarker
		case b.IsAbortMarker():
			cl.cause = CauseAbortMarker
		default:
			cl.cause = CauseOtherControl
		}
	case b.Magic() < 2:
		cl.verdict, cl.cause = Delivered, CauseLegacy
	case iso != ReadCommitted:
		cl.verdict, cl.cause = Delivered, CauseReadUncommitted
	case !b.IsTransactional():
		cl.verdict, cl.cause, cl.is = Delivered, CauseNonTransactional, cl.is|clRCData
	default:
		cl.verdict, cl.cause, cl.is = Delivered, CauseNotAborted, cl.is|clRCData
	}
	return cl
}
