package loader

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/txnscope/txnscope/txnindex"
)

// Changed explains why batch b of p may no longer read back: a loaded
// partition is a snapshot of files that can change under a running
// server. A live broker's active segment keeps growing (the batches loaded
// still read back, the new ones are not seen until the partition is loaded
// again) and may be truncated (log recovery, or a follower truncating to
// the leader's epoch, KIP-101), and a directory may be deleted (retention,
// partition reassignment). Records rereads each batch and checks its
// bytes; Changed adds what happened to the file, with the position the
// batch needs. It returns nil when the segment still holds the batch's
// bytes, or b is not one of p's batches.
func (p *Partition) Changed(b *txnindex.Batch) error {
	if b.Segment < 0 || int(b.Segment) >= len(p.Segments) {
		return nil
	}
	seg := p.Segments[b.Segment].Log
	path := filepath.Join(p.Dir, seg.Name)
	st, err := os.Stat(path)
	end := b.Position() + int64(b.Size)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, derr := os.Stat(p.Dir); errors.Is(derr, fs.ErrNotExist) {
			return fmt.Errorf("the source directory %s was deleted after it was loaded", p.Dir)
		}
		return fmt.Errorf("segment %s was deleted after it was loaded", path)
	case err == nil && st.Size() < end:
		return fmt.Errorf("segment %s was truncated to %d bytes (%#x) after it was loaded with %d: the batch at byte %#x needs bytes up to %#x",
			path, st.Size(), st.Size(), seg.Size, b.Position(), end)
	}
	return nil
}
