package segsum

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/txnscope/txnscope/loader"
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
			o := txnindex.DiagnoseOptions{Now: time.UnixMilli(1_767_225_600_000 + 86_400_000), Position: p}
			fd, td := fl.Diagnose(o), tl.Diagnose(o)
			fd.Replay, td.Replay = nil, nil
			if tl.Replay.Mode == txnindex.ReplaySnapshot {
				fd.Compaction, td.Compaction = nil, nil
				fd.TxnIndexMismatches, td.TxnIndexMismatches = nil, nil
				// A transaction of the segments not read whose marker
				// the cleaner removed: the full replay leaves it open
				// and lists it as decided by the broker; the snapshot
				// the seeded load starts from (the broker's state) has
				// it closed, so it is not there at all.
				fd.MarkerRemoved = slices.DeleteFunc(fd.MarkerRemoved, func(r txnindex.OpenTxnReport) bool { return r.FirstOffset < tl.Replay.FromOffset })
			}
			a, _ := json.MarshalIndent(fd, "", " ")
			b, _ := json.MarshalIndent(td, "", " ")
			if string(a) != string(b) {
				t.Fatalf("seed %d, position %d (%s):\nfull:\n%s\nseeded:\n%s\nscenario:\n%s", seed, p, tl.Replay.Line(), a, b, text)
			}
		}
	}
	t.Logf("%d partitions, %d seeded loads (%d with a position, %d keeping only the open transactions' batches before some offset, %d from a snapshot older than the newest, which is past the high watermark or the log end)", n, seeded, positions, spans, passed)
	if seeded < n/2 || positions == 0 || spans == 0 {
		t.Errorf("%d seeded loads, %d with a position, %d with a span: the random partitions do not exercise the seeded load", seeded, positions, spans)
	}
}
