package server

import (
	"container/list"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/segsum"
	"github.com/txnscope/txnscope/txnindex"
)

// The split of --max-memory (M). Half of it is the collector's headroom:
// with GOGC=100 the heap grows to twice what is live before a collection,
// so what the server keeps live stays under the other half, the budget.
// Three things share the budget:
//   - the partitions of a log directory opened whole (lazyPart: the whole
//     log, or the tail shown while it loads), by the loader's figure, a
//     load in flight by twice its estimate (memBudget.admit);
//   - the segment windows of the pages drawn segment by segment
//     (segsum.Cache);
//   - the decision stream's encodings kept for reuse (api's cache), at most
//     a quarter of M (never more than its own 256 MiB).
//
// The partitions and the windows each evict their own least recently used
// first until all three fit together, and when that is not enough the
// windows ask the partitions to make room (segsum.Cache.Share), and a load
// the windows. A partition whose whole load would take more than a quarter
// of M is not opened whole: its load reserves the whole budget, and beside
// the log its own encodings (about as large) would fill it. Its page is
// drawn one segment at a time, and says why (refused).
const (
	budgetShare      = 2 // the budget is M/budgetShare
	oneWholeShare    = 4 // one partition opened whole may take M/oneWholeShare
	encodingsShare   = 4 // the stream's kept encodings, M/encodingsShare at most
	maxEncodingBytes = 256 << 20
)

// openedCost is what a partition opened whole keeps in memory: the
// loader's figure for its decoded log (batches, transactions, producers,
// gaps), which serve --max-upload-memory bounds the uploads by too. The
// one place the opened partitions are priced: repoint it when the loader's
// estimator changes.
func openedCost(l *txnindex.Log) int64 {
	if l == nil {
		return 0
	}
	return (&input.Contents{Partitions: []*input.Partition{{Log: l}}}).Memory()
}

// wholeLoadCost estimates openedCost of a partition directory before a
// batch is read: segsum's estimate from the segments' sizes and their mean
// batch size, the one decide and inspect refuse a load by; and the bytes
// of its segments.
func wholeLoadCost(st *segsum.Store) (cost, files int64) {
	return st.WholeLoadBytes(), st.Bytes()
}

// estimate is wholeLoadCost of the partition directory dir, from the
// segment routes' Store of it (opened once, for the page's strip too);
// 0 when it cannot tell.
func (b *memBudget) estimate(dir string) (cost, files int64) {
	open := b.store
	if open == nil {
		open = func(dir string) (*segsum.Store, error) { return segsum.Open(dir, segsum.Options{MaxMemory: 1}) }
	}
	st, err := open(dir)
	if err != nil || st == nil {
		return 0, 0
	}
	return wholeLoadCost(st)
}

// memBudget keeps the lazy partitions of the catalog (catalog_lazy.go)
// within their share of --max-memory: each one that holds a log (whole,
// or its tail) is in an LRU with the bytes it holds; a load reserves room
// before it starts, and what no load holds is evicted, least recently
// used first, until everything fits. Eviction only drops the
// catalog's pointers (lazyPart.release): a request or a stream that holds
// the log keeps it until it is done, and the next request opens the
// partition again, with the same answers. A nil *memBudget bounds nothing.
type memBudget struct {
	max, budget, oneWhole int64

	// Set by New once the segment routes and the API exist; nil until
	// then (nothing is opened before).
	windows   func() int64                            // the segment windows' bytes (segsum.Cache.InUse)
	encodings func() int64                            // the stream's kept encodings (api.API.CacheBytes)
	reserve   func(n int64)                           // evicts windows until n more fit (segsum.Cache.Reserve)
	forget    func(*txnindex.Log)                     // api.API.Forget: its caches must not keep an evicted log alive
	store     func(dir string) (*segsum.Store, error) // the segment routes' Store of a partition directory

	held      atomic.Int64 // bytes the lazy partitions hold or have reserved
	evictions atomic.Int64 // partitions whose log was dropped to make room

	mu    sync.Mutex
	wait  *sync.Cond // a load waiting for the loads in flight to end
	order *list.List // of *lazyPart, most recently used at the front
}

func newMemBudget(maxMemory int64) *memBudget {
	b := &memBudget{max: maxMemory, budget: maxMemory / budgetShare, oneWhole: maxMemory / oneWholeShare, order: list.New()}
	b.wait = sync.NewCond(&b.mu)
	return b
}

// encodingBytes is what the stream's kept encodings may hold.
func (b *memBudget) encodingBytes() int64 { return min(b.max/encodingsShare, maxEncodingBytes) }

// share makes the windows of segs, the encodings of the API (through
// its CacheBytes and Forget) and the lazy partitions share the budget.
func (b *memBudget) share(segs *segStores, encodings func() int64, forget func(*txnindex.Log)) {
	b.windows, b.encodings, b.reserve, b.forget, b.store = segs.cache.InUse, encodings, segs.cache.Reserve, forget, segs.storeOf
	segs.cache.Share(func() int64 { return b.held.Load() + encodings() }, b.yield)
}

