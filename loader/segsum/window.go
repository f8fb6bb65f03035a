package segsum

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"unsafe"

	"github.com/txnscope/txnscope/txnindex"
)

// Window is one scanned segment as the timeline shows it: the segment's
// batches replayed from the producer state at its start, bounded by the
// whole log, and the decisions of one consumer over them.
type Window struct {
	Segment    int // index of the segment in the partition
	BaseOffset int64
	End        int64 // the first offset after the segment
	Log        *txnindex.Log
	Options    txnindex.ConsumeOptions
	// The window's decisions (Len, Decision) are those whose first offset
	// lies in [BaseOffset, End) (from the previous segment's last batch
	// on, where its tail was cleaned), in offset order. Their BatchIndex
	// is the batch's index in the whole partition, as a full pass numbers
	// it (FirstBatch + its index in Log.Batches).
	ds         []packed
	FirstBatch int
	bytes      int64
	store      *Store
	// sorted is false when the decisions are not in offset order: segments
	// that overlap (a full pass yields a batch's decisions in the order
	// of the batches).
	sorted bool
}

// Bytes is the memory the window holds, as the LRU counts it.
func (w *Window) Bytes() int64 { return w.bytes }

// Segments returns the indexes of the segments overlapping [from, to].
func (s *Store) Segments(from, to int64) (int, int) {
	n := len(s.segs)
	lo := max(sort.Search(n, func(i int) bool { return s.segs[i].base > from })-1, 0)
	hi := max(sort.Search(n, func(i int) bool { return s.segs[i].base > to })-1, 0)
	return lo, hi
}

// Window returns segment k scanned and decided for the consumer o, from
// the LRU when it holds it.
//
// No lock is held while a segment is scanned: a window the LRU holds is
// returned (or decided again for another consumer) while other segments
// are being scanned, and a segment two requests want at once is scanned
// once, by the first (scanLog). Before this, the Store's mutex was held
// across the scan, so a pan over a segment in memory waited for the
// whole scan of a segment another request had asked for.
func (s *Store) Window(ctx context.Context, k int, o txnindex.ConsumeOptions) (*Window, error) {
	if k < 0 || k >= len(s.segs) {
		return nil, fmt.Errorf("segsum: %s: no segment %d (%d segments)", s.dir, k, len(s.segs))
	}
	if w := s.lru.get(s, k); w != nil && w.Options == o {
		return w, nil
	}
	if err := s.summaries(ctx); err != nil {
		return nil, err
	}
	l, err := s.scanLog(ctx, k)
	if err != nil {
		return nil, err
	}
	w := s.decide(l, k, o)
	s.lru.putShared(s, k, w)
	return w, nil
}

// summaries computes the summaries and bounds if they are missing. Once
// they are there they never change, so that windows read them unlocked.
func (s *Store) summaries(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summarize(ctx)
}

// flight is one scan of a segment, which the requests that want the same
// segment meanwhile wait for instead of scanning it again.
type flight struct {
	done chan struct{}
	l    *txnindex.Log
	err  error
}

// scanLog returns segment k's window log: the LRU's (a window of the
// segment for another consumer: no rescan), the one a scan under way
// makes, or a new scan's. s.mu guards only the flights map.
func (s *Store) scanLog(ctx context.Context, k int) (*txnindex.Log, error) {
	for {
		s.mu.Lock()
		if w := s.lru.get(s, k); w != nil {
			s.mu.Unlock()
			return w.Log, nil
		}
		f := s.flights[k]
		if f == nil {
			f = &flight{done: make(chan struct{})}
			s.flights[k] = f
			s.mu.Unlock()
			f.l, f.err = s.scanWindow(ctx, k)
			s.mu.Lock()
			delete(s.flights, k)
			s.mu.Unlock()
			close(f.done)
			return f.l, f.err
		}
		s.mu.Unlock()
		if s.joinHook != nil {
			s.joinHook(k)
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err == nil {
			return f.l, nil
		}
		// The scan failed because the request that started it went
		// away: this one is still wanted, so scan again.
		if ctx.Err() == nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) {
			continue
		}
		return nil, f.err
	}
}

