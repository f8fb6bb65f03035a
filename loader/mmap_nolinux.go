//go:build !linux

package loader

// largeFaults is false where /proc/self/pagemap cannot say: a segment is
// read with pread.
func largeFaults([]byte, []int64) bool { return false }
