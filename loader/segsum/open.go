package segsum

import (
	"slices"
	"sort"

	"github.com/txnscope/txnscope/txnindex"
)

// The transactions open at a segment's start are the producer state the
// broker has there (ProducerStateManager's ongoing transactions), and a
// window of the segment is seeded with them. A summary does not hold that
// set: a segment that leaves K transactions open followed by N segments
// would then cost K×N entries (20,000 transactions left open in a 1.4 MiB
// segment and 100 one-batch segments after it made 459 MB of cache file
// and took 1.9 GB), where the partition holds K+N batches. A summary
// holds what its segment changes (Opened, Closed, Dropped), and the set at
// a segment is derived from them: replayed from the nearest checkpoint
// before it (openIndex), checkpoints being taken only once the changes
// since the last one outnumber the set, so that they cost no more than the
// summaries' own entries.
//
// Nor is a summary's scan seeded with the whole set: a transaction whose
// producer has no batch in the segment stays open through it unchanged,
// and all the replay reads of it is its first offset, where the LSO
// stands while it is the first open one (ProducerStateManager
// .lastStableOffset(completedTxn), which the rebuilt .txnindex entries
// record). The scan is seeded with the transactions of the segment's own
// producers and the first open one of the others (openSet.touched), so
// that K open transactions cost each later segment's scan nothing.

// TxnKey names a transaction: its producer and the offset it began at.
type TxnKey struct {
	ProducerID  txnindex.ProducerID `json:"producer_id"`
	FirstOffset int64               `json:"first_offset"`
}

// openEntry is one transaction of an open set: what a window is seeded
// with, and its parts in the segments since it began (acc), which a
// window adds to its seeded transaction (Store.closeLater).
type openEntry struct {
	txnindex.OngoingTxn
	acc  TxnPart
	dead bool
}

func keyOf(t *txnindex.OngoingTxn) TxnKey { return TxnKey{t.ProducerID, t.FirstOffset} }

// emptyPart reports whether p says nothing of its transaction: no batch
// of it in the segment.
func emptyPart(p TxnPart) bool {
	return p.Batches == 0 && p.Records == 0 && p.Bytes == 0 && p.LastDataOffset < 0 && p.FirstTimestamp < 0
}

// then is the parts a then p, in segment order: the counts summed, the
// first timestamp of the earliest part that has data, the last data of
// the latest.
func (a TxnPart) then(p TxnPart) TxnPart {
	a.Batches += p.Batches
	a.Records += p.Records
	a.Bytes += p.Bytes
	if a.FirstTimestamp < 0 {
		a.FirstTimestamp = p.FirstTimestamp
	}
	if p.LastDataOffset >= 0 {
		a.LastDataOffset, a.LastTimestamp = p.LastDataOffset, p.LastTimestamp
	}
	return a
}

// noPart is a part with nothing in it.
var noPart = TxnPart{LastDataOffset: -1, FirstTimestamp: -1, LastTimestamp: -1}

// openSet is the transactions open at one segment's start, in the order a
// window's replay holds them (txnindex's replay seeds them sorted by first
// offset, stably, and appends those its batches open). A producer has at
// most one (the replay's producer state holds one current transaction), so
// the set is keyed by producer. Removed entries are marked dead and
// dropped when the set is compacted.
type openSet struct {
	list     []openEntry
	at       map[txnindex.ProducerID]int
	live     int
	head     int  // no live entry before list[head]
	unsorted bool // an entry was appended below one before it
}

func newOpenSet(n int) *openSet {
	return &openSet{list: make([]openEntry, 0, n), at: make(map[txnindex.ProducerID]int, n)}
}

// clone copies o: what a checkpoint hands out.
func (o *openSet) clone() *openSet {
	c := newOpenSet(o.live)
	for i := range o.list {
		if !o.list[i].dead {
			c.add(o.list[i])
		}
	}
	return c
}

