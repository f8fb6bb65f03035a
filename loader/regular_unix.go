//go:build unix

package loader

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func openFlags(follow bool) int {
	f := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		f |= syscall.O_NOFOLLOW
	}
	return f
}

// isSymlinkErr: open(2) with O_NOFOLLOW fails with ELOOP on a final
// symlink.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }

// nextData returns where data starts at or after off in r, below size,
// when r is a file whose filesystem tells holes from data (lseek(2)
// SEEK_DATA); size when only a hole follows. ok is false when it cannot
// tell: r is not a file, or the filesystem does not say.
func nextData(r io.ReaderAt, off, size int64) (next int64, ok bool) {
	f, isFile := r.(*os.File)
	if !isFile {
		return 0, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { next, serr = unix.Seek(int(fd), off, unix.SEEK_DATA) }); err != nil {
		return 0, false
	}
	switch {
	case errors.Is(serr, unix.ENXIO):
		return size, true
	case serr != nil:
		return 0, false
	}
	return min(next, size), true
}
