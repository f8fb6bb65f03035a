package api

import (
	"runtime"
	"sync"
	"weak"

	"github.com/txnscope/txnscope/txnindex"
)

// SetCacheBytes bounds the bytes the decision stream's encodings kept for
// reuse may hold (256 MiB unless set): the encodings and decision slices
// of the last few (log, options) pairs, the newest kept even when alone
// over it. serve sets it to its share of --max-memory. Call it before
// serving.
func (a *API) SetCacheBytes(n int64) {
	a.cache.mu.Lock()
	defer a.cache.mu.Unlock()
	a.cache.maxBytes = int(min(n, int64(^uint(0)>>1)))
}

// CacheBytes is what the kept encodings hold now, in bytes: the ones
// being computed are counted once done.
func (a *API) CacheBytes() int64 {
	c := a.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for el := c.lru.Front(); el != nil; el = el.Next() {
		n += int64(el.Value.(*cacheEntry).size)
	}
	return n
}

// Forget drops what the API keeps of l: its encodings and its lanes. A
// catalog calls it when it drops l (serve evicts a partition opened whole
// to stay within --max-memory): without it the kept entries would keep l
// alive after the catalog let it go, its batches, transactions and
// decisions with it. A request still holding l is served as before, from
// entries computed for it and not kept; the next request gets the
// catalog's new log.
func (a *API) Forget(l *txnindex.Log) {
	if l == nil {
		return
	}
	c := a.cache
	c.forgotten.add(l)
	c.mu.Lock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if k := el.Value.(*cacheEntry).k; k.l == l {
			c.lru.Remove(el)
			delete(c.m, k)
		}
		el = next
	}
	c.mu.Unlock()
	c.lanes.mu.Lock()
	delete(c.lanes.m, l)
	c.lanes.mu.Unlock()
}

// forgottenSet holds the logs Forget was told of, by weak pointer so that
// the set itself keeps none alive; an entry goes when its log is collected.
type forgottenSet struct {
	mu sync.Mutex
	m  map[weak.Pointer[txnindex.Log]]struct{}
}

func (f *forgottenSet) add(l *txnindex.Log) {
	k := weak.Make(l)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.m[k]; ok {
		return
	}
	if f.m == nil {
		f.m = map[weak.Pointer[txnindex.Log]]struct{}{}
	}
	f.m[k] = struct{}{}
	runtime.AddCleanup(l, func(k weak.Pointer[txnindex.Log]) {
		f.mu.Lock()
		delete(f.m, k)
		f.mu.Unlock()
	}, k)
}

func (f *forgottenSet) has(l *txnindex.Log) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.m) == 0 {
		return false // no weak pointer made for every log of a server that never forgets
	}
	_, ok := f.m[weak.Make(l)]
	return ok
}
