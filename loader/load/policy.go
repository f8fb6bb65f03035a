package load

import (
	"fmt"

	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/txnindex"
)

// Kind is what a question needs read.
type Kind int

// The kinds of question.
const (
	// Whole: every batch of the input.
	Whole Kind = iota
	// Tail: a partition directory of a data topic read from its newest
	// usable producer snapshot (loader.OpenPartitionTail); any other
	// input is read whole.
	Tail
	// Window: a partition directory a segment window at a time
	// (segsum.Store).
	Window
	// AtSnapshot: the producer state the broker loads from a .snapshot
	// file, seeded as every load is (loader.SeedSnapshots): its open
	// transactions and the LSO they pin at its offset.
	AtSnapshot
)

// Question is what is asked of an input.
type Question struct {
	Kind Kind
	// Position is a consumer position whose offsets must all be decided
	// (diagnose --position, decide --from, the start of --counts
	// --range), -1 for none: a Tail question reads from the segment
	// holding it at the latest, and the estimate counts the segments
	// from there. Reasons: the decisions from it are explained, not only
	// counted (loader.TailOptions).
	Position int64
	Reasons  bool
	// Segments: the answer may come a segment window at a time (decide's
	// decisions and counts, the server's pages), so a partition
	// directory over the budget is read so instead of being refused.
	Segments bool
	// LogDir: a log directory is listed, not read (Input.Dir); its
	// partitions are opened one at a time with this question. With
	// Segments, a partition directory over the budget is listed too, as
	// a log directory of one partition (the server draws it by segment).
	LogDir bool
	// Windows is how Open reads segment windows (Input.Store): the scan
	// options, the memory they may take, the cache they share.
	Windows segsum.Options
}

// Budget is what a load may take; a zero field bounds nothing.
type Budget struct {
	// MaxMemory is --max-memory: a load whose cost (Cost.Memory) is more
	// than half of it is read by segment or refused. The other half is
	// the collector's headroom: at the runtime's default pacing the heap
	// grows to twice what is live before it is collected (segsum.Cache).
	MaxMemory int64
	// MaxFileBytes and MaxBatches are serve's --max-source-bytes and
	// --max-source-batches: the most a partition read whole may hold,
	// in bytes of files (checked before a byte is read) and in batches
	// (once read).
	MaxFileBytes int64
	MaxBatches   int64
	// MaxKept is serve --max-upload-memory: the most an upload may keep
	// in memory (Cost.Memory).
	MaxKept int64
	// MaxShared is serve's --max-memory, whose half the partitions
	// opened whole share with the segment windows and the stream's kept
	// encodings: one partition opened whole may keep a quarter of it
	// (OneLoad), and beside its log its own encodings, about as large,
	// take the rest of the half.
	MaxShared int64
}

// OneLoad is the most one load may keep in memory (Cost.Memory) within
// b: half of MaxMemory, a quarter of MaxShared, the smaller when both
// bound it; 0 when neither does.
func (b Budget) OneLoad() int64 {
	switch {
	case b.MaxMemory > 0 && b.MaxShared > 0:
		return min(b.MaxMemory/2, b.MaxShared/4)
	case b.MaxMemory > 0:
		return b.MaxMemory / 2
	}
	return b.MaxShared / 4
}

// Path is the way a question is answered.
type Path int

// The paths.
const (
	ReadWhole     Path = iota // every batch (input.Open)
	ReadTail                  // from the newest usable producer snapshot (loader.OpenPartitionTail)
	ReadBySegment             // a segment window at a time (segsum), or listed for the server to draw so
	ReadLogDir                // a log directory listed, its partitions opened one at a time
	Refused                   // not read: over the budget
	ReadSnapshot              // one producer snapshot's state, no batch read
)

func (p Path) String() string {
	switch p {
	case ReadWhole:
		return "whole"
	case ReadTail:
		return "tail"
	case ReadBySegment:
		return "by segment"
	case ReadLogDir:
		return "log directory"
	case ReadSnapshot:
		return "snapshot"
	}
	return "refused"
}

// Plan is the path Choose takes for a question. Why is the sentence that
// says why the path is not the question's own (a load over the budget),
// in the words the commands print it with; "" when it is.
type Plan struct {
	Path Path
	Why  string
}

// OverBudget is the error of a load the budget does not allow: Plan says
// that it is refused, or which other path answers the question, and why.
type OverBudget struct{ Plan Plan }

func (e *OverBudget) Error() string { return e.Plan.Why }

