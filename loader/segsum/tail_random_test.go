package segsum

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestRandomTailEqualsFullReplay: on the random partitions (transactions
// spanning rolls, transactions v2 markers, the cleaner's holes, overlapping
// segments, retention leaving transactions open in the .snapshot only, a
// high watermark below the log end), the diagnosis of `diagnose` read from the producer snapshot
// (loader.OpenPartitionTail), with no position and with consumer positions
// for the lag split, equals the full replay's, but for what only the
// segments not read show: the cleaner's marks (CompactionReport.Scope),
// their .txnindex differences (the read: line says they were not read) and
// their transactions whose marker the cleaner removed (decided, holding
// nothing: compacted_transactions).
func TestRandomTailEqualsFullReplay(t *testing.T) {
	seeded, positions, spans, passed := 0, 0, 0, 0
	n := 0
	for i, seed := range randomSeeds {
		// Half of them (3 loads each keep it to seconds under -race),
		// and a quarter again without the cleaner's gaps: a gap in a
		// span makes the seeded load read it whole (spanScan).
		if i%4 == 3 {
			continue
		}
		n++
		dir, text := randomPartitionWith(t, seed, randomOptions{overlapSegments: true, noGaps: i%4 == 1})
		full, err := loader.OpenPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		fl := full.Build()
		r := rand.New(rand.NewPCG(seed, 7))
		pos := []int64{-1, fl.LastStableOffset, fl.LogStartOffset + r.Int64N(max(fl.LogEndOffset-fl.LogStartOffset, 0)+2)}
		for _, p := range pos {
			tail, err := loader.OpenPartitionTail(context.Background(), dir, loader.DefaultScanOptions, loader.TailOptions{Position: p})
			if err != nil {
				t.Fatal(err)
			}
			tl := tail.Build()
			if tl.Replay.Mode == txnindex.ReplaySnapshot {
				seeded++
				if p >= 0 {
					positions++
				}
				if tl.Replay.EveryBatchFrom > 0 {
					spans++
				}
				if tl.Replay.SnapshotPassed != "" {
					passed++
				}
			}
			o := diagnosis.Options{Now: time.UnixMilli(1_767_225_600_000 + 86_400_000), Position: p}
			fd, td := diagnosis.Diagnose(fl, o), diagnosis.Diagnose(tl, o)
			fd.Replay, td.Replay = nil, nil
			fd.ClientDepartures, td.ClientDepartures = nil, nil // they cover the batches read
			if tl.Replay.Mode == txnindex.ReplaySnapshot {
				fd.Compaction, td.Compaction = nil, nil
				fd.TxnIndexMismatches, td.TxnIndexMismatches = nil, nil
				fd.TxnIndexMismatchesTotal, td.TxnIndexMismatchesTotal = 0, 0
				// A transaction of the segments not read whose marker
				// the cleaner removed: the full replay leaves it open
				// and lists it as decided by the broker; the snapshot
				// the seeded load starts from (the broker's state) has
				// it closed, so it is not there at all.
				n := len(fd.MarkerRemoved)
				fd.MarkerRemoved = slices.DeleteFunc(fd.MarkerRemoved, func(r diagnosis.OpenTxnReport) bool { return r.FirstOffset < tl.Replay.FromOffset })
				fd.MarkerRemovedTotal -= n - len(fd.MarkerRemoved)
			}
			a, _ := json.MarshalIndent(fd, "", " ")
			b, _ := json.MarshalIndent(td, "", " ")
			if string(a) != string(b) {
				t.Fatalf("seed %d, position %d (%s):\nfull:\n%s\nseeded:\n%s\nscenario:\n%s", seed, p, present.ReplayLine(tl.Replay), a, b, text)
			}
		}
	}
	t.Logf("%d partitions, %d seeded loads (%d with a position, %d keeping only the open transactions' batches before some offset, %d from a snapshot older than the newest, which is past the high watermark or the log end)", n, seeded, positions, spans, passed)
	if seeded < n/2 || positions == 0 || spans == 0 {
		t.Errorf("%d seeded loads, %d with a position, %d with a span: the random partitions do not exercise the seeded load", seeded, positions, spans)
	}
}

// TestRandomDecideFromEqualsFullReplay: on the random partitions, what
// `decide --from P` writes from a load seeded at or below P (TailOptions
// .Reasons) equals the full replay's, decision by decision and word for
// word, under both isolations and every consumer's rules.
func TestRandomDecideFromEqualsFullReplay(t *testing.T) {
	seeded, loads := 0, 0
	words := func(l *txnindex.Log, o txnindex.ConsumeOptions, reasons bool) []string {
		var out []string
		for d := range api.FromPosition(l, l.Decisions(o), o.From) {
			s := fmt.Sprintf("%d-%d %v/%v %v@%d", d.From, d.To, d.Verdict, d.Uncommitted, d.Cause, d.Bound)
			if reasons {
				s += ": " + d.Reason()
			}
			out = append(out, s)
		}
		return out
	}
	compared, damaged := 0, 0
	for i, seed := range randomSeeds {
		if i%3 != 0 {
			continue // a third of them keeps it to seconds under -race
		}
		dir, text := randomPartitionWith(t, seed, randomOptions{overlapSegments: true, noGaps: i%2 == 1})
		full, err := loader.OpenPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		fl := full.Build()
		r := rand.New(rand.NewPCG(seed, 11))
		span := max(fl.LogEndOffset-fl.LogStartOffset, 0) + 2
		for _, p := range []int64{fl.LogStartOffset + r.Int64N(span), fl.LogEndOffset - r.Int64N(span)/4, fl.LastStableOffset} {
			if p <= fl.LogStartOffset {
				continue
			}
			tl := seededAt(t, dir, p)
			loads++
			if tl.Replay.Mode == txnindex.ReplaySnapshot {
				seeded++
				if damagedBelow(full, tl) {
					damaged++
					continue
				}
			}
			o := randomConsumer(r, p)
			// A segment the cleaner emptied lost its markers with its
			// batches: the full replay of what survives can run a
			// producer's transactions together (from the first one's
			// start to a later marker) where the snapshot, the broker's
			// state, knows where the open one began. The verdicts agree;
			// the words naming a transaction's range may not.
			reasons := !strings.Contains(text, "cleaned (all batches: true)")
			if reasons {
				compared++
			}
			a, b := words(fl, o, reasons), words(tl, o, reasons)
			if !slices.Equal(a, b) {
				for k := range min(len(a), len(b)) {
					if a[k] != b[k] {
						t.Fatalf("seed %d, %+v (%s): decision %d differs:\nfull:   %s\nseeded: %s\nscenario:\n%s", seed, o, present.ReplayLine(tl.Replay), k, a[k], b[k], text)
					}
				}
				t.Fatalf("seed %d, %+v (%s): %d decisions, full replay %d\nscenario:\n%s", seed, o, present.ReplayLine(tl.Replay), len(b), len(a), text)
			}
		}
	}
	t.Logf("%d loads, %d seeded (%d not compared: damage below the seed), %d compared with their reasons", loads, seeded, damaged, compared)
	if seeded < loads/4 || compared < loads/2 {
		t.Errorf("%d of %d loads seeded: the random partitions do not exercise the seeded load", seeded, loads)
	}
}

// TestRandomCountsRangeEqualsFullReplay: decide --counts --range F-T reads
// a partition from a producer snapshot at or below F (loader.TailOptions
// Position F, with Reasons) and counts the decisions of a consumer at
// max(position, F). Below the range the position cannot change a verdict
// in it: every fetch's aborted list holds each aborted transaction its
// offsets overlap (the broker's collectAbortedTxns), whatever offset the
// consumer fetched from before, so a consumer at the log start and one at
// F see the same records of [F, T]. The oracle is the full load's counts
// for the consumer at the position itself, under every isolation, rule set
// and fetch size.
func TestRandomCountsRangeEqualsFullReplay(t *testing.T) {
	loads, seeded, damaged, nonzero := 0, 0, 0, 0
	for i, seed := range randomSeeds {
		if i%2 != 0 {
			continue
		}
		dir, text := randomPartitionWith(t, seed, randomOptions{overlapSegments: true, noGaps: i%4 == 2})
		full, err := loader.OpenPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		fl := full.Build()
		r := rand.New(rand.NewPCG(seed, 13))
		span := max(fl.LogEndOffset-fl.LogStartOffset, 0) + 2
		for range 3 {
			from := fl.LogStartOffset + r.Int64N(span)
			to := from + r.Int64N(span)
			pos := []int64{-1, fl.LogStartOffset + r.Int64N(span), from, from + r.Int64N(to-from+1)}[r.IntN(4)]
			o := randomConsumer(r, pos)
			want := txnindex.NewCounts(from, to)
			for d := range fl.Decisions(o) {
				want.Add(&d)
			}
			tl := seededAt(t, dir, from)
			loads++
			if tl.Replay.Mode == txnindex.ReplaySnapshot {
				seeded++
				if damagedBelow(full, tl) {
					damaged++
					continue
				}
			}
			to2 := o
			to2.From = max(pos, from)
			got := txnindex.NewCounts(from, to)
			for d := range tl.Decisions(to2) {
				got.Add(&d)
			}
			if got != want {
				t.Fatalf("seed %d, [%d,%d] %+v (%s):\ntail %+v\nfull %+v\nscenario:\n%s", seed, from, to, o, present.ReplayLine(tl.Replay), got, want, text)
			}
			if want.Records() > 0 {
				nonzero++
			}
		}
	}
	t.Logf("%d loads, %d seeded (%d not compared: damage below the seed), %d ranges holding records", loads, seeded, damaged, nonzero)
	if seeded < loads/4 || nonzero < loads/2 {
		t.Errorf("%d of %d loads seeded, %d ranges holding records: the random ranges miss the case", seeded, loads, nonzero)
	}
}

// seededAt is the log decide --from p reads of dir: from a producer
// snapshot at or below p, every transaction open at p named.
func seededAt(t *testing.T, dir string, p int64) *txnindex.Log {
	t.Helper()
	tail, err := loader.OpenPartitionTail(context.Background(), dir, loader.DefaultScanOptions, loader.TailOptions{Position: p, Reasons: true})
	if err != nil {
		t.Fatal(err)
	}
	return tail.Build()
}

// damagedBelow reports damage in a segment the seeded load tl did not
// read (a copy of batches renamed so that the offsets go backwards: the
// full load reads that segment only up to it). That is the snapshot's to
// know: like the broker, the seeded load trusts it, and the full replay of
// what survives can run a producer's transactions together across the
// markers it did not read, so the two are not compared.
func damagedBelow(full *loader.Partition, tl *txnindex.Log) bool {
	return slices.ContainsFunc(full.Damage, func(e *loader.FormatError) bool {
		base, err := strconv.ParseInt(strings.TrimSuffix(e.File, ".log"), 10, 64)
		return err == nil && base < tl.Replay.FromOffset
	})
}

// randomConsumer is a consumer at from drawn from r: either isolation,
// any variant's rules, 1 MiB or 2,000-byte fetches.
func randomConsumer(r *rand.Rand, from int64) txnindex.ConsumeOptions {
	variants := txnindex.Variants
	return txnindex.ConsumeOptions{From: from, Isolation: txnindex.Isolation(r.IntN(2)), Variant: variants[r.IntN(len(variants))], MaxBytes: []int32{txnindex.DefaultMaxBytes, 2000}[r.IntN(2)]}
}
