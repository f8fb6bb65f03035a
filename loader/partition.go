package loader

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/txnscope/txnscope/txnindex"
)

// Partition is a loaded partition directory: the txnindex input Build
// needs, plus every file decoded on the way, for display.
type Partition struct {
	Dir string
	// DirKind is "" for a live partition, or the suffix of a directory
	// the broker set aside: "delete", "future" or "stray".
	DirKind string

	// Input is what txnindex.Build takes. Its Segments parallel
	// Segments below, and its Batches are shared with them.
	Input *txnindex.Partition

	Segments []*SegmentFiles

	// Snapshots are the producer-state snapshots in offset order.
	// Snapshot is the newest one that decoded cleanly (the broker falls
	// back the same way when the newest is corrupt), nil if none.
	Snapshots []*ProducerSnapshot
	Snapshot  *ProducerSnapshot

	LeaderEpochs *LeaderEpochCheckpoint // nil if absent
	Metadata     *PartitionMetadata     // nil if absent

	// Checkpoints are the log directory's checkpoint files; RecoveryPoint
	// and CleanerOffset are this partition's lines of two of them, -1 if
	// not listed. LogStartOffset and HighWatermark are in Input.
	Checkpoints   *LogDirCheckpoints
	RecoveryPoint int64
	CleanerOffset int64

	// KRaftSnapshots are the KRaft metadata log's snapshots
	// (<end offset>-<epoch>.checkpoint, __cluster_metadata-0 only), by
	// name; their records are not read.
	KRaftSnapshots []KRaftSnapshot

	// Ignored lists the files the broker would not load, each with why.
	Ignored []IgnoredFile

	// Damage is every problem found in any file, segments' included.
	Damage []*FormatError

	shared []txnindex.Batch // what the segments were scanned into
	// keepSpare: assemble keeps the shared slice's spare capacity
	// (OpenPartitionTail: the partition lives for one diagnosis, and
	// trimming copies every batch into fresh memory).
	keepSpare bool
}

// SegmentFiles is one segment and its sibling index files.
type SegmentFiles struct {
	Log       *SegmentFile
	Index     *OffsetIndex  // nil if there is no .index
	TimeIndex *TimeIndex    // nil if there is no .timeindex
	TxnIndex  *TxnIndexFile // nil if there is no .txnindex
	Swap      bool          // the segment was read from .swap files (LogLoader completes the swap)

	// indexListed and txnListed: the directory lists the segment's .index
	// and .txnindex, whether or not they decode.
	indexListed, txnListed bool
	// txnRejected is the entry of a segment the tail left unread whose
	// .txnindex version Kafka refuses (txnindex.Segment.TxnIndexRejected).
	txnRejected *txnindex.RejectedEntry
}

// IgnoredFile is a file of a partition directory that was not loaded.
type IgnoredFile struct {
	Name   string
	Reason string
}

// Build runs txnindex.Build on the loaded partition.
func (p *Partition) Build() *txnindex.Log { return txnindex.Build(p.Input) }

// OpenPartition loads a <topic>-<partition> directory with
// DefaultScanOptions, reading the checkpoints of its parent directory.
func OpenPartition(dir string) (*Partition, error) {
	return OpenPartitionWith(dir, DefaultScanOptions)
}

// OpenPartitionWith is OpenPartition with explicit scan options.
func OpenPartitionWith(dir string, o ScanOptions) (*Partition, error) {
	return OpenPartitionContext(context.Background(), dir, o)
}

// OpenPartitionContext is OpenPartitionWith that stops, with ctx's error,
// when ctx ends (a signal, a request gone): the segment scans check it
// between batches.
func OpenPartitionContext(ctx context.Context, dir string, o ScanOptions) (*Partition, error) {
	cps, err := ReadLogDirCheckpoints(filepath.Dir(filepath.Clean(dir)))
	if err != nil {
		return nil, err
	}
	p, err := openPartition(ctx, dir, cps, o)
	if err != nil {
		return nil, err
	}
	p.Damage = append(p.Damage, cps.Damage...)
	return p, nil
}

