package segsum

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// segFile is one segment of the partition directory: its .log (or
// .log.swap) and its index files ("" when absent).
type segFile struct {
	name    string
	base    int64
	size    int64
	modTime int64
	index   string
	time    string
	txn     string
}

// listSegments lists dir's segments in offset order with
// loader.ListSegments, the rules OpenPartition loads them by and the
// broker's on startup: .deleted and .cleaned files are not segments, a
// .swap at or past the lowest .cleaned offset is dropped, and a valid swap
// replaces the segments its offsets cover, read from its .swap files where
// they are (never renamed: the directory is the user's). Only a valid
// swap's .log.swap is scanned, for where it ends.
func listSegments(ctx context.Context, dir string, o loader.ScanOptions) ([]segFile, []string, error) {
	l, err := loader.ListSegments(ctx, dir, o)
	if err != nil {
		return nil, nil, err
	}
	var out []segFile
	for _, ls := range l.Segments {
		st, err := os.Lstat(filepath.Join(dir, ls.Log))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, segFile{name: ls.Log, base: ls.BaseOffset, size: st.Size(), modTime: st.ModTime().UnixNano(),
			index: ls.Index, time: ls.TimeIndex, txn: ls.TxnIndex})
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("segsum: %s: no segment (.log file)", dir)
	}
	return out, l.Snapshots, nil
}

// indexFiles fills seg with what the segment's index files tell fetches,
// as loader.OpenPartition does: the .txnindex entries (Kafka creates the
// file lazily, so a segment with other index files and no .txnindex had no
// aborted transaction) and the .index entries, nil when damaged (the broker
// rebuilds a corrupt index, and so does txnindex.Build).
func indexFiles(dir string, f *segFile, seg *txnindex.Segment) {
	found := false
	if f.index != "" {
		if fh, err := os.Open(filepath.Join(dir, f.index)); err == nil {
			if st, err := fh.Stat(); err == nil {
				found = true
				x, err := loader.ReadOffsetIndex(fh, st.Size(), f.index, seg.BaseOffset)
				if err == nil {
					seg.OffsetIndex = x.Entries
					if seg.OffsetIndex == nil {
						seg.OffsetIndex = []txnindex.IndexEntry{}
					}
				}
			}
			fh.Close()
		}
	}
	if f.time != "" {
		if _, err := os.Stat(filepath.Join(dir, f.time)); err == nil {
			found = true
		}
	}
	if f.txn != "" {
		if fh, err := os.Open(filepath.Join(dir, f.txn)); err == nil {
			if st, err := fh.Stat(); err == nil {
				found = true
				if x, _ := loader.ReadTxnIndexFile(fh, st.Size(), f.txn, seg.BaseOffset); x != nil {
					seg.TxnIndex = x.Entries
				}
			}
			fh.Close()
		}
	}
	seg.TxnIndexOnDisk = found
}

// firstSeed is the producer state the first segment starts from, as
// loader.OpenPartition seeds it (loader.NewestSnapshot, ProducerSnapshot
// .Seed): the transactions open in the newest producer snapshot that
// began before the first batch (retention deleted their start, so replay
// cannot see them open). A snapshot that cannot be read seeds nothing, as
// a damaged one does in the loader, and neither does one the broker
// deletes on startup (loader.SnapshotsKept: the listing left out those
// of the swap and the strays; here those at or below the log start and
// past the log end).
func (s *Store) firstSeed(ctx context.Context, first int64) ([]txnindex.OngoingTxn, error) {
	names := s.snapshots
	if len(names) == 0 {
		return nil, nil
	}
	bases := make([]int64, len(s.segs))
	for i, f := range s.segs {
		bases[i] = f.base
	}
	logStart := max(s.logStart, bases[0])
	logEnd := int64(-1)
	// Only the newest snapshot can lie past the log end: the others are
	// at segments' base offsets. The log end is then needed.
	if off, ok := snapshotOffset(names[len(names)-1]); ok && off > bases[len(bases)-1] {
		var err error
		if logEnd, err = s.logEnd(ctx, logStart); err != nil {
			return nil, err
		}
	}
	kept, _ := loader.SnapshotsKept(names, bases, 0, 0, logStart, logEnd)
	sn, err := loader.NewestSnapshot(s.dir, kept)
	if err != nil || sn == nil {
		return nil, nil
	}
	return sn.Seed(first), nil
}

// logEnd is the log end offset (Bounds.LogEndOffset) before the bounds
// are computed: the last batch's next offset, read from the summaries or
// by scanning the last segments that have batches, or the last segment's
// base offset (or logStart) when higher.
func (s *Store) logEnd(ctx context.Context, logStart int64) (int64, error) {
	if s.bounds != nil {
		return s.bounds.LogEndOffset, nil
	}
	n := len(s.segs)
	end := max(logStart, s.segs[n-1].base)
	for k := n - 1; k >= 0; k-- {
		if x := s.sums[k]; x != nil {
			if x.Batches > 0 {
				return max(end, x.LastNextOffset), nil
			}
			continue
		}
		f := s.segs[k]
		fh, size, err := loader.OpenRegular(filepath.Join(s.dir, f.name))
		if err != nil {
			return 0, err
		}
		sf, err := loader.NewSegmentContext(ctx, fh, size, f.name, s.o.Scan)
		fh.Close()
		if err != nil {
			return 0, err
		}
		if b := sf.Batches; len(b) > 0 {
			return max(end, b[len(b)-1].NextOffset()), nil
		}
	}
	return end, nil
}

// snapshotOffset is the offset a .snapshot file's name gives.
func snapshotOffset(name string) (int64, bool) {
	if len(name) < 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	return v, err == nil
}
