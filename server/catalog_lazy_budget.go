package server

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"

	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/txnindex"
)

// The split of --max-memory (M). Half of it is the collector's headroom:
// at the runtime's default pacing the heap grows to twice what is live before a collection,
// so what the server keeps live stays under the other half, the budget.
// Three things share the budget:
//   - the partitions of a log directory opened whole (lazyPart: the whole
//     log, or the tail shown while it loads), by the one estimator's
//     figure (load.Cost), a load in flight by twice its estimate
//     (memBudget.admit);
//   - the segment windows of the pages drawn segment by segment
//     (segsum.Cache);
//   - the decision stream's encodings kept for reuse (api's cache), at most
//     a quarter of M (never more than its own 256 MiB).
//
// The partitions and the windows each evict their own least recently used
// first until all three fit together, and when that is not enough the
// windows ask the partitions to make room (segsum.Cache.Share), and a load
// the windows. A partition whose whole load would take more than a quarter
// of M is not opened whole (load.Choose, load.Budget.MaxShared): its load
// reserves the whole budget, and beside the log its own encodings (about
// as large) would fill it. Its page is drawn one segment at a time, and
// says why (refused).
const (
	budgetShare      = 2 // the budget is M/budgetShare
	encodingsShare   = 4 // the stream's kept encodings, M/encodingsShare at most
	maxEncodingBytes = 256 << 20
)

// openedCost is what a partition opened whole (or its tail) keeps in
// memory: the one estimator's figure for its log (load.CostOfLog), which
// serve --max-upload-memory bounds the uploads by too.
func openedCost(l *txnindex.Log) int64 { return load.CostOfLog(l).Memory() }

// wholeLoad is the question a lazy partition's full load answers, and
// budget what it may take: its share of --max-memory (load.Budget
// MaxShared, one partition opened whole a quarter of it), the rule by
// which load.Choose draws it one segment at a time instead.
var wholeLoad = load.Question{Kind: load.Whole, Position: -1, Segments: true}

func (b *memBudget) shared() load.Budget { return load.Budget{MaxShared: b.max} }

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
	windows     func() int64        // the segment windows' bytes (segsum.Cache.InUse)
	encodings   func() int64        // the stream's kept encodings (api.API.CacheBytes)
	windowCount func() int          // how many windows are kept (segsum.Cache.Windows)
	reserve     func(n int64)       // evicts windows until n more fit (segsum.Cache.Reserve)
	forget      func(*txnindex.Log) // api.API.Forget: its caches must not keep an evicted log alive

	held      atomic.Int64 // bytes the lazy partitions hold or have reserved
	evictions atomic.Int64 // partitions whose log was dropped to make room

	mu    sync.Mutex
	wait  *sync.Cond // a load waiting for the loads in flight to end
	order *list.List // of *lazyPart, most recently used at the front
}

func newMemBudget(maxMemory int64) *memBudget {
	b := &memBudget{max: maxMemory, budget: maxMemory / budgetShare, oneWhole: load.Budget{MaxShared: maxMemory}.OneLoad(), order: list.New()}
	b.wait = sync.NewCond(&b.mu)
	return b
}

// encodingBytes is what the stream's kept encodings may hold.
func (b *memBudget) encodingBytes() int64 { return min(b.max/encodingsShare, maxEncodingBytes) }

// share makes the windows of segs, the encodings of the API (through
// its CacheBytes and Forget) and the lazy partitions share the budget.
func (b *memBudget) share(segs *segStores, encodings func() int64, forget func(*txnindex.Log)) {
	b.windows, b.encodings, b.reserve, b.forget = segs.cache.InUse, encodings, segs.cache.Reserve, forget
	b.windowCount = segs.cache.Windows
	// The encodings grow as streams are sent, without asking the windows
	// or the partitions to make room: they are counted at their cap, so
	// that what they add later was set aside already.
	segs.cache.Share(func() int64 { return b.held.Load() + b.encodingBytes() }, b.yield)
}

// yield evicts partitions, least recently used first, until n more bytes
// fit: a segment window being scanned or put that evicting the other
// windows did not make room for (segsum.Cache.Share).
func (b *memBudget) yield(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.evictParts(n, nil) // the windows made what room they could
}

// others is what the windows hold and the encodings may hold (their cap,
// as share counts them).
func (b *memBudget) others() int64 {
	var n int64
	if b.windows != nil {
		n += b.windows()
	}
	if b.encodings != nil {
		n += b.encodingBytes()
	}
	return n
}

// admit reserves room for the full load of lz, evicting to make it:
// twice its estimate (load.Estimate), since while the partition is read
// its batches (in a slice grown by doubling) and the log built from them
// are live together, as segsum reserves for a window. While the loads in
// flight hold too much for it to fit, it waits for one of them to end. A
// load over one partition's share is refused (load.Choose), in the words
// of the other refusals: the page of it adds that it is drawn one segment
// at a time. The estimate is returned for recheck.
func (b *memBudget) admit(lz *lazyPart) (load.Cost, error) {
	if b == nil {
		return load.Cost{}, nil
	}
	c, err := load.Estimate(context.Background(), lz.e.Dir, wholeLoad, b.shared())
	if err != nil {
		c = load.Cost{} // it cannot tell: the load's own errors say why
	}
	c.Name = lz.e.Name
	if p := load.Choose(wholeLoad, c, b.shared()); p.Why != "" {
		return c, &load.OverBudget{Plan: p}
	}
	est := c.Memory()
	b.mu.Lock()
	defer b.mu.Unlock()
	// Only loads admitted are waited for, never one waiting too: they
	// end, and each wakes the waiters.
	for !b.makeRoom(2*est, lz) && b.loadsInFlight() {
		b.wait.Wait()
	}
	lz.loading, lz.room = true, 2*est
	b.settle(lz)
	return c, nil
}

// recheck is the refusal of a log opened whole whose cost, counted, is
// over one partition's share though its estimate (est) was not; nil when
// it fits.
func (b *memBudget) recheck(l *txnindex.Log, est load.Cost) error {
	c := load.CostOfLog(l)
	c.Path, c.Name, c.Partition, c.SegmentBytes = est.Path, est.Name, est.Partition, est.SegmentBytes
	if p := load.Choose(wholeLoad, c, b.shared()); p.Why != "" {
		return &load.OverBudget{Plan: p}
	}
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
