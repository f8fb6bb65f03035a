package input

import (
	"context"
	"errors"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/logindex"
)

// LogDirTail is a log directory (a log.dirs entry) read for `server
// diagnose` one partition at a time, each as diagnose reads a partition
// directory given alone (OpenTail: from its newest producer snapshot), so
// that a broker's thousands of partitions and terabytes are diagnosed in
// the memory of one partition's tail, not of the whole directory. It lists
// the partitions from their directory names and reads the checkpoint files
// once (logindex.List); the internal topics' partitions, whose records are
// the evidence of diagnose's join, are read first for that (Evidence), one
// at a time, and again for their own diagnoses.
type LogDirTail struct {
	Index *logindex.Index
	// Problems are the damage of the checkpoint files, said once for
	// all the partitions.
	Problems []error
}

// ListLogDirTail lists dir's partitions. It returns nil, nil when dir is
// not a log directory (a partition directory, a kfake data directory, a
// file): the caller reads it as before.
func ListLogDirTail(dir string) (*LogDirTail, error) {
	if !logindex.IsLogDir(dir) {
		return nil, nil
	}
	x, err := logindex.List(dir)
	var none *logindex.NoPartitionsError
	if errors.As(err, &none) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d := &LogDirTail{Index: x}
	for _, e := range x.Checkpoints.Damage {
		d.Problems = append(d.Problems, e)
	}
	return d, nil
}

// Partitions are the partitions Each reads, in the index's order (topic in
// natural order, then partition), KRaft metadata logs last.
func (d *LogDirTail) Partitions() []*logindex.Entry {
	return append(d.Index.Entries[:len(d.Index.Entries):len(d.Index.Entries)], d.Index.MetadataEntries...)
}

// Evidence reads every partition of __consumer_offsets,
// __transaction_state and __share_group_state, and the KRaft metadata
// log, one at a time, for what diagnose joins every diagnosis with (the
// coordinators' transaction states, the groups' committed offsets and
// kinds, the share groups' start offsets and isolation levels, the data
// partitions' topic ids): only that is kept. Their damage is not said here:
// Open reads them again for their own diagnoses and says it then.
func (d *LogDirTail) Evidence(ctx context.Context) (*internaltopic.Internal, error) {
	in := &internaltopic.Internal{}
	for _, e := range d.Partitions() {
		if !e.Internal && !e.Metadata {
			// Its topic id, which share groups' states name it by; an
			// unreadable partition.metadata is the partition's own
			// diagnosis's to report.
			if m, err := loader.ReadPartitionMetadataIn(e.Dir); err == nil && m != nil {
				in.AddTopicID(m.TopicID, e.Topic)
			}
			continue
		}
		p, err := loader.OpenPartitionIn(ctx, e.Dir, d.Index.Checkpoints, loader.DefaultScanOptions)
		if err != nil {
			return nil, err
		}
		if err := in.Read(p); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// Open reads one partition of the directory as OpenTail reads a partition
// directory given alone: a data partition from its newest producer
// snapshot, or whole when full (diagnose --full-replay); an internal topic's
// partition or a metadata log whole. The directory's checkpoints are read
// once.
func (d *LogDirTail) Open(ctx context.Context, e *logindex.Entry, position int64, full bool) (*Contents, error) {
	if full || e.Metadata || e.Internal {
		p, err := loader.OpenPartitionIn(ctx, e.Dir, d.Index.Checkpoints, loader.DefaultScanOptions)
		if err != nil {
			return nil, err
		}
		return partitionContents(p), nil
	}
	p, err := loader.OpenPartitionTail(ctx, e.Dir, loader.DefaultScanOptions, loader.TailOptions{Position: position, Checkpoints: d.Index.Checkpoints})
	if err != nil {
		return nil, err
	}
	return partitionContents(p), nil
}
