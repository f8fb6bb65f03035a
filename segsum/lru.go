package segsum

import "container/list"

// lru keeps scanned segments under a byte budget, the least recently used
// going first. The window just put is kept even when it alone is over the
// budget: the request that scanned it is answered from it, and it goes
// with the next put.
type lru struct {
	budget int64
	bytes  int64
	order  *list.List // of *Window, most recent at the front
	at     map[int]*list.Element
}

func newLRU(budget int64) *lru {
	return &lru{budget: budget, order: list.New(), at: map[int]*list.Element{}}
}

func (c *lru) get(k int) *Window {
	e := c.at[k]
	if e == nil {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*Window)
}

func (c *lru) put(k int, w *Window) {
	if e := c.at[k]; e != nil {
		c.bytes -= e.Value.(*Window).bytes
		c.order.Remove(e)
		delete(c.at, k)
	}
	for c.order.Len() > 0 && c.bytes+w.bytes > c.budget {
		old := c.order.Back()
		ow := old.Value.(*Window)
		c.bytes -= ow.bytes
		c.order.Remove(old)
		delete(c.at, ow.Segment)
	}
	c.at[k] = c.order.PushFront(w)
	c.bytes += w.bytes
}

func (c *lru) used() int64 { return c.bytes }
