package loader

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/txnscope/txnscope/txnindex"
)

// The state files: the log directory's offset checkpoints, and a
// partition's producer snapshots, leader-epoch-checkpoint and
// partition.metadata.

// LogDirCheckpoints are the checkpoint files at the root of a log directory.
// A nil field means the file is absent.
type LogDirCheckpoints struct {
	Dir               string
	ReplicationOffset *OffsetCheckpoint
	RecoveryPoint     *OffsetCheckpoint
	LogStartOffset    *OffsetCheckpoint
	CleanerOffset     *OffsetCheckpoint
	// CleanShutdown: the directory holds CleanShutdownFile, which the
	// broker writes when it shuts down cleanly and deletes when it starts
	// loading; while it is there, the broker's next start skips recovery
	// of every log in the directory (LogManager.loadLogs, LogLoader).
	CleanShutdown bool
	Damage        []*FormatError
}

// CleanShutdownFile is the marker a broker leaves in each log directory on
// a clean shutdown.
const CleanShutdownFile = ".kafka_cleanshutdown"

// ReadLogDirCheckpoints reads the four offset checkpoints of a log
// directory, keeping the entries of the partitions it holds (see
// checkpoint_cache.go: each directory's files are parsed once while they
// do not change). A damaged file is recorded in Damage with the entries
// read before the damage; only an I/O error fails. The result is shared:
// callers must not change it.
func ReadLogDirCheckpoints(dir string) (*LogDirCheckpoints, error) {
	return cachedLogDirCheckpoints(dir)
}

// readLogDirCheckpoints parses the checkpoints of dir, keeping only the
// entries keep holds (all when keep is nil).
func readLogDirCheckpoints(dir string, keep map[tp]bool) (*LogDirCheckpoints, error) {
	c := &LogDirCheckpoints{Dir: dir}
	// Only a regular file counts (its contents, a broker epoch in KRaft
	// mode, do not matter here).
	if st, err := os.Lstat(filepath.Join(dir, CleanShutdownFile)); err == nil && st.Mode().IsRegular() {
		c.CleanShutdown = true
	}
	for _, f := range []struct {
		name string
		dst  **OffsetCheckpoint
	}{
		{ReplicationOffsetCheckpoint, &c.ReplicationOffset},
		{RecoveryPointOffsetCheckpoint, &c.RecoveryPoint},
		{LogStartOffsetCheckpoint, &c.LogStartOffset},
		{CleanerOffsetCheckpoint, &c.CleanerOffset},
	} {
		data, err := readFileIfExists(filepath.Join(dir, f.name))
		var fe *FormatError
		if errors.As(err, &fe) {
			c.Damage = append(c.Damage, fe)
			continue
		}
		if err != nil {
			return nil, err
		}
		if data == nil {
			continue
		}
		cp, err := readOffsetCheckpoint(bytes.NewReader(data), f.name, keep)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				return nil, err
			}
			c.Damage = append(c.Damage, fe)
		}
		*f.dst = cp
	}
	return c, nil
}

// readFileIfExists returns nil, nil for a missing file. A symlink, pipe or
// other non-regular file in its place is not read: it comes back as a
// *FormatError, damage to report, so the rest of the directory loads.
func readFileIfExists(path string) ([]byte, error) {
	data, err := readInside(path, maxStateFile)
	if errors.Is(err, ErrNotRegular) {
		st, _ := os.Lstat(path)
		var m fs.FileMode
		if st != nil {
			m = st.Mode()
		}
		return nil, formatErr(filepath.Base(path), 0, "file", "%s", notRegularReason(m))
	}
	return data, err
}

// keptSnapshots is SnapshotsKept of the loaded (assembled) partition, the
// ones the broker deletes added to p.Ignored with why: the log start is
// the larger of its checkpoint line and the first segment's base, the log
// end the one txnindex.Build computes (the last batch's next offset, or
// the last segment's base when higher).
func (p *Partition) keptSnapshots(names []string, swapLo, swapHi int64) []string {
	if len(names) == 0 {
		return names
	}
	bases := make([]int64, len(p.Segments))
	for i, s := range p.Segments {
		bases[i] = s.Log.BaseOffset
	}
	start, end := int64(-1), int64(-1)
	if len(bases) > 0 {
		start = bases[0]
		if v, ok := p.Checkpoints.logStart(p.Input.Topic, p.Input.Partition); ok && v > start {
			start = v
		}
		end = max(start, bases[len(bases)-1])
		if n := len(p.Input.Batches); n > 0 {
			end = max(end, p.Input.Batches[n-1].NextOffset())
		}
	}
	kept, deleted := SnapshotsKept(names, bases, swapLo, swapHi, start, end)
	p.Ignored = append(p.Ignored, deleted...)
	return kept
}

// loadSnapshots decodes every .snapshot and seeds Input.Ongoing from the
// newest clean one.
func (p *Partition) loadSnapshots(dir string, names []string) error {
	if err := p.readSnapshots(dir, names); err != nil {
		return err
	}
	first := int64(math.MaxInt64)
	if len(p.Input.Batches) > 0 {
		first = p.Input.Batches[0].BaseOffset
	}
	p.seedSnapshot(first)
	return nil
}