func (o *openSet) add(e openEntry) {
	if n := len(o.list); n > 0 && e.FirstOffset < o.list[n-1].FirstOffset {
		o.unsorted = true
	}
	if _, ok := o.at[e.ProducerID]; ok {
		// A second transaction of one producer, which no replay holds
		// (it keeps the first seed of a producer): the first stays.
		return
	}
	o.at[e.ProducerID] = len(o.list)
	o.list = append(o.list, e)
	o.live++
}

func (o *openSet) remove(k TxnKey) {
	if e := o.get(k); e != nil {
		e.dead = true
		delete(o.at, k.ProducerID)
		o.live--
	}
}

// get is the entry of the transaction k, nil when the set has none.
func (o *openSet) get(k TxnKey) *openEntry {
	if i, ok := o.at[k.ProducerID]; ok && o.list[i].FirstOffset == k.FirstOffset {
		return &o.list[i]
	}
	return nil
}

// sort puts the set in the order a window seeded with it holds its
// transactions (a stable sort by first offset), dropping dead entries.
func (o *openSet) sort() {
	if !o.unsorted && o.live == len(o.list) {
		return
	}
	o.compact()
}

// compact drops the dead entries, and sorts the set when it is not in
// order.
func (o *openSet) compact() {
	list := o.list[:0]
	for _, e := range o.list {
		if !e.dead {
			list = append(list, e)
		}
	}
	if o.unsorted {
		sort.SliceStable(list, func(i, j int) bool { return list[i].FirstOffset < list[j].FirstOffset })
	}
	clear(o.list[len(list):])
	o.list, o.unsorted, o.head = list, false, 0
	clear(o.at)
	for i := range o.list {
		o.at[o.list[i].ProducerID] = i
	}
}

// seed is the set as a window's replay is seeded with it.
func (o *openSet) seed() []txnindex.OngoingTxn {
	o.sort()
	out := make([]txnindex.OngoingTxn, len(o.list))
	for i := range o.list {
		out[i] = o.list[i].OngoingTxn
	}
	return out
}

// touched is the part of the set a scan of batches bs needs: the
// transactions of bs's producers, and the first open one of the others
// (where the LSO stands while no batch of it comes), in the set's order.
func (o *openSet) touched(bs []txnindex.Batch) openList {
	o.sort()
	var idx []int
	seen := map[txnindex.ProducerID]bool{}
	for i := range bs {
		pid := bs[i].ProducerID
		if !bs[i].HasProducerID() || seen[pid] {
			continue
		}
		seen[pid] = true
		if j, ok := o.at[pid]; ok {
			idx = append(idx, j)
		}
	}
	for o.head < len(o.list) && o.list[o.head].dead {
		o.head++
	}
	for j := o.head; j < len(o.list); j++ {
		if !o.list[j].dead && !seen[o.list[j].ProducerID] {
			idx = append(idx, j)
			break
		}
	}
	slices.Sort(idx)
	out := make(openList, len(idx))
	for i, j := range idx {
		out[i] = o.list[j]
	}
	return out
}

// apply moves the set from segment x's start to its end. The dead
// entries are dropped once they outnumber the live ones, not at every
// segment: a set of K transactions closed one a segment would otherwise
// cost K a segment.
func (o *openSet) apply(x *Summary) {
	if o.unsorted || len(o.list)-o.live > o.live {
		o.compact()
	}
	for _, c := range x.Closed {
		o.remove(TxnKey{c.ProducerID, c.FirstOffset})
	}
	for _, k := range x.Dropped {
		o.remove(k)
	}
	if x.Reset {
		// The set at the end is Opened, in its order; a transaction of
		// the set before keeps its earlier parts.
		old := *o
		*o = *newOpenSet(len(x.Opened))
		for _, t := range x.Opened {
			acc := noPart
			if e := old.get(keyOf(&t.OngoingTxn)); e != nil {
				acc = e.acc
			}
			o.add(openEntry{OngoingTxn: t.OngoingTxn, acc: acc.then(t.Here)})
		}
		return
	}
	for _, t := range x.Opened {
		if e := o.get(keyOf(&t.OngoingTxn)); e != nil {
			e.OngoingTxn, e.acc = t.OngoingTxn, e.acc.then(t.Here)
			continue
		}
		o.add(openEntry{OngoingTxn: t.OngoingTxn, acc: noPart.then(t.Here)})
	}
}

