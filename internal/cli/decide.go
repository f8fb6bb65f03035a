package cli

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/progress"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

func runDecide(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "decide", "[flags] PATH | --demo NAME",
		"Print, for every offset, what a consumer receives and why.\nNDJSON has one object per offset that holds a record, in offset order; offsets without a record (gaps, compaction's holes) are objects with \"decision\":\"gap\" and a from/to range.\nWith --from N, the offsets below N are one before_position object with a from/to range, and a partition directory is read from the newest producer snapshot the answer allows (the segment holding N on), as diagnose reads it; so is one for --counts --range FROM-TO, from the segment holding FROM; --full-replay reads every segment.\nA partition directory whose load would take more than half of --max-memory is decided a segment at a time (--by-segment).")
	var (
		topic     = fs.String("topic", "", "only this topic")
		partition = fs.Int("partition", -1, "only this partition")
		isoFlag   = fs.String("isolation", "read_committed", "read_committed or read_uncommitted")
		from      = fs.Int64("from", -1, "consumer position (seek); -1 = log start offset")
		maxBytes  = intBytesFlag(fs, "max-bytes", txnindex.DefaultMaxBytes, "max.partition.fetch.bytes of the emulated fetches")
		format    = fs.String("format", "text", "text or ndjson")
		variant   = fs.String("variant", "java", "consumer rules: java, librdkafka or franz-go (Kafka's rule), or the clients that depart from it: kafkajs, kafka-go, kafka-python")
		compare   = fs.Bool("compare-variants", false, "one row per offset with every variant's decision, departures from Kafka's rule marked, and the counts per variant")
		eachBatch = fs.Bool("kafkajs-each-batch", false, "with --variant kafkajs: a consumer run with eachBatch (auto-resolve), whose position passes a response's filtered tail, instead of eachMessage")
		jsCodecs  = fs.Bool("kafkajs-codecs", false, "with --variant kafkajs: codec packages registered for snappy, lz4 and zstd (without them a fetch holding such a batch fails)")
		demo      = fs.String("demo", "", "decide a built-in demo scenario instead of PATH")
		counts    = fs.Bool("counts", false, "print only the record counts (delivered, aborted, markers, pending, missing offsets) instead of every offset")
		rangeFlag = fs.String("range", "", "with --counts: the offsets FROM-TO to count (default: the whole partition)")
		full      = fs.Bool("full-replay", false, "load a partition directory whole: with --from, every segment instead of those from a producer snapshot; with --counts, every batch at once instead of a segment at a time; otherwise whole even when that takes more than half of --max-memory")
		bySegment = fs.Bool("by-segment", false, "decide a partition directory a segment at a time, each from the producer state at its start (the timeline's segment windows): the same decisions in memory bounded by --max-memory, whatever the partition's size, only the segments from --from on (or those of --range) decided; the default for a partition directory whose load (whole, or from the segment holding --from or the range's start) would take more than half of --max-memory (--full-replay loads it whole)")
		maxMemory = bytesFlag(fs, "max-memory", segsum.DefaultMaxMemory(), "by segment: the memory the segments decided may take (they hold at most half, the rest is the collector's headroom); default a quarter of this machine's memory")
	)
	if err := parse(fs, args); err != nil {
		return err
	}
	iso, err := txnindex.ParseIsolation(*isoFlag)
	if err != nil {
		// The package's prefix names no flag a user typed.
		return usagef("--isolation: %s", strings.TrimPrefix(err.Error(), "txnindex: "))
	}
	v, err := txnindex.ParseVariant(*variant)
	if err != nil {
		return usagef("--variant: %s", strings.TrimPrefix(err.Error(), "txnindex: "))
	}
	if *format != "text" && *format != "ndjson" {
		return usagef("--format must be text or ndjson, not %q", *format)
	}
	if *maxBytes <= 0 || *maxBytes > 1<<31-1 {
		return usagef("--max-bytes must be between 1 and 2147483647")
	}
	cFrom, cTo, err := parseRange(*rangeFlag)
	if err != nil {
		return err
	}
	if *rangeFlag != "" && !*counts {
		return usagef("--range needs --counts")
	}
	switch {
	case *compare && *bySegment:
		return usagef("--compare-variants decides a whole load, not --by-segment")
	case *compare && *counts:
		return usagef("--compare-variants prints its own counts: not with --counts")
	}
	opts := txnindex.ConsumeOptions{From: *from, Isolation: iso, Variant: v, MaxBytes: int32(*maxBytes), EachBatch: *eachBatch, KafkaJSCodecs: *jsCodecs}
	// The offsets asked for: every one from --from on (the log start
	// when -1), or the counts of --range (the whole partition when none).
	sq := segQuery{from: *from, countFrom: cFrom, countTo: cTo}
	pos := *from
	if *counts {
		pos = cFrom
		opts.From = max(*from, cFrom)
	}
	// What a partition directory is read for (load.Choose): with
	// --by-segment a segment window at a time; else from the segment
	// holding --from or the range's start, as diagnose reads it, or
	// whole. A consumer at --from needs the segments from the one holding
	// it, and the producer state there, as diagnose --position does; so
	// do the counts of a range, from its first offset: no verdict in it
	// depends on the offsets below it, each fetch's aborted list holding
	// every aborted transaction its offsets overlap (the broker's
	// collectAbortedTxns), so they count what a consumer at the range's
	// start is given (TestRandomCountsRangeEqualsFullReplay). The counts
	// of the whole partition read every segment. A load that would take
	// more than half of --max-memory (the rest is the collector's) is
	// decided by segment too; the load is faster where it fits (--counts
	// of 7.6 GiB of 1 KiB batches: 2.8 s whole against 8.7 s by segment).
	q := load.Question{Kind: load.Whole, Position: pos, Reasons: true, Segments: !*compare, Windows: bySegmentOptions(*maxMemory)}
	budget := load.Budget{MaxMemory: *maxMemory}
	switch {
	case *bySegment:
		switch {
		case *demo != "" || fs.NArg() != 1 || !input.DataPartition(fs.Arg(0)):
			return usagef("--by-segment decides one partition directory (<topic>-<partition>, with segments): PATH")
		case *full:
			return usagef("--by-segment and --full-replay: give one")
		case *maxMemory <= 0:
			return usagef("--max-memory must be positive, not %d", *maxMemory)
		}
		q.Kind = load.Window
	case *full || *compare:
		// --compare-variants decides a whole load, each variant over it.
		budget = load.Budget{}
	case pos >= 0:
		q.Kind = load.Tail
	}
	in, err := loadSource(ctx, e, fs, *demo, q, budget)
	if err != nil {
		return err
	}
	if in.Store != nil {
		if in.Plan.Why != "" {
			fmt.Fprintf(e.stderr, "decide: %s\n", in.Plan.Why)
		}
		return decideBySegment(ctx, e, fs.Arg(0), opts, *format == "ndjson", *counts, sq, in.Store)
	}
	ld := in.Contents
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	defer w.Flush()
	matched := false
	for _, p := range ld.Partitions {
		l := p.Log
		if (*topic != "" && l.Topic != *topic) || (*partition >= 0 && int(l.Partition) != *partition) {
			continue
		}
		matched = true
		if p.Fetches != nil && *compare {
			return usagef("--compare-variants decides logs, not the replay of captured fetches")
		}
		switch {
		case *compare:
			err = api.WriteCompare(ctx, w, l, opts, txnindex.Variants, *format == "ndjson")
		case *counts:
			if l.Replay != nil && *format == "text" {
				fmt.Fprintf(w, "# read: %s\n", present.ReplayLine(l.Replay))
			}
			err = api.WriteCounts(w, l, p.Decisions(opts), *format == "ndjson", cFrom, cTo)
		case *format == "ndjson":
			err = api.WriteOffsetsNDJSON(ctx, w, l, api.FromPosition(l, p.Decisions(opts), *from), recordPages(ld, l))
		default:
			fmt.Fprintf(w, "# %s\n# %s\n", l, p.Describe(opts))
			if l.Replay != nil {
				fmt.Fprintf(w, "# read: %s\n", present.ReplayLine(l.Replay))
			}
			err = api.WriteDecisionsText(ctx, w, api.FromPosition(l, p.Decisions(opts), *from))
		}
		if err != nil {
			return err
		}
	}
	if !matched {
		return fmt.Errorf("no partition matches --topic %q --partition %d", *topic, *partition)
	}
	return w.Flush()
}

