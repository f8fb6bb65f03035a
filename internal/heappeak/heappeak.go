// Package heappeak measures the live heap while a test's reader decodes an
// input: the peak over the read, sampled after a collection every so many
// bytes read, so that garbage not yet collected does not count.
package heappeak

import (
	"io"
	"runtime"
)

// Reader reads R and samples the live heap every Every bytes (1 MiB when
// 0), from the heap live when it was made (New).
type Reader struct {
	R     io.Reader
	Every int

	base, peak uint64
	since      int
}

// New is a Reader of r sampling every every bytes (1 MiB when 0), its base
// the heap live now.
func New(r io.Reader, every int) *Reader {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return &Reader{R: r, Every: every, base: m.HeapAlloc}
}

func (h *Reader) Read(p []byte) (int, error) {
	n, err := h.R.Read(p)
	every := h.Every
	if every <= 0 {
		every = 1 << 20
	}
	if h.since += n; h.since >= every {
		h.since = 0
		h.Sample()
	}
	return n, err
}

// Sample takes one sample now (as after the read, the decoded result still
// live).
func (h *Reader) Sample() {
	h.peak = max(h.peak, Live(h.base))
}

// Peak is the highest live heap sampled, less the base.
func (h *Reader) Peak() uint64 { return h.peak }

// Kept is the heap live now, after a collection, less the base: what the
// read left behind once the caller drops all but its result.
func (h *Reader) Kept() uint64 { return Live(h.base) }

// Live is the heap live after a collection, less base (0 when below it).
func Live(base uint64) uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapAlloc > base {
		return m.HeapAlloc - base
	}
	return 0
}
