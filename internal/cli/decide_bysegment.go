package cli

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/txnindex"
)

// bySegmentCache is the most the windows of a one-pass decide by segment
// keep: each is used once, in order, so a larger cache only holds garbage
// the collector must mark and memory that must be touched (on the 7.6 GiB
// partition, --counts took 8.7 s with 1 GiB of --max-memory, 18.8 s with
// 4 GiB; with 256 MiB, less than a window and its scan, the collector ran
// without end: 17.6 s).
const bySegmentCache = 1 << 30

// bySegmentOptions is how decideBySegment's windows are read (load
// Question.Windows): seeded with what their decisions read only
// (segsum.Options.DecisionsOnly), so that transactions left open early
// in the partition are not replayed again in every later window.
func bySegmentOptions(maxMemory int64) segsum.Options {
	return segsum.Options{Scan: loader.DefaultScanOptions, MaxMemory: min(maxMemory, bySegmentCache), DecisionsOnly: true}
}

// segQuery is what decide asks of a partition directory: every offset,
// those below from folded into one before_position range (from -1: none),
// or the counts of [countFrom, countTo] (-1, -1: the whole partition).
type segQuery struct{ from, countFrom, countTo int64 }

// decideBySegment writes the decisions of the partition directory dir a
// segment window at a time (segsum.Store.Decisions), the windows least
// recently used first out under maxMemory, with the collector held to it
// too: the output is the whole load's (TestDecideBySegmentEqualsWholeLoad).
// Only the windows of the segments q needs are scanned (the offsets from
// q.from on, or the counted range), after a header scan of every segment
// for their summaries. st is the partition's windows, opened with
// bySegmentOptions (load.Open).
func decideBySegment(ctx context.Context, e *env, dir string, opts txnindex.ConsumeOptions, ndjson, counts bool, q segQuery, st *segsum.Store) error {
	ov, err := st.Overview(ctx)
	if err != nil {
		return err
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch {
	case counts && q.countFrom >= 0:
		lo, hi = q.countFrom, q.countTo
	case !counts && q.from >= 0:
		lo = q.from
	}
	var serr error
	seq := func(yield func(*txnindex.Log, *txnindex.Decision) bool) {
		serr = st.Decisions(ctx, lo, hi, opts, func(w *segsum.Window, d *txnindex.Decision) bool {
			return yield(w.Log, d)
		})
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	defer w.Flush()
	values := func(yield func(txnindex.Decision) bool) {
		for _, d := range seq {
			if !yield(*d) {
				return
			}
		}
	}
	switch {
	case counts:
		err = api.WriteCountsOf(w, ov.Topic, ov.Partition, ov.LogStartOffset, ov.LogEndOffset, values, ndjson, q.countFrom, q.countTo)
	case ndjson:
		// The before_position range of a --from at or past the log end
		// has no window's log to go with: the partition's name is all
		// its line needs.
		named := func() *txnindex.Log {
			return &txnindex.Log{Topic: ov.Topic, Partition: ov.Partition, LogStartOffset: ov.LogStartOffset, LogEndOffset: ov.LogEndOffset}
		}
		err = api.WriteWindowsOffsetsNDJSON(ctx, w, api.FromPositionWindows(ov.LogStartOffset, ov.LogEndOffset, seq, q.from, named),
			func(ctx context.Context, l *txnindex.Log, b *txnindex.Batch, p api.RecordPageRequest) (api.RecordPage, error) {
				lp, _, err := st.RecordsPage(ctx, l, b, loader.PageLimits{From: p.From, Limit: p.Limit, MaxBytes: p.MaxBytes})
				return api.LoaderPage(lp), err
			})
	default:
		fmt.Fprintf(w, "# %s: decided a segment at a time (--by-segment)\n# %s\n", filepath.Base(dir), input.DescribeConsumer(opts))
		err = api.WriteDecisionsText(ctx, w, api.FromPositionOf(ov.LogStartOffset, ov.LogEndOffset, values, q.from))
	}
	if err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	return w.Flush()
}
