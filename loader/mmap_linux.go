//go:build linux

package loader

import (
	"os"
	"syscall"
)

// mapFile maps the size bytes of f read-only (PROT_READ, MAP_SHARED: the
// page cache itself, never a private writable copy) for a scan, and asks
// for read-ahead of the whole range (MADV_WILLNEED).
//
// Why map rather than pread: a header-only scan reads 61 bytes per batch.
// With pread that is one system call per batch, and on the development VM
// the calls cost more than cat's whole copy of the file (scripts/bench-scan.sh:
// the pread scan of a warm 1 GiB partition spent 114 ms in the kernel,
// cat 103 ms). Touching the mapped headers instead costs a page fault per
// 64 KiB (the kernel maps a fault's neighbours too, fault_around_bytes), so
// the same walk takes about half of cat's time. Cold, MADV_WILLNEED starts
// the same read-ahead cat gets.
//
// ok is false when the file cannot be mapped (empty, a pipe, a file system
// without mmap): the caller then reads with pread. A file truncated by
// another process while mapped faults (SIGBUS) on the pages past its new
// end; scanMapped turns that into damage at the batch being read.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), ok bool) {
	if size <= 0 || size != int64(int(size)) {
		return nil, nil, false
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	_ = syscall.Madvise(data, syscall.MADV_WILLNEED) // a hint: failure changes only speed
	return data, func() { _ = syscall.Munmap(data) }, true
}
