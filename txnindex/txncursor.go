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
	last      int   // the last batch index asked for
	random    bool  // a lookup went backwards: answer by binary search from now on
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
	if c.random || i < c.last {
		c.random = true
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
	s := &c.slot[uint64(b.ProducerID)%cursorSlots]
	hit := b2u(s.pid == b.ProducerID) & b2u(s.ti >= 0)
	if cand&^hit != 0 {
		return l.TxnOf(i) // another producer holds the slot
	}
	// A data batch belongs to the transaction while it is open (marker
	// -1, the largest as uint32) or up to its marker; a marker closes it
	// only if it is that marker (else it closed an empty transaction, and
	// nothing). cand implies magic 2, so the attribute bit is IsControl.
	ctl := uint32(b.flags>>5) & 1 // AttrControl
	in := (b2u(s.marker == int32(i))&ctl | b2u(uint32(i) <= uint32(s.marker))&^ctl) & cand
	t := &l.Txns[s.ti&-int32(in)] // index 0 when not in: s.ti may be -1
	if in == 0 {
		t = nil
	}
	return t
}

func (c *txnCursor) start(l *Log) {
	// Slot zero values would claim producer 0's first transaction.
	c.init = true
	for k := range c.slot {
		c.slot[k].ti = -1
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
