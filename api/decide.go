package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"

	"github.com/txnscope/txnscope/txnindex"
)

// The text outputs of `txnscope decide` (docs/cli.md, "decide"); its NDJSON is
// WriteOffsetsNDJSON (ndjson.go).

// WriteDecisionsText writes one line per decision: the offsets, the
// verdict and the reason.
//
// The decisions below the consumer's position come as one line: they are
// all before_position for the same reason, and a position near the end of
// a production partition had millions of them (one per batch).
func WriteDecisionsText(ctx context.Context, w io.Writer, seq iter.Seq[txnindex.Decision]) error {
	var below *txnindex.Decision // the run of before_position decisions not yet written
	line := func(d *txnindex.Decision, from int64) error {
		rng := strconv.FormatInt(from, 10)
		if d.To != from {
			rng += "-" + strconv.FormatInt(d.To, 10)
		}
		_, err := fmt.Fprintf(w, "%-15s %-15s %s\n", rng, d.Verdict, d.Reason())
		return err
	}
	var belowFrom int64
	for d := range seq {
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.Verdict == txnindex.BeforePosition {
			if below == nil {
				belowFrom = d.From
			}
			below = &d
			continue
		}
		if below != nil {
			if err := line(below, belowFrom); err != nil {
				return err
			}
			below = nil
		}
		if err := line(&d, d.From); err != nil {
			return err
		}
	}
	if below != nil {
		return line(below, belowFrom)
	}
	return nil
}

// FromPosition is seq as `txnscope decide --from pos` writes it: one
// before_position range for the offsets from the log start to pos-1, then
// the decisions of the offsets from pos on. A consumer at pos never sees
// what lies below it, and a partition read for it from a producer snapshot
// (loader.OpenPartitionTail with the position) holds only part of that:
// the output is the same whichever load it came from. The engine splits a
// batch across pos; a gap across it is cut there too (where such a gap
// begins depends on what was read: the offsets below a seeded replay's
// start are not a gap). A pos at or below the log start leaves seq as it
// is.
func FromPosition(l *txnindex.Log, seq iter.Seq[txnindex.Decision], pos int64) iter.Seq[txnindex.Decision] {
	return FromPositionOf(l.LogStartOffset, l.LogEndOffset, seq, pos)
}

// FromPositionOf is FromPosition for the decisions of a partition known by
// its offsets (logStart to logEnd-1), not one log: a partition decided a
// segment at a time.
func FromPositionOf(logStart, logEnd int64, seq iter.Seq[txnindex.Decision], pos int64) iter.Seq[txnindex.Decision] {
	if pos <= logStart {
		return seq
	}
	return func(yield func(txnindex.Decision) bool) {
		for _, d := range fromPosition(logStart, logEnd, pos, func(yield func(*txnindex.Log, *txnindex.Decision) bool) {
			for d := range seq {
				if !yield(nil, &d) {
					return
				}
			}
		}, nil) {
			if !yield(*d) {
				return
			}
		}
	}
}

// FromPositionWindows is FromPositionOf over decisions that each come with
// the log of the segment window they were decided in (see
// WriteWindowsOffsetsNDJSON). The before_position range goes with the log
// of the first decision at or past pos; where there is none (pos at or
// past the log end), with last's.
func FromPositionWindows(logStart, logEnd int64, seq iter.Seq2[*txnindex.Log, *txnindex.Decision], pos int64, last func() *txnindex.Log) iter.Seq2[*txnindex.Log, *txnindex.Decision] {
	if pos <= logStart {
		return seq
	}
	return fromPosition(logStart, logEnd, pos, seq, last)
}

func fromPosition(logStart, logEnd, pos int64, seq iter.Seq2[*txnindex.Log, *txnindex.Decision], last func() *txnindex.Log) iter.Seq2[*txnindex.Log, *txnindex.Decision] {
	below := txnindex.Decision{From: logStart, To: min(pos, logEnd) - 1, Verdict: txnindex.BeforePosition,
		Uncommitted: txnindex.BeforePosition, Cause: txnindex.CauseBelowPosition, Bound: pos}
	return func(yield func(*txnindex.Log, *txnindex.Decision) bool) {
		started := false
		for l, d := range seq {
			if d.To < pos {
				continue
			}
			if !started {
				started = true
				b := below
				if !yield(l, &b) {
					return
				}
			}
			c := *d
			c.From = max(c.From, pos)
			if !yield(l, &c) {
				return
			}
		}
		if !started && below.To >= below.From {
			var l *txnindex.Log
			if last != nil {
				l = last()
			}
			yield(l, &below)
		}
	}
}

// WriteCounts writes the record counts of the offsets [from, to] of l (the
// whole log when from is -1), as NDJSON or as text: the answer to "how many
// real records are in this range" that HWM - LWM arithmetic gets wrong on
// transactional topics.
func WriteCounts(w io.Writer, l *txnindex.Log, seq iter.Seq[txnindex.Decision], ndjson bool, from, to int64) error {
	return WriteCountsOf(w, l.Topic, l.Partition, l.LogStartOffset, l.LogEndOffset, seq, ndjson, from, to)
}

// WriteCountsOf is WriteCounts for the decisions of a partition known by
// its name and offsets (logStart to logEnd-1), not one log: a partition
// decided a segment at a time.
func WriteCountsOf(w io.Writer, topic string, partition int32, logStart, logEnd int64, seq iter.Seq[txnindex.Decision], ndjson bool, from, to int64) error {
	if from < 0 {
		from, to = logStart, logEnd-1
	}
	c := txnindex.NewCounts(from, to)
	for d := range seq {
		c.Add(&d)
	}
	if ndjson {
		b, err := json.Marshal(struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			txnindex.Counts
			Records int64 `json:"records"`
		}{topic, partition, c, c.Records()})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	n := txnindex.Count
	// No offset of the range reached: every one is pending, below the
	// position or without a record.
	reached := "none"
	if c.LastReached >= 0 {
		reached = fmt.Sprint(c.LastReached)
	}
	// One column for the values, after the longest label.
	_, err := fmt.Fprintf(w, "%s-%d offsets %d-%d: %s in %s\n"+
		"  delivered                        %s\n"+
		"  aborted                          %s\n"+
		"  control markers                  %s\n"+
		"  pending                          %s\n"+
		"  before position                  %s\n"+
		"  offsets without a record         %s\n"+
		"  last offset the consumer passes  %s\n",
		topic, partition, c.From, c.To, txnindex.Plural(c.Records(), "record", "records"), txnindex.Plural(c.Batches, "batch", "batches"),
		n(c.Delivered), n(c.Aborted), n(c.ControlMarkers), n(c.Pending), n(c.BeforePosition), n(c.Missing), reached)
	return err
}
