package load

import (
	"context"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/loader/segsum"
)

// Input is what Open read, by the path its Plan took: the partitions read
// whole or from their tail (Contents), the segment windows (Store), or a
// log directory listed (Dir; with ReadBySegment, a partition directory
// listed alone for the server to draw by segment).
type Input struct {
	Plan     Plan
	Cost     Cost
	Contents *input.Contents
	Store    *segsum.Store
	Dir      *LogDir
}

// Open reads path for q within b: it estimates the cost (Estimate),
// chooses the path (Choose) and reads it. A whole load is checked again
// once read, its batches counted (Budget.MaxBatches, MaxKept): over the
// budget, what it read is let go and the question takes the path Choose
// gives for the counted cost. A refusal is an *OverBudget error. Files
// are opened read-only, and the load stops with ctx's error when ctx ends.
func Open(ctx context.Context, path string, q Question, b Budget) (*Input, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := Estimate(ctx, path, q, b)
	if err != nil {
		return nil, err
	}
	in := &Input{Plan: Choose(q, c, b), Cost: c}
	switch in.Plan.Path {
	case Refused:
		return nil, &OverBudget{Plan: in.Plan}
	case ReadLogDir:
		in.Dir, err = ListLogDir(path, q, b)
		return in, err
	case ReadBySegment:
		return in, in.bySegment(path, q, b)
	case ReadSnapshot:
		if in.Contents, err = atSnapshot(ctx, path); err != nil {
			return nil, err
		}
		return in, nil
	case ReadTail:
		p, err := loader.OpenPartitionTail(ctx, path, loader.DefaultScanOptions, loader.TailOptions{Position: q.Position, Reasons: q.Reasons})
		if err != nil {
			return nil, err
		}
		in.Contents = input.FromPartition(p)
		return in, nil
	}
	if in.Contents, err = input.OpenContext(ctx, path); err != nil {
		return nil, err
	}
	if b.MaxBatches <= 0 && b.MaxKept <= 0 {
		return in, nil
	}
	counted := CostOf(in.Contents)
	counted.Path, counted.Name, counted.LogDir, counted.Partition, counted.Data = c.Path, c.Name, c.LogDir, c.Partition, c.Data
	counted.FileBytes, counted.SegmentBytes, counted.LastSegment = c.FileBytes, c.SegmentBytes, c.LastSegment
	if p := Choose(q, counted, b); p.Path != in.Plan.Path {
		in.Contents.Close()
		in = &Input{Plan: p, Cost: counted}
		if p.Path == Refused {
			return nil, &OverBudget{Plan: p}
		}
		return in, in.bySegment(path, q, b)
	}
	in.Cost = counted
	return in, nil
}

// bySegment opens the segment windows of the partition directory path, or,
// for a question about a log directory (the server's --load), lists it
// alone: the server draws it by segment on request.
func (in *Input) bySegment(path string, q Question, b Budget) error {
	var err error
	if q.LogDir {
		var x *logindex.Index
		if x, err = logindex.ListPartition(path); err == nil {
			in.Dir = NewLogDir(x, q, b)
		}
		return err
	}
	in.Store, err = segsum.Open(path, q.Windows)
	return err
}
