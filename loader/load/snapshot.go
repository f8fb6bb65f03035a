package load

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

// atSnapshot answers an AtSnapshot question about the .snapshot file path:
// the producer state the broker loads from it on startup
// (ProducerStateManager.loadFromSnapshot), as a log of no batch ending at
// the snapshot's offset, seeded through the loader's one routine
// (loader.SeedSnapshots, SnapshotSeed.Apply): the transactions open in it
// pin the LSO at their first offsets, as they pin the broker's until
// their markers. The snapshot seeded from is the one a load of the
// directory ending at that offset takes: this file, unless the broker
// deletes it on startup or it does not decode, when an older one is
// (the problems say which and why).
func atSnapshot(ctx context.Context, path string) (*input.Contents, error) {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	digits, ok := strings.CutSuffix(name, ".snapshot")
	at, err := strconv.ParseInt(digits, 10, 64)
	if !ok || len(digits) != 20 || err != nil {
		return nil, fmt.Errorf("%s: not a producer snapshot named by its offset (<20 digits>.snapshot)", path)
	}
	// The directory's segments and snapshots, as a load of it lists them
	// (a partition directory; or a file alone, whose state is its own).
	var bases []int64
	var names []string
	if l, err := loader.ListSegments(ctx, dir, loader.HeaderScanOptions); err == nil {
		for _, sg := range l.Segments {
			bases = append(bases, sg.BaseOffset)
		}
	}
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".snapshot") {
				names = append(names, e.Name())
			}
		}
	}
	topic, num, _, perr := loader.ParsePartitionDir(filepath.Base(dir))
	cps, err := loader.ReadLogDirCheckpoints(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	logStart := int64(-1)
	if len(bases) > 0 {
		logStart = bases[0]
		if v, ok := cps.LogStartOffset.Lookup(topic, num); ok && v > logStart {
			logStart = v
		}
	}
	o := loader.SeedOptions{Bases: bases, LogStart: logStart, LogEnd: -1, AtMost: at}
	if len(bases) == 0 {
		o, names = loader.SeedOptions{Bases: []int64{at}, LogStart: -1, LogEnd: -1, AtMost: at}, []string{name}
	}
	sd, err := loader.SeedSnapshots(dir, names, o)
	if err != nil {
		return nil, err
	}
	c := &input.Contents{Kind: "producer snapshot"}
	for _, d := range sd.Damage {
		c.Problems = append(c.Problems, d)
	}
	for _, d := range sd.Deleted {
		if d.Name == name {
			c.Problems = append(c.Problems, fmt.Errorf("%s: %s", d.Name, d.Reason))
		}
	}
	sn := sd.Snapshot
	if sn == nil {
		c.Problems = append(c.Problems, fmt.Errorf("%s: the broker loads no producer state at or below offset %d from this directory", name, at))
		return c, nil
	}
	if sn.Name != name {
		c.Problems = append(c.Problems, fmt.Errorf("%s: the broker loads the producer state at offset %d from %s instead", name, at, sn.Name))
	}
	if perr != nil {
		// A snapshot alone: the file name labels the partition, as a
		// segment's does (input's segment read alone).
		topic, num = strings.TrimSuffix(name, ".snapshot"), 0
	}
	// The log starts where the broker's does, so that a transaction open
	// since before the snapshot pins the LSO where it began; with no
	// segment, at the first offset the snapshot knows.
	if logStart < 0 {
		logStart = sn.Offset
		for _, e := range sn.Entries {
			if g := e.CurrentTxnFirstOffset; g >= 0 && g < logStart {
				logStart = g
			}
		}
	}
	p := &txnindex.Partition{Topic: topic, Partition: num, TopicUnknown: perr != nil, LogStartOffset: logStart,
		HighWatermark: sn.Offset, HighWatermarkSource: "the producer snapshot " + sn.Name,
		Segments: []txnindex.Segment{{Name: sn.Name, BaseOffset: logStart}},
		Replay: &txnindex.ReplayReport{Mode: txnindex.ReplaySnapshot, Snapshot: sn.Name, FromOffset: sn.Offset, Segments: len(bases),
			SkippedMaxTimestamp: -1, Reason: "the producer state the broker loads from it, no batch read"}}
	if sn.Offset > logStart {
		p.Segments = append(p.Segments, txnindex.Segment{Name: sn.Name, BaseOffset: sn.Offset}) // the log ends there
	}
	sd.Apply(p, sn.Offset)
	l := txnindex.Build(p)
	// The producers are the broker's state's, its entries: no batch of
	// theirs is read.
	for _, e := range sn.Entries {
		l.Producers = append(l.Producers, txnindex.Producer{ID: e.ProducerID, FirstEpoch: e.Epoch, LastEpoch: e.Epoch,
			Transactional: e.CurrentTxnFirstOffset >= 0 || e.CoordinatorEpoch >= 0, FirstOffset: -1, LastOffset: e.LastOffset, LastTimestamp: e.Timestamp})
	}
	c.Partitions = []*input.Partition{{Log: l}}
	c.Dirs = []*loader.Partition{{Dir: dir, Input: p, Checkpoints: cps, RecoveryPoint: -1, CleanerOffset: -1}}
	return c, nil
}