// Choose is the one policy: the path that answers q about an input of
// cost c within b. A log directory asked with LogDir is listed; a Window
// question is read by segment. Otherwise, a load over a bound of b is
// read by segment when q allows it (Segments) and the input is a
// partition directory, else refused; within b, a Tail question about a
// data partition is read from its tail, and the rest whole.
func Choose(q Question, c Cost, b Budget) Plan {
	switch {
	case q.LogDir && c.LogDir:
		return Plan{Path: ReadLogDir}
	case q.Kind == Window:
		return Plan{Path: ReadBySegment}
	case q.Kind == AtSnapshot:
		return Plan{Path: ReadSnapshot} // a file of 46 bytes a producer, bounded as every snapshot read
	}
	segments := q.Segments && c.Partition
	if why := over(q, c, b, segments); why != "" {
		if segments {
			return Plan{Path: ReadBySegment, Why: why}
		}
		return Plan{Path: Refused, Why: why}
	}
	if q.Kind == Tail && c.Data {
		return Plan{Path: ReadTail}
	}
	return Plan{Path: ReadWhole}
}

// over says which bound of b the load of cost c passes, in the sentence
// the command prints, for the path it then takes (segments: read by
// segment; else refused); "" within b. The memory sentences name the
// input as given (decide and inspect print them on a terminal) and the
// commands that meet them (decide is the one question read by segment
// within --max-memory, inspect's report the one refused); serve's name
// the partition, as its pages never show a path.
func over(q Question, c Cost, b Budget, segments bool) string {
	switch {
	case b.MaxFileBytes > 0 && c.FileBytes > b.MaxFileBytes && segments:
		return fmt.Sprintf("%s holds %s of files, more than --max-source-bytes (%s) allows: not opened in full", c.Name, txnindex.Bytes(c.FileBytes), txnindex.Bytes(b.MaxFileBytes))
	case b.MaxFileBytes > 0 && c.FileBytes > b.MaxFileBytes:
		return fmt.Sprintf("more than %s of files, over --max-source-bytes (%s); raise the limit, or load a partition directory, which is drawn segment by segment when over it", txnindex.Bytes(b.MaxFileBytes), txnindex.Bytes(b.MaxFileBytes))
	case b.MaxBatches > 0 && c.Counted && c.Largest > b.MaxBatches:
		return fmt.Sprintf("%s holds %s, more than --max-source-batches (%s) allows: not opened in full", c.LargestName, txnindex.Plural(int(c.Largest), "batch", "batches"), txnindex.Count(b.MaxBatches))
	case b.MaxKept > 0 && c.Memory() > b.MaxKept:
		return fmt.Sprintf("it holds about %s in memory once decoded, more than serve --max-upload-memory %s allows all uploads together", txnindex.Bytes(c.Memory()), txnindex.Bytes(b.MaxKept))
	case b.MaxShared > 0 && c.Partition && c.Memory() > b.MaxShared/4:
		return fmt.Sprintf("%s holds %s of segments, whose whole load would take about %s, more than one partition opened whole may take (%s, a quarter of --max-memory %s): not opened in full",
			c.Name, txnindex.Bytes(c.SegmentBytes), txnindex.Bytes(c.Memory()), txnindex.Bytes(b.MaxShared/4), txnindex.Bytes(b.MaxShared))
	case b.MaxMemory <= 0 || !c.Partition || c.Memory() <= b.MaxMemory/2:
		// --max-memory bounds a partition directory's load: the one
		// input whose cost is known before it is read (Estimate).
		return ""
	}
	what := "whole load"
	if q.Kind == Tail && q.Position >= 0 {
		what = fmt.Sprintf("load from offset %d on", q.Position)
	}
	if segments {
		return fmt.Sprintf("%s holds %s of segments, whose %s would take about %s, more than half of --max-memory %s: decided a segment at a time (--full-replay loads it whole)",
			c.Path, txnindex.Bytes(c.SegmentBytes), what, txnindex.Bytes(c.Memory()), txnindex.Bytes(b.MaxMemory))
	}
	return fmt.Sprintf("%s: not inspected: it holds %s of segments, whose %s would take about %s, more than half of --max-memory %s; inspect a segment file at a time (inspect %s), raise --max-memory, or read it with diagnose or decide, which stay within it",
		c.Path, txnindex.Bytes(c.SegmentBytes), what, txnindex.Bytes(c.Memory()), txnindex.Bytes(b.MaxMemory), c.LastSegment)
}
