package txnindex

import "unsafe"

// largeBytes is the size from which a slice is worth huge pages: the
// advice reaches the 2 MiB pages on either side, so a slice of 1 MiB takes
// one or two huge page faults instead of 256 small ones, and the rest of
// those pages is the heap's next memory.
const largeBytes = 1 << 20

// hugePage is the size of a transparent huge page on x86-64 and arm64 with
// 4 KiB base pages.
const hugePage = 2 << 20

// MakeLarge returns a slice of length n and capacity c whose backing array,
// when it spans largeBytes or more, is advised for transparent huge pages
// (adviseHugePages). A replay or a scan of millions of batches fills slices
// of tens of MB in fresh memory, and on the development VM (a Firecracker
// guest, transparent_hugepage=madvise) each first-touched 4 KiB page costs
// a page fault of 5-15 µs: a snapshot-seeded diagnose of 2M batches took
// about a third less CPU with every page huge (THP "always", as an
// experiment) than with only the batches advised.
//
// The advice covers the 2 MiB pages the array touches, from the boundary
// at or below its start to the one at or above its end: the Go heap aligns
// a large object to 8 KiB only, and advice for the aligned interior alone
// left a 4 MB slice (a 1 GiB segment's .index entries) half in 4 KiB pages,
// some 2,000 of the 3,500 faults of that segment's header scan. The heap's
// memory beside the array in those pages is then backed by the same huge
// pages when it is still untouched (at most 2 MiB at each end, which the
// heap hands out next), as with transparent_hugepage=always.
func MakeLarge[T any](n, c int) []T {
	s := make([]T, n, c)
	var z T
	if size := uintptr(c) * unsafe.Sizeof(z); size >= largeBytes {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		lo := start &^ (hugePage - 1)
		hi := (start + size + hugePage - 1) &^ (hugePage - 1)
		adviseHugePages(lo, hi-lo)
	}
	return s
}

// appendLarge is append(s, v) that, when s must grow, grows it (doubling)
// into MakeLarge memory: a list that reaches megabytes (a producer's
// transactions over a few GiB of log) is then first-touched in huge pages,
// where append's new arrays are first-touched 4 KiB at a time.
func appendLarge[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		n := MakeLarge[T](len(s), max(2*cap(s), 16))
		copy(n, s)
		s = n
	}
	return append(s, v)
}
