package load

import (
	"context"
	"errors"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/txnindex"
)

// LogDir is a log directory (a log.dirs entry) listed, its partitions
// opened one at a time, each with the question it was listed for, so that
// a broker's thousands of partitions and terabytes are read in the memory
// of one partition: `diagnose` of each from its newest producer snapshot,
// `inspect` of each whole within --max-memory, the server's pages
// whole within its limits. The partitions are listed from their directory
// names and the checkpoint files read once (logindex.List).
type LogDir struct {
	Index *logindex.Index
	// Problems are the damage of the checkpoint files, said once for
	// all the partitions.
	Problems []error
	q        Question
	b        Budget
}

// ListLogDir lists the log directory dir for q within b.
func ListLogDir(dir string, q Question, b Budget) (*LogDir, error) {
	x, err := logindex.List(dir)
	if err != nil {
		return nil, err
	}
	return NewLogDir(x, q, b), nil
}

// NewLogDir is the log directory x lists, its partitions opened for q
// within b.
func NewLogDir(x *logindex.Index, q Question, b Budget) *LogDir {
	q.LogDir = false
	d := &LogDir{Index: x, q: q, b: b}
	for _, e := range x.Checkpoints.Damage {
		d.Problems = append(d.Problems, e)
	}
	return d
}

// Partitions are the partitions Open reads, in the index's order (topic
// in natural order, then partition), KRaft metadata logs last.
func (d *LogDir) Partitions() []*logindex.Entry {
	return append(d.Index.Entries[:len(d.Index.Entries):len(d.Index.Entries)], d.Index.MetadataEntries...)
}

// Evidence reads every partition of __consumer_offsets,
// __transaction_state and __share_group_state, and the KRaft metadata
// log, one at a time, for what diagnose joins every diagnosis with (the
// coordinators' transaction states, the groups' committed offsets and
// kinds, the share groups' start offsets and isolation levels, the data
// partitions' topic ids): only that is kept. Their damage is not said here:
// Open reads them again for their own diagnoses and says it then.
func (d *LogDir) Evidence(ctx context.Context) (*internaltopic.Internal, error) {
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

// Open reads the partition e for the question the directory was listed
// for, as Open reads a partition directory given alone: a data partition
// from its newest producer snapshot for a Tail question, an internal
// topic's partition or a metadata log whole, the directory's checkpoints
// read once. A partition over the budget is not read: the error is an
// *OverBudget saying why (and, for a question answered by segment, that
// its windows answer it).
func (d *LogDir) Open(ctx context.Context, e *logindex.Entry) (*input.Contents, error) {
	q := d.q
	if e.Metadata || e.Internal || q.Kind == Window {
		q.Kind = Whole
	}
	// A listed entry is a partition directory by its name; only what
	// the budget bounds is measured.
	c := Cost{Path: e.Dir, Name: e.Name, Partition: true, Data: !e.Internal && !e.Metadata}
	if err := c.measure(ctx, q, d.b); err != nil {
		return nil, err
	}
	plan := Choose(q, c, d.b)
	var p *loader.Partition
	var err error
	switch plan.Path {
	case ReadTail:
		p, err = loader.OpenPartitionTail(ctx, e.Dir, loader.DefaultScanOptions, loader.TailOptions{Position: q.Position, Reasons: q.Reasons, Checkpoints: d.Index.Checkpoints})
	case ReadWhole:
		p, err = loader.OpenPartitionIn(ctx, e.Dir, d.Index.Checkpoints, loader.DefaultScanOptions)
	default:
		return nil, &OverBudget{Plan: plan}
	}
	if err != nil {
		return nil, err
	}
	in := input.FromPartition(p)
	if plan.Path == ReadWhole && d.b.MaxBatches > 0 {
		counted := CostOf(in)
		counted.Path, counted.Name, counted.Partition, counted.Data = c.Path, c.Name, c.Partition, c.Data
		if again := Choose(q, counted, d.b); again.Path != plan.Path {
			in.Close()
			return nil, &OverBudget{Plan: again}
		}
	}
	return in, nil
}

// Tail is the partition's tail as the index's scan reads it
// (logindex.ScanTail: loader.OpenPartitionTail from the snapshot of the
// last segment roll, batch headers only), for a page asked for before its
// full load is done. The files' damage is the full load's to report.
func (d *LogDir) Tail(ctx context.Context, e *logindex.Entry) (*txnindex.Log, logindex.TailInfo, error) {
	l, info, _, err := logindex.ScanTail(ctx, e.Dir, d.Index.Checkpoints)
	return l, info, err
}

// IsOverBudget reports whether err is a load the budget did not allow,
// and why.
func IsOverBudget(err error) (string, bool) {
	var o *OverBudget
	if errors.As(err, &o) {
		return o.Plan.Why, true
	}
	return "", false
}
