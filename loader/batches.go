package loader

import (
	"unsafe"

	"github.com/txnscope/txnscope/txnindex"
)

// hugeBatches is the capacity from which a batch slice is worth huge pages
// (4 MiB of batches: at least one whole aligned 2 MiB page inside it).
const hugeBatches = 4 << 20 / int(unsafe.Sizeof(txnindex.Batch{}))

// makeBatches returns a slice of length n and capacity c, with huge-page
// advice when it is large.
func makeBatches(n, c int) []txnindex.Batch {
	b := make([]txnindex.Batch, n, c)
	if c >= hugeBatches {
		adviseHugePages(unsafe.Pointer(unsafe.SliceData(b)), uintptr(c)*unsafe.Sizeof(txnindex.Batch{}))
	}
	return b
}

// trimBatches returns b in an array of exactly its length, so that a loaded
// partition keeps no spare capacity (a Batch is 64 bytes; spare capacity
// would be counted per batch too).
func trimBatches(b []txnindex.Batch) []txnindex.Batch {
	if cap(b) == len(b) {
		return b
	}
	t := makeBatches(len(b), len(b))
	copy(t, b)
	return t
}
