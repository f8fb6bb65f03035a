package loader

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

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
			fe.Msg += brokerReadsDamaged(f.name, fe.numberFormat)
			c.Damage = append(c.Damage, fe)
		}
		*f.dst = cp
	}
	return c, nil
}

// brokerReadsDamaged says what a broker does with a damaged offset
// checkpoint of the log directory. CheckpointFile's reader throws an
// IOException for a bad version, count or field count, which
// CheckpointFileWithFailureHandler turns into the log directory going
// offline (LogDirFailureChannel); a partition or offset that does not parse
// is a NumberFormatException instead. LogManager.loadLogs catches either for
// the recovery points and log starts and goes on without the file's lines.
// A running broker writes the file again from memory, replacing it.
func brokerReadsDamaged(name string, numberFormat bool) string {
	var what, then, rewrite string
	if numberFormat {
		what = "Kafka's reader throws a NumberFormatException on it"
	} else {
		what = "Kafka's reader throws an IOException on it, and a broker that reads the file marks this log directory offline"
	}
	switch name {
	case RecoveryPointOffsetCheckpoint:
		then, rewrite = "; at startup the broker uses none of its lines: recovery point 0 for every partition", "every minute (log.flush.offset.checkpoint.interval.ms)"
	case LogStartOffsetCheckpoint:
		then, rewrite = "; at startup the broker uses none of its lines: each log starts at its first segment", "every minute (log.flush.start.offset.checkpoint.interval.ms)"
	case ReplicationOffsetCheckpoint:
		rewrite = "every 5 seconds (replica.high.watermark.checkpoint.interval.ms)"
	default:
		return " (" + what + "; txnscope uses the lines before it)"
	}
	return " (" + what + then + "; a running broker replaces the file from memory " + rewrite + "; txnscope uses the lines before it)"
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

// seedFromSnapshots seeds the loaded (assembled) partition from its
// producer snapshots (SeedSnapshots, every kept one decoded for display),
// the ones the broker deletes added to p.Ignored with why: the log start
// is the larger
// of its checkpoint line and the first segment's base, the log end the one
// txnindex.Build computes (the last batch's next offset, or the last
// segment's base when higher).
func (p *Partition) seedFromSnapshots(dir string, names []string, swapLo, swapHi int64) error {
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
	sd, err := SeedSnapshots(dir, names, SeedOptions{Bases: bases, SwapLo: swapLo, SwapHi: swapHi, LogStart: start, LogEnd: end, AtMost: -1, Every: true})
	if err != nil {
		return err
	}
	p.takeSeed(sd)
	first := int64(math.MaxInt64)
	if len(p.Input.Batches) > 0 {
		first = p.Input.Batches[0].BaseOffset
	}
	sd.Apply(p.Input, first)
	return nil
}

// takeSeed keeps what SeedSnapshots read: every snapshot decoded, the
// newest clean one, the ones the broker deletes and the damage.
func (p *Partition) takeSeed(sd *SnapshotSeed) {
	p.Ignored = append(p.Ignored, sd.Deleted...)
	p.Damage = append(p.Damage, sd.Damage...)
	p.Snapshots, p.Snapshot = sd.Read, sd.Snapshot
}

// SeedOptions say which of a partition directory's producer snapshots a
// load may seed its producer state from.
type SeedOptions struct {
	// Bases are the segments' base offsets after the swaps, ascending.
	Bases []int64
	// SwapLo and SwapHi are the offsets an interrupted cleaning's .swap
	// segments replace (SwapLo >= SwapHi for none).
	SwapLo, SwapHi int64
	// LogStart and LogEnd are the log's start and end offsets, -1 when
	// not known yet (SnapshotsKept).
	LogStart, LogEnd int64
	// AtMost leaves out the snapshots past it, -1 none: a read of a
	// partition's tail seeds from none past the high watermark, or past a
	// consumer position whose decisions are explained.
	AtMost int64
	// Every decodes every snapshot kept, for display (SnapshotSeed.Read),
	// not only those down to the newest clean one.
	Every bool
}

// SnapshotSeed is the producer state a load of a partition directory
// starts from, as SeedSnapshots chose it.
type SnapshotSeed struct {
	// Snapshot is the newest snapshot the broker keeps, at or below
	// AtMost, that decodes cleanly (the broker falls back the same way
	// when the newest is corrupt); nil when none does.
	Snapshot *ProducerSnapshot
	// Read are the snapshots decoded, oldest first, damaged ones
	// included: every one kept with Every, else those tried from the
	// newest down to Snapshot.
	Read []*ProducerSnapshot
	// Kept are the names of the snapshots the broker keeps on startup,
	// at or below AtMost, oldest first; Deleted those it deletes, with
	// why (SnapshotsKept).
	Kept    []string
	Deleted []IgnoredFile
	// Damage is what was wrong with the snapshots read.
	Damage []*FormatError
}

// SeedSnapshots is the one routine that chooses the producer snapshot a
// read of a partition directory seeds its producer state from, for every
// reader of one: the whole load (OpenPartition), the tail
// (OpenPartitionTail, which logindex's tail scan asks too) and segsum's
// first window. It follows broker recovery (LogLoader.load, ProducerStateManager
// .truncateAndReload then loadFromSnapshot): the snapshots the broker
// deletes on startup are left out (SnapshotsKept), the newest of the rest
// that decodes cleanly is taken, a damaged one is reported and the next
// older tried. A snapshot file is read only if it is a regular file of at
// most 64 MiB (maxStateFile, over a million producers); a larger one is
// damage too, and an older one is tried. names are the directory's
// .snapshot files; only an I/O error fails.
func SeedSnapshots(dir string, names []string, o SeedOptions) (*SnapshotSeed, error) {
	sd := &SnapshotSeed{}
	if len(names) == 0 {
		return sd, nil
	}
	kept, deleted := SnapshotsKept(names, o.Bases, o.SwapLo, o.SwapHi, o.LogStart, o.LogEnd)
	sd.Deleted = deleted
	for _, n := range kept {
		if off, _, ok := splitSegmentName(n); o.AtMost < 0 || ok && off <= o.AtMost {
			sd.Kept = append(sd.Kept, n)
		}
	}
	// 20-digit names sort by offset: newest last. Without Every the
	// newest are tried first and the first clean one ends the search.
	var read []*ProducerSnapshot
	for i := len(sd.Kept) - 1; i >= 0; i-- {
		s, err := readSnapshotFile(dir, sd.Kept[i])
		var fe *FormatError
		switch {
		case errors.As(err, &fe):
			sd.Damage = append(sd.Damage, fe)
		case err != nil:
			return nil, err
		}
		if s == nil {
			continue // gone since the listing, or not a regular file
		}
		read = append(read, s)
		if err == nil && sd.Snapshot == nil {
			sd.Snapshot = s
			if !o.Every {
				break
			}
		}
	}
	slices.Reverse(read)
	slices.Reverse(sd.Damage)
	sd.Read = read
	return sd, nil
}

// readSnapshotFile reads and decodes one .snapshot file: nil, nil when it
// is gone; a *FormatError, with the snapshot decoded before the damage if
// any, when it is not a regular file, is larger than a state file may be,
// or does not decode.
func readSnapshotFile(dir, name string) (*ProducerSnapshot, error) {
	path := filepath.Join(dir, name)
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Size() > maxStateFile {
		return nil, formatErr(name, 0, "file", "%d bytes, more than the %d a producer snapshot is read up to", st.Size(), int64(maxStateFile))
	}
	data, err := readFileIfExists(path)
	if err != nil || data == nil {
		return nil, err
	}
	return ReadProducerSnapshot(data, name)
}

// Ongoing is what the snapshot seeds a log whose first batch read is at
// first (MaxInt64 for none) with: the transactions open in it that began
// before that batch (txnindex.Partition.Ongoing); nil when there is no
// snapshot, or it does not seed such a log (ProducerSnapshot.seeds).
func (sd *SnapshotSeed) Ongoing(first int64) []txnindex.OngoingTxn {
	if sd.Snapshot == nil || !sd.Snapshot.seeds(first) {
		return nil
	}
	return sd.Snapshot.Ongoing(first)
}

// Apply seeds in, a log whose first batch read is at first (MaxInt64 for
// none), with the snapshot: its open transactions that began before that
// batch (Ongoing) and every entry (Snapshot), as
// ProducerStateManager.loadFromSnapshot loads it.
func (sd *SnapshotSeed) Apply(in *txnindex.Partition, first int64) {
	if sd.Snapshot == nil || !sd.Snapshot.seeds(first) {
		return
	}
	in.Ongoing = sd.Snapshot.Ongoing(first)
	in.Snapshot = sd.Snapshot.Info()
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
	p.Input.CleanShutdown = c.CleanShutdown
	if v, ok := c.LogStartOffset.Lookup(t, n); ok {
		p.Input.LogStartOffset = v
	}
	if v, ok := c.ReplicationOffset.Lookup(t, n); ok {
		p.Input.HighWatermark = v
		p.Input.HighWatermarkSource = ReplicationOffsetCheckpoint
	}
	if v, ok := c.RecoveryPoint.Lookup(t, n); ok {
		// txnindex says with it which segments a restart after an
		// unclean shutdown recovers, rebuilding their .txnindex.
		p.RecoveryPoint = v
		p.Input.RecoveryPoint, p.Input.RecoveryPointKnown = v, true
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
