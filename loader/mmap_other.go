//go:build !unix

package loader

import (
	"errors"
	"os"
)

// Elsewhere every segment is read with pread.
func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) {}
