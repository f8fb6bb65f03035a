package txnindex

import "unsafe"

// largeBytes is the size from which a slice is worth huge pages: a slice
// of 2 MiB starting on a boundary fills one.
const largeBytes = 2 << 20

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
// The slice starts at the first element of a larger array at or past a
// 2 MiB boundary: the Go heap aligns a large object to 8 KiB only, and
// advice for the aligned interior alone left a 4 MiB slice half in 4 KiB
// pages. The advice reaches the boundary past the slice's end when the huge
// page there is mostly the slice's (at most an eighth of the slice spare),
// else the boundary before it: the spare part of a huge page is memory
// kept. The spare elements outside the advice are never touched, so they
// cost address space, not memory. (A 1 GiB segment of 1 KiB batches has
// 4 MB of .index and of .timeindex entries: in 4 KiB pages they were some
// 2,000 of the header scan's 3,500 faults.)
func MakeLarge[T any](n, c int) []T {
	var z T
	sz := unsafe.Sizeof(z)
	size := uintptr(c) * sz
	if size < largeBytes || sz == 0 || sz > hugePage {
		return make([]T, n, c)
	}
	pad := int(2 * (hugePage/sz + 1))
	raw := make([]T, c+pad)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	lo := (base + hugePage - 1) &^ (hugePage - 1)
	k := int((lo - base + sz - 1) / sz)
	start := base + uintptr(k)*sz
	end := start + size
	hi := (end + hugePage - 1) &^ (hugePage - 1)
	if hi-end > size/8 {
		hi = end &^ (hugePage - 1)
	}
	if hi <= lo {
		return raw[k : k+n : k+c]
	}
	adviseHugePages(unsafe.Pointer(&raw[0]), lo-base, hi-lo)
	return raw[k : k+n : k+c]
}
