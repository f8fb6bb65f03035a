package loader

import (
	"context"
	"os"
	"path/filepath"
)

// ListedSegment is one segment of the log a partition directory holds, as
// the broker loads it on startup: its base offset and the files it is read
// from, "" for an index file that is absent. A completed swap's files are
// the .swap ones (the broker renames them into place; we read them where
// they are).
type ListedSegment struct {
	BaseOffset int64
	Log        string
	Index      string
	TimeIndex  string
	TxnIndex   string
	Swap       bool
}

// SegmentListing is a partition directory's log as LogLoader.load leaves
// it, without its writes: the segments in offset order, the producer
// snapshots it keeps (but for the log start and end rules of
// SnapshotsKept), and every file it would delete or not load, with why.
type SegmentListing struct {
	Segments  []ListedSegment
	Snapshots []string
	Ignored   []IgnoredFile
}

// ListSegments lists dir's segments as OpenPartition loads them (the same
// rules, partition_dir.go: .deleted and .cleaned files dropped, a .swap at
// or past the lowest .cleaned offset dropped, the valid swaps replacing the
// segments in their range) without scanning the segments, for a reader
// that scans them on demand (segsum). The one exception is a valid .swap
// segment: how far it replaces is its next offset (LogSegment.readNextOffset),
// so it is scanned with o, as OpenPartition scans it, up to its first
// damage. Nothing is written to dir.
func ListSegments(ctx context.Context, dir string, o ScanOptions) (*SegmentListing, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var p Partition
	l := p.list(ents)
	next := map[int64]int64{}
	for _, b := range l.bases {
		s := l.segs[b]
		if !s.hasSwap {
			continue
		}
		n, err := swapNextOffset(ctx, filepath.Join(dir, s.swapLog), s.swapLog, b, o)
		if err != nil {
			return nil, err
		}
		next[b] = n
	}
	lo, hi := swapRange(next)
	out := &SegmentListing{Snapshots: l.snapshots}
	cover := ""
	for _, b := range l.bases {
		s := l.segs[b]
		if s.hasSwap {
			cover = s.swapLog
			if s.hasLog {
				p.Ignored = append(p.Ignored, IgnoredFile{s.log, "replaced by " + s.swapLog})
			}
			out.Segments = append(out.Segments, ListedSegment{BaseOffset: b, Log: s.swapLog, Index: s.swapIdx,
				TimeIndex: s.swapTime, TxnIndex: s.swapTxn, Swap: true})
			continue
		}
		if len(next) > 0 && b >= lo && b < hi {
			p.Ignored = append(p.Ignored, IgnoredFile{s.log, "replaced by " + cover})
			continue
		}
		out.Segments = append(out.Segments, ListedSegment{BaseOffset: b, Log: s.log, Index: s.index, TimeIndex: s.time, TxnIndex: s.txn})
	}
	// The snapshots the broker deletes on startup for the swap and as
	// strays (SnapshotsKept); those it deletes for the log start and end
	// are the reader's to leave out (SnapshotsKept with them), who
	// knows them once the segments are scanned.
	bases := make([]int64, len(out.Segments))
	for i, s := range out.Segments {
		bases[i] = s.BaseOffset
	}
	kept, deleted := SnapshotsKept(l.snapshots, bases, lo, hi, -1, -1)
	out.Snapshots = kept
	out.Ignored = append(p.Ignored, deleted...)
	return out, nil
}

// swapNextOffset scans a .log.swap for the offset after its last batch,
// its base offset when it has none (SegmentFiles.nextOffset).
func swapNextOffset(ctx context.Context, path, name string, base int64, o ScanOptions) (int64, error) {
	fh, size, err := openInside(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	f, err := NewSegmentContext(ctx, fh, size, name, o)
	if err != nil {
		return 0, err
	}
	f.BaseOffset = base
	return (&SegmentFiles{Log: f}).nextOffset(), nil
}
