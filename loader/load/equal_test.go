package load

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestEveryPathAnswersAsTheWholeLoad: whichever path the one source takes
// for a question, the answer is the whole load's. On the generator's
// partitions (transactions spanning segments, a hanging one, one begun
// before the log start, retention-deleted segments): a Tail question at
// positions across the log (read from a producer snapshot at or below
// it) gives the whole load's LSO and open transactions and, word for
// word, its decisions from the position; and a question over the memory
// budget, taken a segment window at a time, gives every decision of the
// whole load.
func TestEveryPathAnswersAsTheWholeLoad(t *testing.T) {
	ctx := context.Background()
	const seg = 32 << 10
	seeded, compared := 0, 0
	for _, o := range []gen.LogOptions{
		{Seed: 1, HangingFrom: seg / 2},
		{Seed: 2, HangingFrom: -1},
		{Seed: 4, OldTxn: true, OldTxnLateWrite: true, DeleteSegments: 2, HangingFrom: -1},
	} {
		o.SegmentBytes, o.BatchBytes, o.TotalBytes = seg, 512, 8*seg
		st, err := gen.WriteLog(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := Open(ctx, st.Dir, Question{Kind: Whole, Position: -1}, Budget{})
		if err != nil {
			t.Fatal(err)
		}
		fl := whole.Contents.Partitions[0].Log
		for _, p := range []int64{fl.LogStartOffset + (fl.LogEndOffset-fl.LogStartOffset)/3, fl.LastStableOffset, fl.LogEndOffset - 5} {
			tail, err := Open(ctx, st.Dir, Question{Kind: Tail, Position: p, Reasons: true}, Budget{})
			if err != nil {
				t.Fatal(err)
			}
			tl := tail.Contents.Partitions[0].Log
			if tail.Plan.Path != ReadTail || tl.Replay == nil {
				t.Fatalf("seed %d, position %d: path %v, replay %+v", o.Seed, p, tail.Plan.Path, tl.Replay)
			}
			if tl.Replay.Mode == txnindex.ReplaySnapshot {
				seeded++
			}
			if tl.LastStableOffset != fl.LastStableOffset || fmt.Sprint(openTxns(tl)) != fmt.Sprint(openTxns(fl)) {
				t.Errorf("seed %d, position %d (%s): LSO %d, open %v; whole load %d, %v", o.Seed, p, present.ReplayLine(tl.Replay), tl.LastStableOffset, openTxns(tl), fl.LastStableOffset, openTxns(fl))
			}
			co := txnindex.ConsumeOptions{From: p, Isolation: txnindex.ReadCommitted}
			a, b := words(fl, co), words(tl, co)
			compared += len(b)
			if !slices.Equal(a, b) {
				t.Fatalf("seed %d, position %d (%s): %d decisions, the whole load's %d; first:\n%v\n%v", o.Seed, p, present.ReplayLine(tl.Replay), len(b), len(a), first(b), first(a))
			}
		}
		// Over the budget: a segment window at a time.
		q := Question{Kind: Whole, Position: -1, Segments: true, Windows: windowsFor(1 << 20)}
		by, err := Open(ctx, st.Dir, q, Budget{MaxMemory: 2 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if by.Plan.Path != ReadBySegment || by.Store == nil || by.Plan.Why == "" {
			t.Fatalf("seed %d: over the budget: %v %q", o.Seed, by.Plan.Path, by.Plan.Why)
		}
		co := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}
		var got []string
		err = by.Store.Decisions(ctx, math.MinInt64, math.MaxInt64, co, func(_ *segsum.Window, d *txnindex.Decision) bool {
			got = append(got, word(*d))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		compared += len(got)
		if want := words(fl, co); !slices.Equal(got, want) {
			t.Fatalf("seed %d: %d decisions by segment, the whole load's %d; first:\n%v\n%v", o.Seed, len(got), len(want), first(got), first(want))
		}
	}
	if seeded < 3 {
		t.Errorf("%d tails seeded from a snapshot: the generator's partitions do not exercise it", seeded)
	}
	t.Logf("%d tails seeded from a snapshot, %d decisions compared", seeded, compared)
}

func openTxns(l *txnindex.Log) []string {
	var out []string
	for _, i := range l.Open {
		out = append(out, fmt.Sprintf("%d@%d", l.Txns[i].ProducerID, l.Txns[i].FirstOffset))
	}
	return out
}

func word(d txnindex.Decision) string {
	return fmt.Sprintf("%d-%d %v/%v %v@%d: %s", d.From, d.To, d.Verdict, d.Uncommitted, d.Cause, d.Bound, d.Reason())
}

func words(l *txnindex.Log, o txnindex.ConsumeOptions) []string {
	var out []string
	for d := range api.FromPosition(l, l.Decisions(o), o.From) {
		out = append(out, word(d))
	}
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return s[0]
}

// windowsFor reads windows as decide --by-segment does.
func windowsFor(maxMemory int64) segsum.Options {
	return segsum.Options{Scan: loader.DefaultScanOptions, MaxMemory: maxMemory}
}
