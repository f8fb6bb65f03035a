package loader

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
)

// Files inside a loaded directory are opened by openInside: regular files
// only, and never through a symlink. A partition directory is a broker's,
// written only by the broker, which never makes symlinks or pipes in it; a
// symlink there can only point elsewhere on the machine (a checkpoint
// linked to /etc/shadow would otherwise be read, its lines echoed in
// errors, and a linked segment would escape --max-source-bytes, which
// counts the link), and a named pipe would block the open for good.

// ErrNotRegular is what opening a symlink, pipe, device or socket inside a
// loaded directory returns (wrapped, with the file's path).
var ErrNotRegular = errors.New("not a regular file")

// notRegularReason says why a directory entry of mode m is not read, ""
// for a regular file. The reasons go into Ignored and errors.
func notRegularReason(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeSymlink != 0:
		return "symlink, not followed (txnscope reads only regular files inside a loaded directory)"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO), not opened (txnscope reads only regular files)"
	case m&fs.ModeSocket != 0:
		return "socket, not opened (txnscope reads only regular files)"
	case m&fs.ModeDevice != 0:
		return "device, not opened (txnscope reads only regular files)"
	}
	return "not a regular file, not opened"
}

// notRegularError is the error for path of mode m.
func notRegularError(path string, m fs.FileMode) error {
	return fmt.Errorf("loader: %s: %s: %w", path, notRegularReason(m), ErrNotRegular)
}

// openInside opens a file of a loaded directory read-only: without
// following a final symlink (O_NOFOLLOW) and without blocking on a pipe
// (O_NONBLOCK, which a regular file ignores), then checks on the opened
// descriptor (fstat, so nothing can be swapped in between) that it is a
// regular file. The size returned is the descriptor's: what is read, not
// what a link or an earlier listing said.
func openInside(path string) (*os.File, int64, error) {
	return openRegular(path, false)
}

// OpenRegular opens a path given by the user (which may be a symlink: the
// user chose it) read-only, refusing anything but a regular file without
// blocking on a pipe. It returns the file and its size.
func OpenRegular(path string) (*os.File, int64, error) {
	return openRegular(path, true)
}

func openRegular(path string, follow bool) (*os.File, int64, error) {
	fh, err := os.OpenFile(path, openFlags(follow), 0)
	if err != nil {
		if !follow && isSymlinkErr(err) {
			return nil, 0, notRegularError(path, fs.ModeSymlink)
		}
		return nil, 0, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		fh.Close()
		return nil, 0, notRegularError(path, st.Mode())
	}
	return fh, st.Size(), nil
}

// readInside reads a whole state file of a loaded directory (checkpoints,
// snapshots, partition.metadata) through openInside, at most limit bytes:
// a larger file is refused rather than read. A missing file returns nil,
// nil.
func readInside(path string, limit int64) ([]byte, error) {
	fh, size, err := openInside(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if size > limit {
		return nil, fmt.Errorf("loader: %s: %d bytes, more than the %d a state file may hold", path, size, limit)
	}
	// Read what is there, up to limit+1, however the file changes after
	// the fstat.
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("loader: %s: grew past the %d bytes a state file may hold while being read", path, limit)
	}
	return data, nil
}

// maxStateFile bounds a checkpoint, snapshot or partition.metadata file:
// a producer snapshot of a million producers is about 40 MB
// (ProducerSnapshot entries are 70 bytes), far more than a real one.
const maxStateFile = 64 << 20

// excerpt quotes at most maxExcerpt bytes of s, escaped, for an error
// about a line that did not parse: enough to recognise the line, not
// enough to leak a file the error is about.
func excerpt(s string) string {
	if len(s) <= maxExcerpt {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:maxExcerpt]) + fmt.Sprintf("... (%d bytes)", len(s))
}

const maxExcerpt = 24