// changesOf fills x's Opened and Dropped from a scan seeded with part of
// the set (touched), x.Closed and x's other fields being filled, and ends
// (the transactions open at the segment's end, as its replay holds them)
// and applies them to o. It reports false, and leaves o as it was, when
// the replay's order is not the one the changes give (transactions of
// overlapping segments opened below others): the segment is then to be
// scanned again with the whole set (changes).
func (o *openSet) changesOf(x *Summary, ends []OpenTxn, seeded openList) bool {
	closed := make(map[TxnKey]bool, len(x.Closed))
	for _, c := range x.Closed {
		closed[TxnKey{c.ProducerID, c.FirstOffset}] = true
	}
	// The replay holds the seeds still open, in the set's order, then
	// the transactions its batches begin.
	last, began := -1, false
	in := make(map[TxnKey]bool, len(ends))
	for i := range ends {
		k := keyOf(&ends[i].OngoingTxn)
		in[k] = true
		e := o.get(k)
		if e == nil || closed[k] {
			began = true
			continue
		}
		j := o.at[k.ProducerID]
		if began || j < last {
			return false
		}
		last = j
	}
	x.Opened, x.Dropped, x.Reset = nil, nil, false
	for _, s := range seeded {
		if k := keyOf(&s.OngoingTxn); !closed[k] && !in[k] {
			x.Dropped = append(x.Dropped, k)
		}
	}
	for _, t := range ends {
		k := keyOf(&t.OngoingTxn)
		if e := o.get(k); e != nil && !closed[k] && e.OngoingTxn == t.OngoingTxn && emptyPart(t.Here) {
			continue
		}
		x.Opened = append(x.Opened, t)
	}
	o.apply(x)
	x.OpenCount = o.live
	return true
}

// changes fills x's Opened, Dropped and Reset from a scan seeded with the
// whole set, or with the producer snapshot where the segment starts the
// log (ends: the transactions open at its end, as its replay holds them;
// x.Closed and x's other fields filled), and applies them to o.
func (o *openSet) changes(x *Summary, ends []OpenTxn) {
	o.sort()
	x.OpenCount = len(ends)
	x.Opened, x.Dropped, x.Reset = nil, nil, false
	for _, c := range x.Closed {
		o.remove(TxnKey{c.ProducerID, c.FirstOffset})
	}
	// Those of the set the replay does not hold open (closed, or not
	// seeded: the snapshot's seed is not the set) go first, so that a
	// transaction it holds for one of their producers takes their place.
	in := make(map[TxnKey]bool, len(ends))
	for i := range ends {
		in[keyOf(&ends[i].OngoingTxn)] = true
	}
	for i := range o.list {
		if k := keyOf(&o.list[i].OngoingTxn); !o.list[i].dead && !in[k] {
			x.Dropped = append(x.Dropped, k)
			o.remove(k)
		}
	}
	for _, t := range ends {
		e := o.get(keyOf(&t.OngoingTxn))
		switch {
		case e == nil:
			o.add(openEntry{OngoingTxn: t.OngoingTxn, acc: noPart.then(t.Here)})
		case e.OngoingTxn == t.OngoingTxn && emptyPart(t.Here):
			continue
		default:
			e.OngoingTxn, e.acc = t.OngoingTxn, e.acc.then(t.Here)
		}
		x.Opened = append(x.Opened, t)
	}
	if o.same(ends) {
		return
	}
	// The order the replay holds them in is not the one the changes
	// give: the summary lists the whole set, and the set takes its
	// order, each transaction with the parts it has now (apply's for
	// Reset).
	x.Opened, x.Dropped, x.Reset = ends, nil, true
	old := *o
	*o = *newOpenSet(len(ends))
	for _, t := range ends {
		acc := noPart.then(t.Here)
		if e := old.get(keyOf(&t.OngoingTxn)); e != nil {
			acc = e.acc
		}
		o.add(openEntry{OngoingTxn: t.OngoingTxn, acc: acc})
	}
}

