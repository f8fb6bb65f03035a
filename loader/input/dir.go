package input

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/internaltopic"
)

// openDir reads a <topic>-<partition> directory holding segments, else a
// log directory, else what kfake.DataDir writes.
func openDir(ctx context.Context, path string) (*Contents, error) {
	if _, _, _, err := loader.ParsePartitionDir(filepath.Base(filepath.Clean(path))); err == nil {
		if loader.HasLogFile(path) || loader.IsKRaftMetadataDir(path) {
			p, err := loader.OpenPartitionContext(ctx, path, loader.DefaultScanOptions)
			if err != nil {
				return nil, err
			}
			return FromPartition(p), nil
		}
	}
	d, err := loader.OpenLogDirContext(ctx, path, loader.DefaultScanOptions)
	if err != nil {
		return nil, err
	}
	c := &Contents{Kind: KindLogDir, Dirs: d.Partitions}
	for _, d := range d.Damage {
		c.Problems = append(c.Problems, d)
	}
	for _, p := range d.Partitions {
		if p.DirKind != "" {
			continue // directories the broker set aside (-delete, -future, -stray)
		}
		c.Partitions = append(c.Partitions, &Partition{Log: p.Build()})
		for _, d := range p.Damage {
			c.Problems = append(c.Problems, d)
		}
	}
	if len(c.Partitions) == 0 && loader.IsKfakeDir(path) {
		// Not Kafka's layout but what kfake.DataDir writes.
		ps, err := loader.OpenKfakeDir(path)
		if err != nil {
			return nil, err
		}
		c = &Contents{Kind: KindKfakeDir, Dirs: ps}
		for _, p := range ps {
			c.Partitions = append(c.Partitions, &Partition{Log: p.Build()})
			for _, d := range p.Damage {
				c.Problems = append(c.Problems, d)
			}
		}
	}
	if len(c.Partitions) == 0 {
		return nil, fmt.Errorf("%s: no partition to load: want <topic>-<partition> directories holding .log segments", path)
	}
	return c, nil
}

// FromPartition is what a partition directory read whole or from its
// tail holds: the partition, its log and its damage as problems.
func FromPartition(p *loader.Partition) *Contents {
	c := &Contents{Kind: KindPartitionDir, Dirs: []*loader.Partition{p}, Partitions: []*Partition{{Log: p.Build()}}}
	for _, d := range p.Damage {
		c.Problems = append(c.Problems, d)
	}
	return c
}

// DataPartition reports whether path is a <topic>-<partition> directory
// of a data topic holding segments: what a tail question reads from a
// producer snapshot (package load). Not a file, a log
// dir, a directory without segments (KRaft snapshots only), nor
// __consumer_offsets or __transaction_state, whose records are diagnose's
// evidence and are read whole.
func DataPartition(path string) bool {
	topic, _, _, err := loader.ParsePartitionDir(filepath.Base(filepath.Clean(path)))
	if err != nil || topic == internaltopic.ConsumerOffsetsTopic || topic == internaltopic.TransactionStateTopic {
		return false
	}
	return loader.HasLogFile(path)
}