// scanWindow scans segment k into its window log, seeded from the
// summary before it and bounded by the whole log.
//
// Where segments overlap, the log holds the batches of every segment of
// k's cluster (Store.cluster), seeded from the summary before the
// cluster: decide keeps the decisions of k's batches.
func (s *Store) scanWindow(ctx context.Context, k int) (*txnindex.Log, error) {
	j, m := s.cluster(k)
	end := s.bounds.LogEndOffset
	if m+1 < len(s.segs) {
		end = s.segs[m+1].base
	}
	// Make room first: while the segment is scanned and built, its
	// batches (in a slice grown by doubling), the log built from them
	// and the decisions are live beside whatever the cache holds,
	// about twice what the window keeps. Reserving that keeps what is
	// live under the budget, so the heap stays under twice it.
	var est int64
	for i := j; i <= m; i++ {
		est += estimateBytes(s.sums[i])
	}
	s.lru.reserveShared(2 * est)
	var open openList
	l, _, err := s.build(ctx, j, m, s.before(j), false, func(bs []txnindex.Batch) []txnindex.OngoingTxn {
		open = s.openAt(j, bs, !s.o.DecisionsOnly)
		return open.seed()
	}, &txnindex.PartitionWindow{End: end, LogEndOffset: s.bounds.LogEndOffset,
		LastStableOffset: s.bounds.LastStableOffset})
	if err != nil {
		return nil, err
	}
	s.closeLater(l, open, m)
	s.remember(l, k)
	return l, nil
}

// closeLater completes the window's transactions that began before it or
// go on past it with what the other summaries say of them: the batches,
// records, times and last data they have there, and the marker that
// closes them, so that a batch's transaction reads as it does in a full
// pass. open is the set the window (of segments to m) was seeded with,
// which holds each seeded transaction's parts before the window.
func (s *Store) closeLater(l *txnindex.Log, open openList, m int) {
	for i := range l.Txns {
		t := &l.Txns[i]
		if !t.Seeded {
			continue
		}
		e := open.get(TxnKey{t.ProducerID, t.FirstOffset})
		if e == nil {
			continue
		}
		t.Batches += e.acc.Batches
		t.Records += e.acc.Records
		t.Bytes += e.acc.Bytes
		if e.acc.FirstTimestamp >= 0 {
			t.FirstTimestamp = e.acc.FirstTimestamp
		}
		if t.LastDataOffset < 0 && e.acc.LastDataOffset >= 0 {
			t.LastDataOffset, t.LastTimestamp = e.acc.LastDataOffset, e.acc.LastTimestamp
		}
	}
	if len(l.Open) == 0 {
		return
	}
	want := make(map[TxnKey]*txnindex.Txn, len(l.Open))
	for _, i := range l.Open {
		t := &l.Txns[i]
		want[TxnKey{t.ProducerID, t.FirstOffset}] = t
	}
	add := func(t *txnindex.Txn, p TxnPart) {
		t.Batches += p.Batches
		t.Records += p.Records
		t.Bytes += p.Bytes
		if p.LastDataOffset >= 0 {
			t.LastDataOffset, t.LastTimestamp = p.LastDataOffset, p.LastTimestamp
		}
	}
	// A later summary lists a transaction still open at its end only
	// when the segment holds a part of it (Opened): the others add
	// nothing.
	for j := m + 1; j < len(s.sums) && len(want) > 0; j++ {
		for _, c := range s.sums[j].Closed {
			k := TxnKey{c.ProducerID, c.FirstOffset}
			t := want[k]
			if t == nil {
				continue
			}
			delete(want, k)
			add(t, c.Here)
			t.MarkerOffset, t.MarkerEpoch, t.State = c.MarkerOffset, c.MarkerEpoch, txnindex.TxnCommitted
			if c.Aborted {
				t.State = txnindex.TxnAborted
				linkEntry(l, t, j)
			}
		}
		for _, o := range s.sums[j].Opened {
			if t := want[TxnKey{o.ProducerID, o.FirstOffset}]; t != nil {
				add(t, o.Here)
			}
		}
	}
	still := l.Open[:0]
	for _, i := range l.Open {
		if l.Txns[i].State == txnindex.TxnOpen {
			still = append(still, i)
		}
	}
	l.Open = still
}

