package segsum

import (
	"container/list"
	"sync"
)

// Cache keeps scanned segments, of every Store that shares it, under one
// byte budget, the least recently used going first. The budget is half of
// the memory it is given (serve --max-memory): the garbage collector lets
// the heap grow to twice what is live before it collects (its default), and
// a scan's batches are garbage once its window is built, so windows
// holding half keep the process's memory under the whole.
// The window just put is kept even when it alone is over the budget: the
// request that scanned it is answered from it, and it goes with the next
// put. The budget may be shared with what else a program keeps (Share).
type Cache struct {
	mu     sync.Mutex
	max    int64 // the memory given
	budget int64 // half of it, for the windows
	bytes  int64
	order  *list.List // of *Window, most recent at the front
	at     map[cacheKey]*list.Element
	others func() int64  // what else holds the budget (Share); nil: nothing
	yield  func(n int64) // asks the others to make room (Share); nil: they cannot
}

type cacheKey struct {
	s *Store
	k int
}

// NewCache makes a cache for maxMemory bytes (<= 0 means
// DefaultMaxMemory()), whose windows hold at most half of it.
func NewCache(maxMemory int64) *Cache {
	if maxMemory <= 0 {
		maxMemory = DefaultMaxMemory()
	}
	return &Cache{max: maxMemory, budget: maxMemory / 2, order: list.New(), at: map[cacheKey]*list.Element{}}
}

// Budget is the bytes the cached windows may hold: half of MaxMemory.
func (c *Cache) Budget() int64 { return c.budget }

// MaxMemory is the memory the cache was given.
func (c *Cache) MaxMemory() int64 { return c.max }

// InUse is the bytes the cached windows hold (windowBytes' estimate).
func (c *Cache) InUse() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Windows is how many windows the cache holds.
func (c *Cache) Windows() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *Cache) get(s *Store, k int) *Window {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.at[cacheKey{s, k}]
	if e == nil {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*Window)
}

func (c *Cache) put(s *Store, k int, w *Window) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := cacheKey{s, k}
	if e := c.at[key]; e != nil {
		c.bytes -= e.Value.(*Window).bytes
		c.order.Remove(e)
		delete(c.at, key)
	}
	c.evict(w.bytes)
	w.store = s
	c.at[key] = c.order.PushFront(w)
	c.bytes += w.bytes
}

// putShared is put, then, when the windows alone could not make room,
// asks the others sharing the budget to (Share's yield), unlocked.
func (c *Cache) putShared(s *Store, k int, w *Window) {
	c.put(s, k, w)
	c.yieldOver(0)
}

// reserveShared is Reserve, then, when the windows alone could not make
// room, asks the others sharing the budget to.
func (c *Cache) reserveShared(n int64) {
	c.Reserve(n)
	c.yieldOver(n)
}

// yieldOver calls Share's yield when n more bytes do not fit beside the
// windows and the others; without the lock, so that yield may call InUse
// and Reserve.
func (c *Cache) yieldOver(n int64) {
	c.mu.Lock()
	yield, over := c.yield, c.others != nil && c.bytes+n+c.others() > c.budget
	c.mu.Unlock()
	if yield != nil && over {
		yield(n)
	}
}

// Share makes the windows share the budget with what others reports
// held elsewhere (serve keeps the partitions it opened whole under the
// same half of --max-memory): a window put, and Reserve, evict windows
// until the windows and others fit together. others is called with the
// cache locked: it must not call the Cache. When evicting every other
// window is not room enough for a window being scanned or put, yield is
// asked to free what the others hold so that n more bytes fit, with the
// cache unlocked (it may call InUse and Reserve); nil: they cannot.
func (c *Cache) Share(others func() int64, yield func(n int64)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.others, c.yield = others, yield
}

// Reserve evicts the least recently used windows until n more bytes fit
// the budget beside the windows kept and what Share's others hold (or no
// window is left to evict). It never calls Share's yield.
func (c *Cache) Reserve(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evict(n)
}

func (c *Cache) evict(n int64) {
	if c.others != nil {
		n += c.others()
	}
	for c.order.Len() > 0 && c.bytes+n > c.budget {
		old := c.order.Back()
		ow := old.Value.(*Window)
		c.bytes -= ow.bytes
		c.order.Remove(old)
		delete(c.at, cacheKey{ow.store, ow.Segment})
	}
}

// cached lists the segments of s the cache holds, in segment order.
func (c *Cache) cached(s *Store, n int) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for k := range n {
		if c.at[cacheKey{s, k}] != nil {
			out = append(out, k)
		}
	}
	return out
}
