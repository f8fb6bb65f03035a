package txnindex

import "unsafe"

// largeBytes is the size from which a slice is worth huge pages: 4 MiB
// holds at least one whole aligned 2 MiB page.
const largeBytes = 4 << 20

// MakeLarge returns a slice of length n and capacity c whose backing array,
// when it spans largeBytes or more, is advised for transparent huge pages
// (adviseHugePages). A replay or a scan of millions of batches fills slices
// of tens of MB in fresh memory, and on the development VM (a Firecracker
// guest, transparent_hugepage=madvise) each first-touched 4 KiB page costs
// a page fault of 5-15 µs: a snapshot-seeded diagnose of 2M batches took
// about a third less CPU with every page huge (THP "always", as an
// experiment) than with only the batches advised.
func MakeLarge[T any](n, c int) []T {
	s := make([]T, n, c)
	var z T
	if size := uintptr(c) * unsafe.Sizeof(z); size >= largeBytes {
		adviseHugePages(unsafe.Pointer(unsafe.SliceData(s)), size)
	}
	return s
}