// linkEntry links an aborted transaction closed after the window with
// its index entries, as a full pass does (txnindex's buildIndexes): by
// producer and marker offset, the entry's LastOffset, not by first
// offset, which differs when retention deleted the transaction's first
// batches and replay saw it begin later than the entry says.
//
// si is the segment holding the marker, whose summary closed t: where
// segments overlap, the segment the marker's offset floors to may be
// another (a later segment's base offset inside the one before).
//
// An entry of another segment with t's producer and marker offset (the
// marker's segment rewritten where segments overlap: the entry stayed in
// the .txnindex it was appended to) goes with t too, when no transaction
// of the window holds it, as a full pass links an entry to the last
// transaction its marker closed wherever it is (txnindex's buildIndexes).
// It is looked for only when si has none.
func linkEntry(l *txnindex.Log, t *txnindex.Txn, si int) {
	link := func(si int, free bool) bool {
		found := false
		es := l.AbortedEntries(si)
		for i := range es {
			a := &es[i]
			if a.Entry.ProducerID == t.ProducerID && a.Entry.LastOffset == t.MarkerOffset && (!free || a.Txn == nil) {
				a.Txn, a.MarkerFound, t.Entry = t, true, a
				found = true
			}
		}
		return found
	}
	if link(si, false) {
		return
	}
	for sj := range l.Segments {
		if sj != si {
			link(sj, true)
		}
	}
}

// decide plays the consumer o over segment k's window log. The consumer
// enters the segment where a full pass's consumer does: a fetch reads one
// segment only (LocalLog.read), so its previous fetch ended with the last
// batch before the segment, at that batch's next offset (prevEnd). Where
// segments overlap, the log is k's cluster's, and the consumer enters at
// the cluster's first segment: the decisions kept are those of k's
// batches, and the gaps a full pass yields before them.
func (s *Store) decide(l *txnindex.Log, k int, o txnindex.ConsumeOptions) *Window {
	w := &Window{Segment: k, BaseOffset: s.segs[k].base, End: s.bounds.LogEndOffset, Log: l, Options: o, sorted: true}
	if k+1 < len(s.segs) {
		w.End = s.segs[k+1].base
	}
	j, _ := s.cluster(k)
	end, after := s.prevEnd(j)
	co := o
	if after {
		co.From = max(o.From, end)
	}
	first := 0 // the index of the cluster's first batch in the partition
	for i := range j {
		first += s.sums[i].Batches
	}
	for i := j; i < k; i++ {
		w.FirstBatch += s.sums[i].Batches
	}
	w.FirstBatch += first
	lower := s.segs[j].base
	if after {
		lower = min(lower, end)
	}
	// A gap is yielded just before the batch that follows it (findGaps
	// ends each gap below a batch, at the furthest offset the batches
	// before reach): it goes with that batch's segment.
	var gaps []txnindex.Decision
	for d := range l.Decisions(co) {
		if d.Batch == nil {
			if after && d.From < lower {
				continue
			}
			gaps = append(gaps, d)
			continue
		}
		if int(d.Batch.Segment) != k {
			gaps = gaps[:0]
			continue
		}
		for _, g := range gaps {
			if after && g.Cause == txnindex.CauseGapBeforeFirstBatch {
				// The window's first gap, before its first batch,
				// follows the last batch of an earlier segment: what
				// a full pass calls it. It begins at that batch's
				// next offset, or at the log start when that is
				// higher (DeleteRecords moved it inside the hole): a
				// full pass labels it by the batch before it all the
				// same (findGaps).
				g.Cause, g.Uncommitted = txnindex.CauseGapSegmentBoundary, txnindex.Missing
				if s.damagedBefore(k) {
					g.Cause = txnindex.CauseGapDamaged
				}
			}
			w.add(g)
		}
		gaps = gaps[:0]
		if d.Cause == txnindex.CauseBelowPosition {
			// Below the consumer's position: a full pass says below
			// the position it started at, not where it entered the
			// segment (a batch of this segment below the end of the
			// one before, which overlaps it, is skipped so).
			d.Bound = max(o.From, s.bounds.LogStartOffset)
		}
		if d.BatchIndex >= 0 {
			d.BatchIndex += int32(first)
		}
		w.add(d)
	}
	// Gaps after the last batch: yielded at the end of a full pass, so
	// by the window of the last segment holding a batch.
	last := true
	for i := k + 1; i < len(s.sums); i++ {
		last = last && s.sums[i].Batches == 0
	}
	if last {
		for _, g := range gaps {
			w.add(g)
		}
	}
	w.bytes = windowBytes(l, len(w.ds))
	return w
}