// same reports whether the set holds ends, in their order.
func (o *openSet) same(ends []OpenTxn) bool {
	if o.live != len(ends) {
		return false
	}
	i := 0
	for _, e := range o.list {
		if e.dead {
			continue
		}
		if e.OngoingTxn != ends[i].OngoingTxn {
			return false
		}
		i++
	}
	return true
}

// openIndex is the open sets' checkpoints: at[i] is the set at the start
// of segment seg[i].
type openIndex struct {
	seg []int
	at  []*openSet
}

// openIndexLocked derives the checkpoints from the summaries; s.mu is
// held and the summaries are there. A checkpoint is taken once the entries
// of the summaries since the last one are at least the set's size, so the
// checkpoints hold no more entries than the summaries, and a set is
// derived from one by replaying no more entries than the set holds.
func (s *Store) openIndexLocked() *openIndex {
	if s.opens != nil {
		return s.opens
	}
	ix := &openIndex{seg: []int{0}, at: []*openSet{newOpenSet(0)}}
	o, since := newOpenSet(0), 0
	for k, x := range s.sums {
		o.apply(x)
		since += len(x.Opened) + len(x.Closed) + len(x.Dropped)
		if k+1 < len(s.sums) && since >= o.live {
			ix.seg, ix.at = append(ix.seg, k+1), append(ix.at, o.clone())
			since = 0
		}
	}
	s.opens = ix
	return ix
}

// openCursor is the set of transactions open at the start of segment k.
type openCursor struct {
	k   int
	set *openSet
}

// openAt is the set of transactions open at the start of segment k, the
// state a window of k's starts from: all of it, or with bs, the part a
// scan of the batches bs needs (openSet.touched). The summaries are
// there. The windows of a decide by segment are asked for in order: the
// set derived last (s.cursor) is moved on from where it is when no
// checkpoint is nearer.
func (s *Store) openAt(k int, bs []txnindex.Batch, all bool) openList {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.openAtLocked(k, bs, all)
}

func (s *Store) openAtLocked(k int, bs []txnindex.Batch, all bool) openList {
	ix := s.openIndexLocked()
	i := sort.SearchInts(ix.seg, k+1) - 1
	c := s.cursor
	if c == nil || c.k > k || c.k < ix.seg[i] {
		c = &openCursor{k: ix.seg[i], set: ix.at[i].clone()}
	}
	for ; c.k < k; c.k++ {
		c.set.apply(s.sums[c.k])
	}
	s.cursor = c
	if !all {
		return c.set.touched(bs)
	}
	c.set.sort()
	return openList(slices.Clone(c.set.list))
}

// openList is part of an open set as a window takes it: in seed order,
// sorted by first offset.
type openList []openEntry

func (l openList) seed() []txnindex.OngoingTxn {
	out := make([]txnindex.OngoingTxn, len(l))
	for i := range l {
		out[i] = l[i].OngoingTxn
	}
	return out
}

// get is the entry of the transaction k, nil when the list has none.
func (l openList) get(k TxnKey) *openEntry {
	i := sort.Search(len(l), func(i int) bool { return l[i].FirstOffset >= k.FirstOffset })
	for ; i < len(l) && l[i].FirstOffset == k.FirstOffset; i++ {
		if l[i].ProducerID == k.ProducerID {
			return &l[i]
		}
	}
	return nil
}
