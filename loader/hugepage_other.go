//go:build !linux

package loader

import "unsafe"

// adviseHugePages is a no-op where madvise(MADV_HUGEPAGE) does not exist.
func adviseHugePages(unsafe.Pointer, uintptr) {}