// yield evicts partitions, least recently used first, until n more bytes
// fit: a segment window being scanned or put that evicting the other
// windows did not make room for (segsum.Cache.Share).
func (b *memBudget) yield(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.evictParts(n, nil) // the windows made what room they could
}

// others is what the windows and the encodings hold.
func (b *memBudget) others() int64 {
	var n int64
	if b.windows != nil {
		n += b.windows()
	}
	if b.encodings != nil {
		n += b.encodings()
	}
	return n
}

// tooLarge is the refusal of a partition whose whole load would take
// more than one partition may, in the words of the other refusals
// (logindex.Limits.CheckBytes): the page of it adds that it is drawn one
// segment at a time.
func (b *memBudget) tooLarge(name string, cost, files int64) error {
	return fmt.Errorf("%s holds %s of segments, whose whole load would take about %s, more than one partition opened whole may take (%s, a quarter of --max-memory %s): not opened in full",
		name, txnindex.Bytes(files), txnindex.Bytes(cost), txnindex.Bytes(b.oneWhole), txnindex.Bytes(b.max))
}

// admit reserves room for the full load of lz, evicting to make it:
// twice its estimate, since while the partition is read its batches (in
// a slice grown by doubling) and the log built from them are live
// together, as segsum reserves for a window. While the loads in flight
// hold too much for it to fit, it waits for one of them to end. An
// estimate over one partition's share refuses the load.
func (b *memBudget) admit(lz *lazyPart) error {
	if b == nil {
		return nil
	}
	est, files := b.estimate(lz.e.Dir)
	if est > b.oneWhole {
		return b.tooLarge(lz.e.Name, est, files)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Only loads admitted are waited for, never one waiting too: they
	// end, and each wakes the waiters.
	for !b.makeRoom(2*est, lz) && b.loadsInFlight() {
		b.wait.Wait()
	}
	lz.loading, lz.room = true, 2*est
	b.settle(lz)
	return nil
}

// loaded replaces lz's reservation by what its load keeps and wakes the
// loads waiting for room.
func (b *memBudget) loaded(lz *lazyPart) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	lz.loading, lz.room = false, 0
	b.settle(lz)
	b.makeRoom(0, lz)
	b.wait.Broadcast()
}

// kept accounts what lz keeps now (its tail, just scanned), evicting
// others to make room.
func (b *memBudget) kept(lz *lazyPart) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.settle(lz)
	b.makeRoom(0, lz)
}

// settle sets lz's account to what it holds now, read under its lock
// (the logs it keeps, and the room its load in flight reserved), and
// lists it in the LRU while that is not nothing. Reading the logs here,
// under both locks, rather than taking a cost from the caller, keeps the
// account right whatever ran between the caller's change and this (a
// tail kept while the load ended, an eviction).
func (b *memBudget) settle(lz *lazyPart) {
	lz.mu.Lock()
	n := lz.room + openedCost(lz.full) + openedCost(lz.tail)
	lz.mu.Unlock()
	b.add(lz, n-lz.held)
	switch {
	case lz.held > 0:
		b.use(lz)
	case lz.elem != nil:
		b.order.Remove(lz.elem)
		lz.elem = nil
	}
}

// touch marks lz as just used.
func (b *memBudget) touch(lz *lazyPart) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if lz.elem != nil {
		b.order.MoveToFront(lz.elem)
	}
}

func (b *memBudget) use(lz *lazyPart) {
	if lz.elem == nil {
		lz.elem = b.order.PushFront(lz)
	} else {
		b.order.MoveToFront(lz.elem)
	}
}

func (b *memBudget) add(lz *lazyPart, n int64) {
	lz.held += n
	b.held.Add(n)
}

// makeRoom evicts the least recently used partitions but keep, and those
// loading, then the windows, until n more bytes fit; it reports whether
// they do.
func (b *memBudget) makeRoom(n int64, keep *lazyPart) bool {
	if !b.evictParts(n, keep) && b.reserve != nil {
		b.reserve(n) // the windows count held and the encodings beside them (Share)
	}
	return b.fits(n)
}

// evictParts evicts the least recently used partitions but keep, and
// those loading, until n more bytes fit; it reports whether they do.
func (b *memBudget) evictParts(n int64, keep *lazyPart) bool {
	for e := b.order.Back(); e != nil && !b.fits(n); {
		prev := e.Prev()
		if lz := e.Value.(*lazyPart); lz != keep && !lz.loading {
			b.evict(lz)
		}
		e = prev
	}
	return b.fits(n)
}

func (b *memBudget) fits(n int64) bool { return b.held.Load()+n+b.others() <= b.budget }

// loadsInFlight reports whether a load admitted is in flight: the room it
// holds comes back when it ends.
func (b *memBudget) loadsInFlight() bool {
	for e := b.order.Front(); e != nil; e = e.Next() {
		if e.Value.(*lazyPart).loading {
			return true
		}
	}
	return false
}

// evict drops what lz holds from the catalog and from the API's caches.
func (b *memBudget) evict(lz *lazyPart) {
	full, tail := lz.release()
	b.settle(lz) // nothing: out of the LRU
	b.evictions.Add(1)
	if b.forget != nil {
		for _, l := range []*txnindex.Log{full, tail} {
			if l != nil {
				b.forget(l)
			}
		}
	}
}