// recordPages pages the records of l's batches from the files ld read them
// from (as the server's loaderRecords does), nil when ld kept no record
// bytes for l (a capture, dump text, a demo).
func recordPages(ld *input.Contents, l *txnindex.Log) api.BatchPages {
	f := partitionFiles(ld, l)
	if f == nil {
		return nil
	}
	return func(ctx context.Context, b *txnindex.Batch, req api.RecordPageRequest) (api.RecordPage, error) {
		return api.PartitionRecordsPage(ctx, f, b, req)
	}
}

// partitionFiles is the partition directory or segment of ld that l was
// read from, whose files decode l's records; nil if ld kept none.
func partitionFiles(ld *input.Contents, l *txnindex.Log) *loader.Partition {
	return ld.Files(l.Topic, l.Partition)
}

type argLister interface {
	NArg() int
	Arg(int) string
}

// loadSource builds a demo, or opens PATH for q within b (load.Open).
// Problems met while loading go to stderr; what was read is still used.
// The load ends when ctx does (SIGINT, SIGTERM: a load of a big directory
// stops instead of running on). A capture without a Fetch to decide is an
// error that says so, not an empty list that no --topic matches.
func loadSource(ctx context.Context, e *env, fs argLister, demo string, q load.Question, b load.Budget) (*load.Input, error) {
	switch {
	case demo != "" && fs.NArg() > 0:
		return nil, usagef("give either --demo or PATH, not both")
	case demo != "":
		d, err := findDemo(demo)
		if err != nil {
			return nil, err
		}
		return &load.Input{Contents: &input.Contents{Partitions: []*input.Partition{{Log: txnindex.Build(d.Partition())}}}}, nil
	case fs.NArg() != 1:
		return nil, usagef("want exactly one PATH (or --demo NAME), got %d arguments", fs.NArg())
	}
	// A large input takes a while: on a terminal, say so (internal/progress).
	start := time.Now()
	line := progress.Start(e.stderr, progress.Delay, func() string {
		return fmt.Sprintf("reading %s: %s", fs.Arg(0), txnindex.Duration(time.Since(start)))
	})
	in, err := load.Open(ctx, fs.Arg(0), q, b)
	line.Stop("")
	if err != nil {
		return nil, err
	}
	if ld := in.Contents; ld != nil {
		if ld.Capture != nil && len(ld.Partitions) == 0 {
			if err := ld.Capture.NoFetch(); err != nil {
				return nil, err
			}
		}
		for _, p := range ld.Problems {
			fmt.Fprintf(e.stderr, "warning: %v\n", p)
		}
	}
	return in, nil
}

// parseRange reads --range FROM-TO; empty is the whole partition (-1, -1).
func parseRange(s string) (from, to int64, err error) {
	if s == "" {
		return -1, -1, nil
	}
	a, b, ok := strings.Cut(s, "-")
	from, err1 := strconv.ParseInt(a, 10, 64)
	to, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || from < 0 || to < from {
		return 0, 0, usagef("--range %q: want FROM-TO, such as 100-200", s)
	}
	return from, to, nil
}
