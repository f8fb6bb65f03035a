//go:build linux

package txnindex

import (
	"syscall"
	"unsafe"
)

// adviseHugePages asks the kernel to back [p+off, p+off+n), 2 MiB-aligned,
// with transparent huge pages (MADV_HUGEPAGE), for the common
// transparent_hugepage=madvise setting. Fresh Go heap memory is not touched
// before it is handed out, so the first write to each 2 MiB then takes one
// page fault instead of 512: on the development VM a first-touch 4 KiB fault
// costs about 15 µs, and the batches of a 1 GiB partition span some 4,000
// pages (loader, scripts/bench-scan.sh, "floor" against "floor-thp"). The advice is
// only a hint; failure changes nothing but speed.
func adviseHugePages(p unsafe.Pointer, off, n uintptr) {
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, off)), n), syscall.MADV_HUGEPAGE)
}
