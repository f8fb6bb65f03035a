//go:build !linux

package txnindex

import "unsafe"

// adviseHugePages is a no-op where madvise(MADV_HUGEPAGE) does not exist.
func adviseHugePages(unsafe.Pointer, uintptr, uintptr) {}
