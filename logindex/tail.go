package logindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// TailInfo says what a tail scan read.
type TailInfo struct {
	From     int64 // the first offset replayed: the snapshot's offset, or the log start
	Snapshot string
	Segments int // segments read
	Total    int // segments in the directory
	// Full is true when no usable snapshot let the scan skip anything:
	// every segment was replayed.
	Full bool
}

func (t TailInfo) String() string {
	if t.Full {
		return fmt.Sprintf("all %d segments replayed (no producer snapshot to start from)", t.Total)
	}
	return fmt.Sprintf("the last %d of %d segments, from offset %d, seeded from %s", t.Segments, t.Total, t.From, t.Snapshot)
}

// ScanTail reads only the end of a partition directory that the last
// stable offset depends on, as the broker's recovery does
// (ProducerStateManager.truncateAndReload then loadProducersFromRecords):
// producer state is seeded from the newest readable .snapshot at or below
// the last segment's base offset (the broker writes one at every segment
// roll, named by the offset it covers up to), and only the batches from
// there on are replayed. A transaction open at the snapshot is seeded
// with its first offset (CurrentTxnFirstOffset), so the LSO it pins is
// exact though its first batches are not read. Without such a snapshot
// every segment is replayed (Info.Full).
//
// Offsets below Info.From were not read: the log is for the LSO, the high
// watermark and the open transactions, not for drawing (its Replay says
// so, and a partition page's first view draws nothing there). Batch headers only, no CRC (the
// index wants speed; the partition page opens the whole directory with
// every check). The segment files are closed before it returns; damage
// met on the way is returned beside the log. cps is the log directory's
// checkpoints (HWM, log start), may be nil.
func ScanTail(ctx context.Context, dir string, cps *loader.LogDirCheckpoints) (*txnindex.Log, TailInfo, []*loader.FormatError, error) {
	var info TailInfo
	topic, num, _, err := loader.ParsePartitionDir(filepath.Base(filepath.Clean(dir)))
	if err != nil {
		return nil, info, nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, info, nil, err
	}
	var bases, snaps []int64
	var bytes int64
	for _, de := range ents {
		if !de.Type().IsRegular() {
			continue
		}
		if b, ok := offsetName(de.Name(), ".log"); ok {
			bases = append(bases, b)
			if fi, err := de.Info(); err == nil {
				bytes += fi.Size()
			}
		} else if b, ok := offsetName(de.Name(), ".snapshot"); ok {
			snaps = append(snaps, b)
		}
	}
	slices.Sort(bases)
	slices.Sort(snaps)
	info.Total = len(bases)
	in := &txnindex.Partition{Topic: topic, Partition: num, LogStartOffset: -1, HighWatermark: -1}
	var damage []*loader.FormatError

	// The newest snapshot at or below the last segment's base: one
	// written at shutdown sits at the log end and would leave nothing
	// to replay, so the one of the last roll is taken instead. It is
	// chosen by the loader's one seeding routine (loader.SeedSnapshots):
	// a snapshot the broker deletes on startup (a stray one, one below
	// the log start: loader.SnapshotsKept) seeds nothing, as in the full
	// load the ranking is checked against, and a damaged one is reported
	// and the next older taken, as the broker falls back.
	from, first := int64(-1), 0
	if len(bases) > 0 {
		logStart := bases[0]
		if cps != nil {
			if v, ok := cps.LogStartOffset.Lookup(topic, num); ok && v > logStart {
				logStart = v
			}
		}
		names := make([]string, len(snaps))
		for i, o := range snaps {
			names[i] = fmt.Sprintf("%020d.snapshot", o)
		}
		sd, err := loader.SeedSnapshots(dir, names, loader.SeedOptions{Bases: bases, LogStart: logStart, LogEnd: -1, AtMost: bases[len(bases)-1]})
		if err != nil {
			return nil, info, nil, err
		}
		damage = append(damage, sd.Damage...)
		if s := sd.Snapshot; s != nil {
			from = s.Offset
			// Every batch from the snapshot's offset on is read: the
			// transactions open before it are seeded.
			sd.Apply(in, from)
			info.Snapshot = s.Name
			// The segment holding from: the last base at or below it.
			first = max(0, sort64(bases, from))
		}
	}
	info.Full = from < 0
	info.Segments = len(bases) - first
	if first > 0 {
		// The segments not read stand as one empty segment at the first
		// base, so that the log starts where the broker's does: the
		// broker never lets the LSO fall below the log start, and a
		// transaction the snapshot says began before from must pin the
		// LSO where it began.
		in.Segments = append(in.Segments, txnindex.Segment{Name: fmt.Sprintf("%020d.log", bases[0]), BaseOffset: bases[0]})
	}
	var read int64
	for _, b := range bases[first:] {
		if err := ctx.Err(); err != nil {
			return nil, info, nil, err
		}
		f, err := loader.OpenSegmentContext(ctx, filepath.Join(dir, fmt.Sprintf("%020d.log", b)), loader.HeaderScanOptions)
		if err != nil {
			return nil, info, nil, err
		}
		read += f.Size
		damage = append(damage, f.Damage...)
		si := int32(len(in.Segments))
		in.Segments = append(in.Segments, f.Segment())
		for _, bt := range f.Batches {
			if bt.LastOffset() < from {
				continue // replayed into the snapshot already
			}
			bt.Segment = si
			in.Batches = append(in.Batches, bt)
		}
		f.Close()
	}
	if len(bases) > 0 {
		info.From = bases[0]
	}
	if from >= 0 {
		info.From = from
		// A replay seeded from the snapshot, which is what it is: the
		// offsets below it were not read, not missing (no gap of the
		// log), and what the cleaner left there is not seen.
		in.Replay = &txnindex.ReplayReport{Mode: txnindex.ReplaySnapshot, Snapshot: info.Snapshot, FromOffset: from,
			Segments: len(bases), SegmentsRead: info.Segments, Bytes: bytes, BytesRead: read, SkippedMaxTimestamp: -1,
			Reason: "the partition index's tail scan: the LSO, the high watermark and the open transactions depend on nothing before the snapshot's offset"}
	}
	if cps != nil {
		if v, ok := cps.LogStartOffset.Lookup(topic, num); ok && v > in.LogStartOffset {
			in.LogStartOffset = v
		}
		if v, ok := cps.ReplicationOffset.Lookup(topic, num); ok {
			in.HighWatermark, in.HighWatermarkSource = v, loader.ReplicationOffsetCheckpoint
		}
	}
	return txnindex.Build(in), info, damage, nil
}

// sort64 returns the index of the last element of sorted s at or below v,
// -1 if none.
func sort64(s []int64, v int64) int {
	i, found := slices.BinarySearch(s, v)
	if found {
		return i
	}
	return i - 1
}

// offsetName parses Kafka's <20 digits><ext> file names.
func offsetName(name, ext string) (int64, bool) {
	s, ok := strings.CutSuffix(name, ext)
	if !ok || len(s) != 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil && v >= 0
}
