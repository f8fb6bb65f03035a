//go:build !linux

package txnindex

// adviseHugePages is a no-op where madvise(MADV_HUGEPAGE) does not exist.
func adviseHugePages(addr, n uintptr) {}
