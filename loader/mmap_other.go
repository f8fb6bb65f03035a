//go:build !linux

package loader

import "os"

// mapFile maps nothing where this package does not use mmap; the scan then
// reads with pread (see mmap_linux.go).
func mapFile(*os.File, int64) ([]byte, func(), bool) { return nil, nil, false }
