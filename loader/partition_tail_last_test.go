package loader_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario/gen"
)

// TestOpenPartitionTailLastSegment: the read the log directory's index
// ranks partitions by (TailOptions.LastSegment, batch headers only) reads
// the last segment alone when the broker's snapshot of the last roll is
// there, whether a transaction open in it began one segment or the whole
// log before, or before the log start; a snapshot written at the log end
// (a clean shutdown) is passed over for it; a copy without .timeindex
// files reads no more. Its LSO, high watermark, lag and open transactions'
// first offsets are the full load's.
func TestOpenPartitionTailLastSegment(t *testing.T) {
	const seg = 64 << 10
	cases := []struct {
		name string
		o    gen.LogOptions
		// atEnd adds the snapshot a clean shutdown writes at the log end;
		// untimed removes every .timeindex.
		atEnd, untimed bool
		read           int // segments read; 0: every one, a full replay
	}{
		{"hanging in last two", gen.LogOptions{}, false, false, 1},
		{"hanging in last four", gen.LogOptions{HangingFrom: seg * 7 / 2}, false, false, 1},
		{"no hanging", gen.LogOptions{HangingFrom: -1, Seed: 3}, false, false, 1},
		{"began before log start", gen.LogOptions{OldTxn: true, DeleteSegments: 2, Seed: 5}, false, false, 1},
		{"began before log start, data survives", gen.LogOptions{OldTxn: true, OldTxnLateWrite: true, DeleteSegments: 2, Seed: 7}, false, false, 1},
		{"open since the first segment", gen.LogOptions{OldTxn: true, Seed: 9}, false, false, 1},
		{"snapshot at the log end", gen.LogOptions{}, true, false, 1},
		{"no .timeindex", gen.LogOptions{}, false, true, 1},
		{"no snapshots", gen.LogOptions{NoSnapshots: true}, false, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.SegmentBytes, o.BatchBytes, o.TotalBytes = seg, 1024, 9*seg
			st, err := gen.WriteLog(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			if tc.untimed {
				ts, _ := filepath.Glob(filepath.Join(st.Dir, "*.timeindex"))
				for _, f := range ts {
					if err := os.Remove(f); err != nil {
						t.Fatal(err)
					}
				}
			}
			full, err := loader.OpenPartition(st.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.atEnd {
				// The producer state at the log end, as a clean shutdown
				// writes it (ProducerStateManager.takeSnapshot): the
				// transactions still open.
				l := full.Build()
				var ents []loader.SnapshotEntry
				for _, ti := range l.Open {
					tx := l.Txns[ti]
					ents = append(ents, loader.SnapshotEntry{ProducerID: tx.ProducerID, Epoch: tx.ProducerEpoch, LastOffset: tx.LastDataOffset,
						Timestamp: tx.LastTimestamp, CoordinatorEpoch: -1, CurrentTxnFirstOffset: tx.FirstOffset})
				}
				name := filepath.Join(st.Dir, fmt.Sprintf("%020d.snapshot", l.LogEndOffset))
				if err := os.WriteFile(name, loader.AppendProducerSnapshot(nil, ents), 0o644); err != nil {
					t.Fatal(err)
				}
				if full, err = loader.OpenPartition(st.Dir); err != nil {
					t.Fatal(err)
				}
			}
			tail, err := loader.OpenPartitionTail(context.Background(), st.Dir, loader.HeaderScanOptions, loader.TailOptions{Position: -1, LastSegment: true})
			if err != nil {
				t.Fatal(err)
			}
			r := tail.Input.Replay
			switch {
			case tc.read == 0 && r.Seeded():
				t.Fatalf("replay %+v, want every segment read", r)
			case tc.read > 0 && (!r.Seeded() || r.SegmentsRead != tc.read || r.Segments != len(st.Segments) || r.EveryBatchFrom != 0):
				t.Fatalf("replay %+v, want %d of %d segments read from the snapshot", r, tc.read, len(st.Segments))
			case tc.read > 0 && r.Snapshot != fmt.Sprintf("%020d.snapshot", r.FromOffset):
				t.Errorf("seeded from %s, reading from offset %d: want the snapshot of the last roll", r.Snapshot, r.FromOffset)
			case tc.atEnd && !strings.Contains(r.SnapshotPassed, "past the last segment's base offset"):
				t.Errorf("the snapshot at the log end was passed over for no reason said: %+v", r)
			case tc.untimed && r.SkippedMaxTimestamp != -1:
				t.Errorf("skipped max timestamp %d without a .timeindex", r.SkippedMaxTimestamp)
			case tc.read > 0 && !tc.untimed && r.SkippedMaxTimestamp < gen.Start:
				t.Errorf("skipped max timestamp %d: the .timeindex files give it", r.SkippedMaxTimestamp)
			}
			o2 := diagnosis.Options{Now: time.UnixMilli(gen.Start + 3_600_000*24), Position: -1}
			want, got := diagnosis.Diagnose(full.Build(), o2), diagnosis.Diagnose(tail.Build(), o2)
			if got.LastStableOffset != want.LastStableOffset || got.HighWatermark != want.HighWatermark || got.LSOLagOffsets != want.LSOLagOffsets {
				t.Errorf("LSO %d HWM %d lag %d, full load %d %d %d", got.LastStableOffset, got.HighWatermark, got.LSOLagOffsets,
					want.LastStableOffset, want.HighWatermark, want.LSOLagOffsets)
			}
			if a, b := openTxns(got), openTxns(want); !slices.Equal(a, b) {
				t.Errorf("open transactions %v, full load %v", a, b)
			}
			if (got.PinnedBy == nil) != (want.PinnedBy == nil) || got.PinnedBy != nil && (got.PinnedBy.ProducerID != want.PinnedBy.ProducerID || got.PinnedBy.FirstOffset != want.PinnedBy.FirstOffset) {
				t.Errorf("pinned by %+v, full load %+v", got.PinnedBy, want.PinnedBy)
			}
			if o.HangingFrom >= 0 && !slices.Contains(openTxns(want), fmt.Sprintf("9000@%d", st.HangingFirstOffset)) {
				t.Errorf("the hanging transaction is not open in the full load: %v", openTxns(want))
			}
		})
	}
}

func openTxns(d *diagnosis.Diagnosis) []string {
	var out []string
	for _, o := range d.OpenTransactions {
		out = append(out, fmt.Sprintf("%d@%d", o.ProducerID, o.FirstOffset))
	}
	slices.Sort(out)
	return out
}

// TestLastSegmentRefusesAPosition: the offsets from a position must all be
// decided, which a read from the last segment's snapshot cannot promise.
func TestLastSegmentRefusesAPosition(t *testing.T) {
	_, err := loader.OpenPartitionTail(context.Background(), t.TempDir(), loader.DefaultScanOptions, loader.TailOptions{Position: 0, LastSegment: true})
	if err == nil || !strings.Contains(err.Error(), "answers no position") {
		t.Fatalf("err = %v, want the refusal of a position", err)
	}
}
