//go:build linux

package txnindex

import "syscall"

// adviseHugePages asks the kernel to back [addr, addr+n) with transparent
// huge pages (MADV_HUGEPAGE), for the common transparent_hugepage=madvise
// setting. Fresh Go heap memory is not touched before it is handed out, so
// the first write to each 2 MiB then takes one page fault instead of 512:
// on the development VM a first-touch 4 KiB fault costs about 15 µs, and
// the batches of a 1 GiB partition span some 4,000 pages (loader,
// scripts/bench-scan.sh, "floor" against "floor-thp"). The range may reach
// past the Go object it was asked for (MakeLarge), so it is passed as
// numbers, never as a pointer the race detector's checks would follow. The
// advice is only a hint; failure changes nothing but speed.
func adviseHugePages(addr, n uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, n, syscall.MADV_HUGEPAGE)
}
