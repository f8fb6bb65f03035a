package txnindex

import "math"

// txnCursor answers Log.TxnOf for batch indexes that only grow, as a
// consumer's decisions do, in constant time: it walks Log.Txns (ordered by
// FirstBatch) alongside and remembers each producer's latest transaction,
// so a sequential pass pays a table probe per batch instead of TxnOf's map
// lookup and binary search. The Log keeps no per-batch
// transaction index (that would cost 4 bytes per batch); this cursor is the
// price a pass pays instead, and it lives only as long as the pass.
type txnCursor struct {
	next      int   // first index in Txns not yet walked
	nextFirst int32 // Txns[next].FirstBatch, MaxInt32 past the end: the walk's test without loading a Txn
	last      int   // the furthest batch index asked for
	init      bool
	// slot holds, direct-mapped by producer id, a producer's last walked
	// transaction. A walked transaction always lands in its producer's
	// slot, so a slot naming the batch's producer is current; when another
	// producer took the slot, TxnOf's binary search answers. Most logs
	// interleave far fewer producers at a time than there are slots.
	slot [cursorSlots]cursorSlot
}

const cursorSlots = 256

type cursorSlot struct {
	pid    ProducerID
	ti     int32
	marker int32 // the transaction's MarkerBatch, copied so a batch need not load its Txn
}

// txnCandidate reports whether batch b can belong to a transaction at all,
// TxnOf's first tests: a transactional data batch, or an end-transaction
// marker with its record, of a producer with an id.
func txnCandidate(b *Batch) bool {
	if !b.HasProducerID() {
		return false
	}
	control := b.IsControl()
	return !(control && (b.Records == 0 || !b.IsEndTxnMarker()) || !control && !b.IsTransactional())
}

// of returns the transaction batch i of l belongs to, as TxnOf does.
func (c *txnCursor) of(l *Log, i int) *Txn {
	b := &l.Batches[i]
	return c.resolve(l, i, b, b2u(txnCandidate(b)))
}

// resolve is of for a caller that has already classified b = &l.Batches[i]
// (cand is 1 when txnCandidate(b), else 0). Which batches belong to a
// transaction is as random as the log's mix of transactional, plain and
// marker batches, so that choice is made with flag arithmetic and a
// select, not branches the processor would mispredict.
func (c *txnCursor) resolve(l *Log, i int, b *Batch, cand uint32) *Txn {
	if i < c.last {
		// Behind the walk, a slot may hold a later transaction of the
		// same producer: TxnOf answers this lookup, and the walk stays
		// where it is for the next one. A consumer that fetches a batch
		// again (kafkajs re-reads the batch its last response ended
		// in) steps back one batch at a time, then goes on forward.
		return l.TxnOf(i)
	}
	c.last = i
	if !c.init {
		c.start(l)
	}
	if len(l.Txns) == 0 {
		return nil
	}
	if int32(i) >= c.nextFirst {
		c.walk(l, int32(i))
	}
	if c.slotMiss(b, cand) {
		return l.TxnOf(i) // another producer holds the slot
	}
	return c.slotTxn(l, i, b, cand)
}

// ready reports whether resolve(l, i, ...) needs no more than slotTxn:
// the cursor is started and goes forward, and no transaction starts at
// batch i. Consumer.batch tests it and calls slotTxn inline, and resolve,
// a call, only for the batches that start a transaction (a batch in four
// or five, in a log of short transactions).
func (c *txnCursor) ready(l *Log, i int) bool {
	return i >= c.last && int32(i) < c.nextFirst && c.init && len(l.Txns) > 0
}

// slotMiss reports whether batch b, a candidate when cand is 1, must be
// answered by TxnOf: its producer's slot names another producer (an empty
// slot names no producer a candidate has).
func (c *txnCursor) slotMiss(b *Batch, cand uint32) bool {
	return cand&^b2u(c.slot[uint64(b.ProducerID)%cursorSlots].pid == b.ProducerID) != 0
}

// slotTxn answers for batch i = b of l from its producer's slot, when
// slotMiss does not. It is written to inline.
func (c *txnCursor) slotTxn(l *Log, i int, b *Batch, cand uint32) *Txn {
	s := &c.slot[uint64(b.ProducerID)%cursorSlots]
	// A data batch belongs to the transaction while it is open (marker
	// -1) or up to its marker: i <= marker as uint32, that is marker-i
	// (in 64 bits, wrapping when i passes it) below 1<<32. A marker
	// closes it only if it is that marker (else it closed an empty
	// transaction, and nothing): marker-i below 1. cand implies magic 2,
	// so the attribute bit is IsControl.
	data := ^b.flags >> 5 & 1 // not AttrControl
	in := b2u(uint64(uint32(s.marker))-uint64(i) < 1<<(data<<5)) & cand
	return [2]*Txn{nil, &l.Txns[s.ti]}[in] // a select, not a branch: in is as random as the log
}

func (c *txnCursor) start(l *Log) {
	// Slot zero values would claim producer 0's first transaction.
	c.init = true
	for k := range c.slot {
		c.slot[k] = cursorSlot{pid: NoProducerID} // no candidate's: they have an id
	}
	c.nextFirst = math.MaxInt32
	if len(l.Txns) > 0 {
		c.nextFirst = l.Txns[0].FirstBatch
	}
}

// walk puts every transaction that starts at or before batch i in its
// producer's slot.
func (c *txnCursor) walk(l *Log, i int32) {
	for c.next < len(l.Txns) && l.Txns[c.next].FirstBatch <= i {
		t := &l.Txns[c.next]
		c.slot[uint64(t.ProducerID)%cursorSlots] = cursorSlot{t.ProducerID, int32(c.next), t.MarkerBatch}
		c.next++
	}
	c.nextFirst = math.MaxInt32
	if c.next < len(l.Txns) {
		c.nextFirst = l.Txns[c.next].FirstBatch
	}
}

// b2u is 1 for true: the compiler makes it a flag set, not a branch.
func b2u(b bool) uint32 {
	var u uint32
	if b {
		u = 1
	}
	return u
}
