//go:build unix

package loader

import (
	"os"
	"syscall"
)

func mapFile(fh *os.File, size int64) ([]byte, error) {
	return syscall.Mmap(int(fh.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmapFile(b []byte) { _ = syscall.Munmap(b) }
