package loader

import "github.com/txnscope/txnscope/txnindex"

// makeBatches returns a slice of length n and capacity c.
func makeBatches(n, c int) []txnindex.Batch {
	return make([]txnindex.Batch, n, c)
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