// OpenPartitionIn is OpenPartitionContext with the checkpoint files of the
// log directory above dir already read (a log directory's partitions read
// one at a time); their damage is the caller's to report, once.
func OpenPartitionIn(ctx context.Context, dir string, cps *LogDirCheckpoints, o ScanOptions) (*Partition, error) {
	return openPartition(ctx, dir, cps, o)
}

func openPartition(ctx context.Context, dir string, cps *LogDirCheckpoints, o ScanOptions) (*Partition, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	topic, num, kind, err := ParsePartitionDir(filepath.Base(filepath.Clean(dir)))
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &Partition{
		Dir: dir, DirKind: kind, Checkpoints: cps, RecoveryPoint: -1, CleanerOffset: -1,
		Input: &txnindex.Partition{Topic: topic, Partition: num, LogStartOffset: -1, HighWatermark: -1},
	}
	// Which files make the log (partition_dir.go), their scan
	// (partition_scan.go), then the state files (partition_state.go).
	l := p.list(ents)
	l.crc = NewServedCRCs(cps, topic, num, l.bases)
	loaded, err := p.scanSegments(ctx, dir, l, o)
	if err != nil {
		return nil, err
	}
	lo, hi := swapRangeOf(loaded)
	p.Segments = p.applySwaps(loaded)
	p.assemble()

	if err := p.seedFromSnapshots(dir, l.snapshots, lo, hi); err != nil {
		return nil, err
	}
	if err := p.loadPartitionFiles(dir); err != nil {
		return nil, err
	}
	p.applyCheckpoints()
	p.noSegmentEvidence(l)
	return p, nil
}

// damage keeps a *FormatError in p.Damage and returns nil: a damaged file
// is reported, not fatal. Any other error (I/O) is returned.
func (p *Partition) damage(err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		p.Damage = append(p.Damage, fe)
		return nil
	}
	return err
}

// LogDir is a loaded log directory (a log.dirs entry).
type LogDir struct {
	Dir         string
	Checkpoints *LogDirCheckpoints
	Partitions  []*Partition // sorted by topic, then partition
	Skipped     []IgnoredFile
	Damage      []*FormatError // of the checkpoint files
}

// OpenLogDir loads every partition directory under dir with
// DefaultScanOptions.
func OpenLogDir(dir string) (*LogDir, error) {
	return OpenLogDirWith(dir, DefaultScanOptions)
}

// OpenLogDirWith is OpenLogDir with explicit scan options. Entries that are
// not partition directories (meta.properties, the checkpoints, KRaft's
// bootstrap.checkpoint...) are listed in Skipped.
func OpenLogDirWith(dir string, o ScanOptions) (*LogDir, error) {
	return OpenLogDirContext(context.Background(), dir, o)
}

// OpenLogDirContext is OpenLogDirWith that stops when ctx ends.
func OpenLogDirContext(ctx context.Context, dir string, o ScanOptions) (*LogDir, error) {
	cps, err := ReadLogDirCheckpoints(dir)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	l := &LogDir{Dir: dir, Checkpoints: cps, Damage: cps.Damage}
	for _, e := range ents {
		name := e.Name()
		if e.Type()&fs.ModeSymlink != 0 {
			l.Skipped = append(l.Skipped, IgnoredFile{name, notRegularReason(e.Type())})
			continue
		}
		if !e.IsDir() {
			switch name {
			case ReplicationOffsetCheckpoint, RecoveryPointOffsetCheckpoint, LogStartOffsetCheckpoint, CleanerOffsetCheckpoint:
			default:
				l.Skipped = append(l.Skipped, IgnoredFile{name, "not a partition directory"})
			}
			continue
		}
		if _, _, _, err := ParsePartitionDir(name); err != nil {
			l.Skipped = append(l.Skipped, IgnoredFile{name, SkipReason(err)})
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := openPartition(ctx, filepath.Join(dir, name), cps, o)
		if err != nil {
			return nil, err
		}
		l.Partitions = append(l.Partitions, p)
	}
	sort.SliceStable(l.Partitions, func(i, j int) bool {
		a, b := l.Partitions[i].Input, l.Partitions[j].Input
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return l, nil
}
