package segsum

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

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
// as loader.OpenPartition does: the .txnindex as the broker serves it
// (loader.SetServedTxnIndex) and the .index entries, nil when damaged
// (the broker rebuilds a corrupt index, and so does txnindex.Build).
func indexFiles(dir string, f *segFile, seg *txnindex.Segment) {
	if f.index != "" {
		if fh, err := os.Open(filepath.Join(dir, f.index)); err == nil {
			if st, err := fh.Stat(); err == nil {
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
	var x *loader.TxnIndexFile
	if f.txn != "" {
		if fh, err := os.Open(filepath.Join(dir, f.txn)); err == nil {
			if st, err := fh.Stat(); err == nil {
				x, _ = loader.ReadTxnIndexFile(fh, st.Size(), f.txn, seg.BaseOffset)
			}
			fh.Close()
		}
	}
	loader.SetServedTxnIndex(seg, f.index != "", f.txn != "", x)
}

// firstSeed is the producer state the first segment starts from, as
// loader.OpenPartition seeds it, through the loader's one seeding routine
// (loader.SeedSnapshots, SnapshotSeed.Ongoing): the transactions open in
// the newest producer snapshot that began before the first batch
// (retention deleted their start, so replay cannot see them open). A
// snapshot that cannot be read seeds nothing, as a damaged one does in
// the loader, and neither does one the broker deletes on startup (the
// listing left out those of the swap and the strays; here those below the
// log start and past the log end). Before the bounds are computed the log
// end is not known: only the newest snapshot can lie past it (the others
// are at segments' base offsets), and when the one taken does, summarize
// computes the summaries again (seedEnd).
func (s *Store) firstSeed(first int64) []txnindex.OngoingTxn {
	return (&seeder{s: s}).seed(first)
}

// seeder is firstSeed for one pass over the summaries, which reads the
// snapshots once, not once a segment: every segment before the first
// batch (emptied by the cleaner, or cut to nothing) starts the log and is
// seeded so, and a directory of thousands of empty segments read the
// snapshots and listed every segment's base offset once for each of them.
// It reads them again when the log end it chose them by has changed.
type seeder struct {
	s      *Store
	read   bool
	logEnd int64
	sd     *loader.SnapshotSeed // nil when none seeds
}

func (m *seeder) seed(first int64) []txnindex.OngoingTxn {
	s := m.s
	if len(s.snapshots) == 0 {
		return nil
	}
	logEnd := int64(-1)
	if s.bounds != nil {
		logEnd = s.bounds.LogEndOffset
	}
	if !m.read || m.logEnd != logEnd {
		m.read, m.logEnd, m.sd = true, logEnd, nil
		bases := make([]int64, len(s.segs))
		for i, f := range s.segs {
			bases[i] = f.base
		}
		logStart := max(s.logStart, bases[0])
		sd, err := loader.SeedSnapshots(s.dir, s.snapshots, loader.SeedOptions{Bases: bases, LogStart: logStart, LogEnd: logEnd, AtMost: -1})
		if err == nil && sd.Snapshot != nil {
			m.sd = sd
		}
	}
	if m.sd == nil {
		return nil
	}
	if logEnd < 0 && m.sd.Snapshot.Offset > s.segs[len(s.segs)-1].base {
		s.seedEnd = m.sd.Snapshot.Offset
	}
	return m.sd.Ongoing(first)
}
