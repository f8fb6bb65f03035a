package load

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/txnindex"
)

// Cost is what reading an input for a question would take, and what it is.
type Cost struct {
	// Path is the input as given; Name the partition it is, by its
	// directory's name (the server's pages name it so).
	Path, Name string
	// LogDir: a log directory (a log.dirs entry). Partition: a
	// <topic>-<partition> directory holding segments, which segment
	// windows can read; Data: one of a data topic, which a tail can read
	// (not __consumer_offsets or __transaction_state, whose records are
	// diagnose's evidence and are read whole).
	LogDir, Partition, Data bool
	// FileBytes is the bytes of the input's files, counted only when a
	// budget bounds them (Budget.MaxFileBytes); a walk of a directory
	// stops once past the bound.
	FileBytes int64
	// SegmentBytes is the bytes of a partition directory's segments;
	// LastSegment is the path of the last.
	SegmentBytes int64
	LastSegment  string
	// Batches is how many batches the load decodes: counted once read
	// (Counted), else estimated from the bytes of the segments it reads
	// (from the one holding the question's position on) and the mean
	// batch size sampled at the first of them and the last; 0 when none
	// could be sampled. Largest is the largest partition's, LargestName
	// its name.
	Batches, Largest int64
	LargestName      string
	Counted          bool
	// Kept is what the input holds as it is: the bytes of an upload's
	// segment, kept for its records.
	Kept int64
}

// Memory is what the load keeps in memory: its kept bytes, and each
// decoded batch at txnindex.LogBytes, the one figure loads and segment
// windows are counted with.
func (c Cost) Memory() int64 { return c.Kept + txnindex.LogBytes(c.Batches) }

// Estimate is the cost of reading path for q, before a byte of a segment
// is read: what it is, and what b bounds (the files' bytes for
// MaxFileBytes; the batches, from the segments' sizes and sampled batch
// sizes, for MaxMemory, MaxShared and MaxKept).
func Estimate(ctx context.Context, path string, q Question, b Budget) (Cost, error) {
	c := Cost{Path: path, Name: filepath.Base(filepath.Clean(path))}
	st, err := os.Stat(path)
	if err != nil {
		return c, err
	}
	if st.IsDir() {
		if logindex.IsLogDir(path) && !loader.IsKfakeDir(path) {
			c.LogDir = true
			if q.LogDir {
				return c, nil // listed, never walked: thousands of partitions
			}
		}
		c.Partition = isPartitionDir(path)
		c.Data = c.Partition && input.DataPartition(path)
	}
	return c, c.measure(ctx, q, b)
}

// measure counts what b bounds of the input c is.
func (c *Cost) measure(ctx context.Context, q Question, b Budget) error {
	if b.MaxFileBytes > 0 {
		// A partition directory is counted whole, for the sentence that
		// names its size; anything else only up to the bound.
		limit := b.MaxFileBytes
		if c.Partition {
			limit = math.MaxInt64
		}
		var err error
		if c.FileBytes, err = fileBytes(c.Path, limit); err != nil {
			return err
		}
	}
	if c.Partition && (b.OneLoad() > 0 || b.MaxKept > 0) {
		from := int64(math.MinInt64)
		if q.Kind == Tail && q.Position >= 0 {
			from = q.Position
		}
		return c.sample(ctx, c.Path, from)
	}
	return nil
}

// sample estimates the batches of a load of the partition directory dir
// from the segment holding offset from on: those segments' bytes over the
// mean batch size sampled at the first of them and the last. The segments
// are those the loader reads (loader.ListSegments: a completed .swap in
// the place of what it replaces).
func (c *Cost) sample(ctx context.Context, dir string, from int64) error {
	l, err := loader.ListSegments(ctx, dir, loader.DefaultScanOptions)
	if err != nil || len(l.Segments) == 0 {
		return err
	}
	segs := l.Segments
	k := max(sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset > from })-1, 0)
	var read int64
	for i, s := range segs {
		st, err := os.Lstat(filepath.Join(dir, s.Log))
		if err != nil {
			return err
		}
		c.SegmentBytes += st.Size()
		if i >= k {
			read += st.Size()
		}
	}
	c.LastSegment = filepath.Join(dir, segs[len(segs)-1].Log)
	var sum, n int64
	for _, s := range []loader.ListedSegment{segs[k], segs[len(segs)-1]} {
		if m, err := loader.MeanBatchSize(filepath.Join(dir, s.Log)); err == nil && m > 0 {
			sum, n = sum+m, n+1
		}
	}
	if n > 0 {
		c.Batches = read / (sum / n)
		c.Largest, c.LargestName = c.Batches, c.Name
	}
	return nil
}

// CostOf is what contents read keep: their kept segment's bytes (an
// upload's, for its records) and their batches, counted.
func CostOf(in *input.Contents) Cost {
	c := Cost{Counted: true}
	if in.Segment != nil {
		for _, s := range in.Segment.Segments {
			c.Kept += s.Log.Size
		}
	}
	for _, p := range in.Partitions {
		n := int64(len(p.Log.Batches))
		c.Batches += n
		if n > c.Largest || c.LargestName == "" {
			c.Largest, c.LargestName = n, txnindex.PartitionName(p.Log.Topic, p.Log.Partition)
		}
	}
	return c
}

// CostOfLog is CostOf a log alone: what a partition opened whole, or its
// tail, keeps (the server prices what it holds with it).
func CostOfLog(l *txnindex.Log) Cost {
	if l == nil {
		return Cost{Counted: true}
	}
	return CostOf(&input.Contents{Partitions: []*input.Partition{{Log: l}}})
}

// isPartitionDir reports whether path is one <topic>-<partition> directory
// holding segments (not what kfake.DataDir writes): what segment windows
// and a lazy listing of one partition read.
func isPartitionDir(path string) bool {
	if _, _, _, err := loader.ParsePartitionDir(filepath.Base(filepath.Clean(path))); err != nil {
		return false
	}
	return loader.HasLogFile(path) && !loader.IsKfakeDir(path)
}

// fileBytes adds up the sizes of the regular files under path (symlinks
// are not followed), stopping once past limit.
func fileBytes(path string, limit int64) (int64, error) {
	var total int64
	errOver := errors.New("over")
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			total += info.Size()
		}
		if total > limit {
			return errOver
		}
		return nil
	})
	if errors.Is(err, errOver) {
		err = nil
	}
	return total, err
}
