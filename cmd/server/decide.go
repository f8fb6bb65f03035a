package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

func runDecide(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "decide", "[flags] PATH | --demo NAME",
		"Print, for every offset, what a consumer receives and why.\nNDJSON has one object per offset, in offset order; gaps are objects with \"decision\":\"gap\" and a from/to range.")
	var (
		topic     = fs.String("topic", "", "only this topic")
		partition = fs.Int("partition", -1, "only this partition")
		isoFlag   = fs.String("isolation", "read_committed", "read_committed or read_uncommitted")
		from      = fs.Int64("from", -1, "consumer position (seek); -1 = log start offset")
		maxBytes  = fs.Int("max-bytes", txnindex.DefaultMaxBytes, "max.partition.fetch.bytes of the emulated fetches")
		format    = fs.String("format", "text", "text or ndjson")
		variant   = fs.String("variant", "java", "consumer rules: java, librdkafka or franz-go")
		demo      = fs.String("demo", "", "decide a built-in demo scenario instead of PATH")
		counts    = fs.Bool("counts", false, "print only the record counts (delivered, aborted, markers, pending, missing offsets) instead of every offset")
		rangeFlag = fs.String("range", "", "with --counts: the offsets FROM-TO to count (default: the whole partition)")
	)
	if err := parse(fs, args); err != nil {
		return err
	}
	iso, err := txnindex.ParseIsolation(*isoFlag)
	if err != nil {
		return usagef("--isolation: %v", err)
	}
	v, err := txnindex.ParseVariant(*variant)
	if err != nil {
		return usagef("--variant: %v", err)
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
	parts, err := sourceParts(e, fs, *demo)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	defer w.Flush()
	opts := txnindex.ConsumeOptions{From: *from, Isolation: iso, Variant: v, MaxBytes: int32(*maxBytes)}
	matched := false
	for _, p := range parts {
		l := p.Log
		if (*topic != "" && l.Topic != *topic) || (*partition >= 0 && int(l.Partition) != *partition) {
			continue
		}
		matched = true
		if *counts {
			err = writeCounts(w, l, p.Decisions(opts), *format, cFrom, cTo)
		} else if *format == "ndjson" {
			err = writeNDJSON(ctx, w, l, p.Decisions(opts))
		} else {
			fmt.Fprintf(w, "# %s\n# %s\n", l, p.Describe(opts))
			err = writeText(ctx, w, p.Decisions(opts))
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

// sourceParts builds the partitions a subcommand works on: a demo, or a PATH.
// Problems met while loading go to stderr; what was read is still used.
func sourceParts(e *env, fs interface {
	NArg() int
	Arg(int) string
}, demo string) ([]*input.Partition, error) {
	switch {
	case demo != "" && fs.NArg() > 0:
		return nil, usagef("give either --demo or PATH, not both")
	case demo != "":
		d, err := findDemo(demo)
		if err != nil {
			return nil, err
		}
		return []*input.Partition{{Log: txnindex.Build(d.Partition())}}, nil
	case fs.NArg() != 1:
		return nil, usagef("want exactly one PATH (or --demo NAME), got %d arguments", fs.NArg())
	}
	ld, err := input.Open(fs.Arg(0))
	if err != nil {
		return nil, err
	}
	for _, p := range ld.Problems {
		fmt.Fprintf(e.stderr, "warning: %v\n", p)
	}
	return ld.Partitions, nil
}

func writeText(ctx context.Context, w io.Writer, seq iter.Seq[txnindex.Decision]) error {
	for d := range seq {
		if err := ctx.Err(); err != nil {
			return err
		}
		rng := strconv.FormatInt(d.From, 10)
		if d.To != d.From {
			rng += "-" + strconv.FormatInt(d.To, 10)
		}
		if _, err := fmt.Fprintf(w, "%-15s %-15s %s\n", rng, d.Verdict, d.Reason()); err != nil {
			return err
		}
	}
	return nil
}

// writeNDJSON writes one object per offset. Fields that are the same for a
// whole batch are encoded once per decision and repeated per offset.
func writeNDJSON(ctx context.Context, w io.Writer, l *txnindex.Log, seq iter.Seq[txnindex.Decision]) error {
	topic, _ := json.Marshal(l.Topic)
	var line []byte
	for d := range seq {
		if err := ctx.Err(); err != nil {
			return err
		}
		reason, _ := json.Marshal(d.Reason())
		if d.Batch == nil {
			line = append(line[:0], `{"topic":`...)
			line = append(line, topic...)
			line = append(line, `,"partition":`...)
			line = strconv.AppendInt(line, int64(l.Partition), 10)
			line = append(line, `,"from":`...)
			line = strconv.AppendInt(line, d.From, 10)
			line = append(line, `,"to":`...)
			line = strconv.AppendInt(line, d.To, 10)
			line = append(line, `,"decision":"gap","cause":"`...)
			line = append(line, d.Cause.String()...)
			line = append(line, `","reason":`...)
			line = append(line, reason...)
			line = append(line, "}\n"...)
			if _, err := w.Write(line); err != nil {
				return err
			}
			continue
		}
		b := d.Batch
		var tail []byte
		tail = append(tail, `,"batch_base_offset":`...)
		tail = strconv.AppendInt(tail, b.BaseOffset, 10)
		tail = append(tail, `,"batch_last_offset":`...)
		tail = strconv.AppendInt(tail, b.LastOffset(), 10)
		tail = append(tail, `,"producer_id":`...)
		tail = strconv.AppendInt(tail, int64(b.ProducerID), 10)
		tail = append(tail, `,"producer_epoch":`...)
		tail = strconv.AppendInt(tail, int64(b.ProducerEpoch), 10)
		tail = append(tail, `,"transactional":`...)
		tail = strconv.AppendBool(tail, b.IsTransactional())
		tail = append(tail, `,"control":`...)
		switch {
		case b.IsCommitMarker():
			tail = append(tail, `"COMMIT"`...)
		case b.IsAbortMarker():
			tail = append(tail, `"ABORT"`...)
		case b.IsControl():
			tail = append(tail, '"')
			tail = append(tail, b.Control().String()...)
			tail = append(tail, '"')
		default:
			tail = append(tail, "null"...)
		}
		tail = append(tail, `,"decision":"`...)
		tail = append(tail, d.Verdict.String()...)
		tail = append(tail, `","cause":"`...)
		tail = append(tail, d.Cause.String()...)
		tail = append(tail, `","read_uncommitted":"`...)
		tail = append(tail, d.Uncommitted.String()...)
		tail = append(tail, `","segment":`...)
		seg := ""
		if s := b.Segment; s >= 0 && int(s) < len(l.Segments) {
			seg = l.Segments[s].Name
		}
		segJSON, _ := json.Marshal(seg)
		tail = append(tail, segJSON...)
		tail = append(tail, `,"fetch_offset":`...)
		tail = strconv.AppendInt(tail, d.FetchOffset, 10)
		tail = append(tail, `,"reason":`...)
		tail = append(tail, reason...)
		tail = append(tail, "}\n"...)
		for off := d.From; off <= d.To; off++ {
			line = append(line[:0], `{"topic":`...)
			line = append(line, topic...)
			line = append(line, `,"partition":`...)
			line = strconv.AppendInt(line, int64(l.Partition), 10)
			line = append(line, `,"offset":`...)
			line = strconv.AppendInt(line, off, 10)
			line = append(line, tail...)
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
	}
	return nil
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

// writeCounts prints the record counts of [from, to] (the whole log when
// from is -1): the answer to "how many real records are in this range"
// that HWM - LWM arithmetic gets wrong on transactional topics.
func writeCounts(w io.Writer, l *txnindex.Log, seq iter.Seq[txnindex.Decision], format string, from, to int64) error {
	if from < 0 {
		from, to = l.LogStartOffset, l.LogEndOffset-1
	}
	c := txnindex.NewCounts(from, to)
	for d := range seq {
		c.Add(&d)
	}
	if format == "ndjson" {
		b, err := json.Marshal(struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			txnindex.Counts
			Records int64 `json:"records"`
		}{l.Topic, l.Partition, c, c.Records()})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	_, err := fmt.Fprintf(w, "%s-%d offsets %d-%d: %d records in %d batches\n"+
		"  delivered        %d\n  aborted          %d\n  control markers  %d\n  pending          %d\n  before position  %d\n"+
		"  offsets without a record  %d\n  last offset the consumer passes  %d\n",
		l.Topic, l.Partition, c.From, c.To, c.Records(), c.Batches,
		c.Delivered, c.Aborted, c.ControlMarkers, c.Pending, c.BeforePosition, c.Missing, c.LastReached)
	return err
}