// add appends d to the window's decisions, noting when they stop being in
// offset order (batches of overlapping segments).
func (w *Window) add(d txnindex.Decision) {
	if n := len(w.ds); n > 0 && d.From < w.ds[n-1].from {
		w.sorted = false
	}
	w.ds = append(w.ds, w.pack(&d))
}

// packed is a window's Decision without its pointers: the batch and the
// transaction as indexes into the window's Log, the aborted transaction's
// index entry as where it is found again. The windows are most of what a
// server drawing large partitions holds (up to --max-memory), and the
// garbage collector's mark phase reads every pointer-holding word of them:
// with txnindex.Decision's three pointers, a mark of 400 MB of windows ran
// 38 ms on two cores, and the request it overlapped took 4x its median
// (segbench's HTTP pans). Pointer-free, the collector skips them; and a
// decision takes 64 bytes instead of 80.
type packed struct {
	from, to, fetchOffset, bound int64
	abort                        txnindex.AbortedTransaction
	batchIndex                   int32 // Decision.BatchIndex
	batch, txn                   int32 // indexes in Log.Batches and Log.Txns; -1 for nil
	verdict, uncommitted         txnindex.Verdict
	cause                        txnindex.Cause
	abortInfo                    abortInfoFrom
}

// abortInfoFrom is where a packed decision's AbortInfo is found again. The
// consumer takes an aborted batch's entry from its transaction (Txn.Entry)
// or by its aborted-list element (Log.LookupAbort), and nothing else.
type abortInfoFrom uint8

const (
	abortInfoNone abortInfoFrom = iota
	abortInfoOfTxn
	abortInfoLookup
)

// pack is d without pointers; d's pointers are into w.Log, as a pass over
// it yields them.
func (w *Window) pack(d *txnindex.Decision) packed {
	l := w.Log
	p := packed{from: d.From, to: d.To, fetchOffset: d.FetchOffset, bound: d.Bound, abort: d.Abort, batchIndex: d.BatchIndex,
		batch: indexIn(l.Batches, d.Batch), txn: indexIn(l.Txns, d.Txn), verdict: d.Verdict, uncommitted: d.Uncommitted, cause: d.Cause}
	switch {
	case d.AbortInfo == nil:
	case d.Txn != nil && d.AbortInfo == d.Txn.Entry:
		p.abortInfo = abortInfoOfTxn
	default:
		p.abortInfo = abortInfoLookup
	}
	return p
}

// indexIn is the index in s of the element p points to, -1 for nil. A
// pointer that is not into s is a bug of the pass that yielded it.
func indexIn[T any](s []T, p *T) int32 {
	if p == nil {
		return -1
	}
	size := unsafe.Sizeof(*p)
	if len(s) > 0 {
		off := uintptr(unsafe.Pointer(p)) - uintptr(unsafe.Pointer(&s[0]))
		if off < uintptr(len(s))*size && off%size == 0 {
			return int32(off / size)
		}
	}
	panic("segsum: a decision points outside its window's log")
}

// Len is how many decisions the window holds.
func (w *Window) Len() int { return len(w.ds) }

// Decision returns the window's i-th decision (0 <= i < Len()), its
// pointers into w.Log.
func (w *Window) Decision(i int) txnindex.Decision {
	var d txnindex.Decision
	w.decision(i, &d)
	return d
}

// decision sets *d to the window's i-th decision.
func (w *Window) decision(i int, d *txnindex.Decision) {
	p, l := &w.ds[i], w.Log
	*d = txnindex.Decision{From: p.from, To: p.to, Verdict: p.verdict, Cause: p.cause, Uncommitted: p.uncommitted,
		BatchIndex: p.batchIndex, Abort: p.abort, FetchOffset: p.fetchOffset, Bound: p.bound}
	if w.Options.Variant.Client() {
		d.Variant = w.Options.Variant // a client variant's decisions all carry it (txnindex clients.go)
	}
	if p.batch >= 0 {
		d.Batch = &l.Batches[p.batch]
	}
	if p.txn >= 0 {
		d.Txn = &l.Txns[p.txn]
	}
	switch p.abortInfo {
	case abortInfoOfTxn:
		d.AbortInfo = d.Txn.Entry
	case abortInfoLookup:
		d.AbortInfo = l.LookupAbort(p.abort.ProducerID, p.abort.FirstOffset)
	}
}

