//go:build !unix

package loader

import (
	"io"
	"os"
)

// Without O_NOFOLLOW and O_NONBLOCK the listing's Lstat (ReadDir's entry
// types) is the only check before the open; the fstat after it still
// refuses a non-regular file.
func openFlags(bool) int { return os.O_RDONLY }

func isSymlinkErr(error) bool { return false }

// nextData cannot tell holes from data here.
func nextData(io.ReaderAt, int64, int64) (int64, bool) { return 0, false }
