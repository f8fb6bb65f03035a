package txnindex

// txnCursor answers Log.TxnOf for batch indexes that only grow, as a
// consumer's decisions do, in constant time: it walks Log.Txns (ordered by
// FirstBatch) alongside and remembers each producer's latest transaction,
// so a sequential pass pays a table probe per batch instead of TxnOf's map
// lookup and binary search. The Log keeps no per-batch
// transaction index (that would cost 4 bytes per batch); this cursor is the
// price a pass pays instead, and it lives only as long as the pass.
type txnCursor struct {
	next   int  // first index in Txns not yet walked
	last   int  // the last batch index asked for
	random bool // a lookup went backwards: answer by binary search from now on
	init   bool
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

// of returns the transaction batch i of l belongs to, as TxnOf does.
func (c *txnCursor) of(l *Log, i int) *Txn {
	if c.random || i < c.last {
		c.random = true
		return l.TxnOf(i)
	}
	c.last = i
	if !c.init {
		// Slot zero values would claim producer 0's first transaction.
		c.init = true
		for k := range c.slot {
			c.slot[k].ti = -1
		}
	}
	b := &l.Batches[i]
	if !b.HasProducerID() {
		return nil
	}
	control := b.IsControl()
	if control && (b.Records == 0 || !b.IsEndTxnMarker()) || !control && !b.IsTransactional() {
		return nil
	}
	for c.next < len(l.Txns) && l.Txns[c.next].FirstBatch <= int32(i) {
		t := &l.Txns[c.next]
		c.slot[uint64(t.ProducerID)%cursorSlots] = cursorSlot{t.ProducerID, int32(c.next), t.MarkerBatch}
		c.next++
	}
	s := &c.slot[uint64(b.ProducerID)%cursorSlots]
	if s.ti < 0 || s.pid != b.ProducerID {
		return l.TxnOf(i)
	}
	switch {
	case control && s.marker != int32(i):
		return nil // a marker for an empty transaction: it closed nothing
	case !control && s.marker >= 0 && int32(i) > s.marker:
		return nil
	}
	return &l.Txns[s.ti]
}