// windowBytes estimates what a window holds: what a load of its batches
// keeps (txnindex.LogBytes, the one figure every load is counted with),
// the transactions open into it from before (seeded: no batch of theirs
// pays for them), its decisions, and the per-segment tables Build keeps
// (the segments and every segment's aborted-transaction entries), plus a
// quarter for the maps and slices' spare capacity.
func windowBytes(l *txnindex.Log, decisions int) int64 {
	seeded := 0
	for i := range l.Txns {
		if l.Txns[i].Seeded {
			seeded++
		}
	}
	n := txnindex.LogBytes(int64(len(l.Batches))) +
		int64(seeded)*int64(unsafe.Sizeof(txnindex.Txn{})+4+16) +
		int64(decisions)*int64(unsafe.Sizeof(packed{})) +
		int64(len(l.Segments))*int64(unsafe.Sizeof(txnindex.Segment{})+96)
	for si := range l.Segments {
		n += int64(len(l.AbortedEntries(si))) * int64(unsafe.Sizeof(txnindex.AbortInfo{})+48)
	}
	return n + n/4
}

// estimateBytes is windowBytes before the scan, from the summary's counts
// (a decision per batch; gaps are few; the transactions open at its end
// stand for those open into it).
func estimateBytes(x *Summary) int64 {
	n := txnindex.LogBytes(int64(x.Batches)) + int64(x.Batches)*int64(unsafe.Sizeof(packed{})) +
		int64(x.OpenCount)*int64(unsafe.Sizeof(txnindex.Txn{})+4+16)
	return n + n/4
}

// spans are the offsets each segment's window decides, [lo, hi] (lo > hi
// for none): its batches' offsets, and the gaps before them, which run
// from where the batches before reach (prevEnd; the log's lowest offset
// when no batch is before). A segment without batches decides nothing (the
// hole it leaves is the next batch's window's gap). Where segments
// overlap, these spans overlap too. The summaries are there.
func (s *Store) spans() [][2]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spanOf != nil {
		return s.spanOf
	}
	out := make([][2]int64, len(s.segs))
	end, after := int64(math.MinInt64), false
	for k, x := range s.sums {
		if x.Batches == 0 {
			out[k] = [2]int64{1, 0}
			continue
		}
		lo := int64(math.MinInt64)
		if after {
			lo = min(x.LowOffset, end)
		}
		out[k] = [2]int64{lo, x.HighOffset - 1}
		end, after = max(end, x.HighOffset), true
	}
	s.spanOf = out
	return out
}

// Decisions calls f with the decisions of consumer o overlapping [from,
// to], in offset order, scanning the segments in view that the LRU does
// not hold. d is valid during the call only: f copies what it keeps.
func (s *Store) Decisions(ctx context.Context, from, to int64, o txnindex.ConsumeOptions, f func(w *Window, d *txnindex.Decision) bool) error {
	if err := s.summaries(ctx); err != nil {
		return err
	}
	var d txnindex.Decision
	// Every window whose span meets the view, in segment order: the
	// order of a full pass's decisions. A segment's tail cleaned (or a
	// whole segment emptied) puts the hole in the next batch's window,
	// and overlapping segments put a view's offsets in several windows.
	for k, sp := range s.spans() {
		if sp[0] > to || sp[1] < from {
			continue
		}
		w, err := s.Window(ctx, k, o)
		if err != nil {
			return err
		}
		ds := w.ds
		i := 0
		if w.sorted {
			i = max(sort.Search(len(ds), func(i int) bool { return ds[i].from > from })-1, 0)
		}
		for ; i < len(ds); i++ {
			if ds[i].to < from || ds[i].from > to {
				if w.sorted && ds[i].from > to {
					break
				}
				continue
			}
			w.decision(i, &d)
			if !f(w, &d) {
				return nil
			}
		}
	}
	return nil
}

// damagedBefore reports whether the offsets missing before segment k's
// first batch were in damaged bytes: whether a segment from the last one
// before k holding a batch up to k-1 stopped its read at damage
// (txnindex.Log.damagedBetween in a full pass).
func (s *Store) damagedBefore(k int) bool {
	for i := k - 1; i >= 0; i-- {
		if s.sums[i].Damaged != nil {
			return true
		}
		if s.sums[i].Batches > 0 {
			return false
		}
	}
	return false
}
