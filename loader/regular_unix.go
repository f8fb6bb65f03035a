//go:build unix

package loader

import (
	"errors"
	"os"
	"syscall"
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
