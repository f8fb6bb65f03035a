package segsum

import (
	"container/list"
	"sync"
)

// Cache keeps scanned segments, of every Store that shares it, under one
// byte budget (serve --max-memory), the least recently used going first.
// The window just put is kept even when it alone is over the budget: the
// request that scanned it is answered from it, and it goes with the next
// put.
type Cache struct {
	mu     sync.Mutex
	budget int64
	bytes  int64
	order  *list.List // of *Window, most recent at the front
	at     map[cacheKey]*list.Element
}

type cacheKey struct {
	s *Store
	k int
}

// NewCache makes a cache of budget bytes; <= 0 means DefaultMaxMemory().
func NewCache(budget int64) *Cache {
	if budget <= 0 {
		budget = DefaultMaxMemory()
	}
	return &Cache{budget: budget, order: list.New(), at: map[cacheKey]*list.Element{}}
}

// Budget is the cache's byte budget.
func (c *Cache) Budget() int64 { return c.budget }

// InUse is the bytes the cached windows hold (windowBytes' estimate).
func (c *Cache) InUse() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
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
	for c.order.Len() > 0 && c.bytes+w.bytes > c.budget {
		old := c.order.Back()
		ow := old.Value.(*Window)
		c.bytes -= ow.bytes
		c.order.Remove(old)
		delete(c.at, cacheKey{ow.store, ow.Segment})
	}
	w.store = s
	c.at[key] = c.order.PushFront(w)
	c.bytes += w.bytes
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