// readSnapshots decodes every .snapshot into Snapshots, and Snapshot is
// the newest clean one.
func (p *Partition) readSnapshots(dir string, names []string) error {
	sort.Strings(names) // 20-digit names sort by offset
	for _, n := range names {
		data, err := readFileIfExists(filepath.Join(dir, n))
		if err := p.damage(err); err != nil {
			return err
		}
		if data == nil {
			continue // gone since the listing, or not a regular file
		}
		s, err := ReadProducerSnapshot(data, n)
		if err := p.damage(err); err != nil {
			return err
		}
		p.Snapshots = append(p.Snapshots, s)
		if err == nil {
			p.Snapshot = s
		}
	}
	return nil
}

// seedSnapshot seeds Input.Ongoing and Input.Snapshot from Snapshot, given
// the base offset of the log's first batch (MaxInt64 for none).
func (p *Partition) seedSnapshot(first int64) {
	if p.Snapshot == nil || !p.Snapshot.seeds(first) {
		return
	}
	p.Input.Ongoing = p.Snapshot.Ongoing(first)
	p.Input.Snapshot = p.Snapshot.Info()
}

// seeds reports whether the snapshot seeds a log whose first batch is at
// first (MaxInt64 for none). A transaction still open in the snapshot
// whose first offset lies before the first batch began in data retention
// deleted: replay cannot see it open, so it is seeded (Ongoing). Later
// ones replay opens itself. A snapshot older than the first batch
// describes state the log no longer continues from (ProducerStateManager
// deletes snapshots below the log start offset), so it seeds nothing.
func (s *ProducerSnapshot) seeds(first int64) bool {
	return s.Offset < 0 || s.Offset >= first || first == math.MaxInt64
}

// Seed is what OpenPartition seeds a log whose first batch is at first
// (MaxInt64 for none) with from the snapshot (Input.Ongoing): for a reader
// of the segments that does not load the partition whole (segsum).
func (s *ProducerSnapshot) Seed(first int64) []txnindex.OngoingTxn {
	if !s.seeds(first) {
		return nil
	}
	return s.Ongoing(first)
}

// NewestSnapshot is the snapshot OpenPartition seeds from among the
// .snapshot files names of dir (SegmentListing.Snapshots): the newest that
// decodes cleanly, read as readSnapshots reads them (regular files only,
// bounded), from the newest down; nil when none does.
func NewestSnapshot(dir string, names []string) (*ProducerSnapshot, error) {
	names = slices.Clone(names)
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // 20-digit names: newest first
	for _, n := range names {
		data, err := readFileIfExists(filepath.Join(dir, n))
		var fe *FormatError
		if errors.As(err, &fe) || err == nil && data == nil {
			continue
		}
		if err != nil {
			return nil, err
		}
		if s, err := ReadProducerSnapshot(data, n); err == nil {
			return s, nil
		} else if !errors.As(err, &fe) {
			return nil, err
		}
	}
	return nil, nil
}

func (p *Partition) loadPartitionFiles(dir string) error {
	data, err := readFileIfExists(filepath.Join(dir, LeaderEpochCheckpointFile))
	if err := p.damage(err); err != nil {
		return err
	}
	if data != nil {
		c, err := ReadLeaderEpochCheckpoint(bytes.NewReader(data), LeaderEpochCheckpointFile)
		if err := p.damage(err); err != nil {
			return err
		}
		p.LeaderEpochs = c
	}
	data, err = readFileIfExists(filepath.Join(dir, PartitionMetadataFile))
	if err := p.damage(err); err != nil {
		return err
	}
	if data != nil {
		m, err := ReadPartitionMetadata(bytes.NewReader(data), PartitionMetadataFile)
		if err := p.damage(err); err != nil {
			return err
		}
		p.Metadata = m
	}
	return nil
}

// applyCheckpoints takes this partition's lines of the log-dir checkpoints.
func (p *Partition) applyCheckpoints() {
	c, t, n := p.Checkpoints, p.Input.Topic, p.Input.Partition
	if c == nil {
		return
	}
	defer p.detectTiered()
	if v, ok := c.LogStartOffset.Lookup(t, n); ok {
		p.Input.LogStartOffset = v
	}
	if v, ok := c.ReplicationOffset.Lookup(t, n); ok {
		p.Input.HighWatermark = v
		p.Input.HighWatermarkSource = ReplicationOffsetCheckpoint
	}
	if v, ok := c.RecoveryPoint.Lookup(t, n); ok {
		p.RecoveryPoint = v
	}
	if v, ok := c.CleanerOffset.Lookup(t, n); ok {
		// txnindex explains .txnindex differences with it: only
		// offsets below it were ever cleaned.
		p.CleanerOffset = v
		p.Input.CleanerOffset, p.Input.CleanerOffsetKnown = v, true
	}
}

// logStart is the partition's line of the log-start-offset checkpoint.
func (c *LogDirCheckpoints) logStart(topic string, partition int32) (int64, bool) {
	if c == nil {
		return 0, false
	}
	return c.LogStartOffset.Lookup(topic, partition)
}
