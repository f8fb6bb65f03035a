package load

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/scenario/gen"
)

// TestAtSnapshotIsTheStateAtItsOffset: the producer state at a snapshot
// is what the whole load says held at its offset: the transactions begun
// before it and not closed by a marker below it are open, with their first
// offsets, and the LSO is the first of them (its offset when none), on the
// generator's partitions whose every transaction the whole load sees begin
// (a hanging one; one begun with the first batch that never ends); every
// producer of the snapshot is one of the state's.
func TestAtSnapshotIsTheStateAtItsOffset(t *testing.T) {
	ctx := context.Background()
	checked, open := 0, 0
	for _, o := range []gen.LogOptions{
		{Seed: 1, HangingFrom: 48 << 10},
		{Seed: 4, OldTxn: true, OldTxnLateWrite: true, HangingFrom: -1},
	} {
		o.SegmentBytes, o.BatchBytes, o.TotalBytes = 32<<10, 512, 8*32<<10
		st, err := gen.WriteLog(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := Open(ctx, st.Dir, Question{Kind: Whole, Position: -1}, Budget{})
		if err != nil {
			t.Fatal(err)
		}
		fl := whole.Contents.Partitions[0].Log
		snaps, _ := filepath.Glob(filepath.Join(st.Dir, "*.snapshot"))
		for _, path := range snaps {
			in, err := Open(ctx, path, Question{Kind: AtSnapshot, Position: -1}, Budget{})
			if err != nil {
				t.Fatal(err)
			}
			if in.Plan.Path != ReadSnapshot || len(in.Contents.Problems) != 0 || len(in.Contents.Partitions) != 1 {
				t.Fatalf("%s: %v, problems %v", path, in.Plan.Path, in.Contents.Problems)
			}
			l := in.Contents.Partitions[0].Log
			at := l.HighWatermark
			var want []string
			lso := at
			for _, x := range fl.Txns {
				if x.FirstOffset < at && (x.MarkerOffset < 0 || x.MarkerOffset >= at) {
					want = append(want, fmt.Sprintf("%d@%d", x.ProducerID, x.FirstOffset))
					lso = min(lso, x.FirstOffset)
				}
			}
			lso = max(lso, fl.LogStartOffset)
			got := openTxns(l)
			slices.Sort(want)
			slices.Sort(got)
			if fmt.Sprint(got) != fmt.Sprint(want) || l.LastStableOffset != lso || l.LogEndOffset != at || len(l.Batches) != 0 {
				t.Errorf("%s: open %v, LSO %d, log end %d; the whole load at offset %d: open %v, LSO %d", filepath.Base(path), got, l.LastStableOffset, l.LogEndOffset, at, want, lso)
			}
			if len(want) > 0 {
				open++
			}
			if len(l.Producers) == 0 {
				t.Errorf("%s: no producer", path)
			}
			checked++
		}
	}
	if checked < 8 || open < checked/2 {
		t.Fatalf("%d snapshots checked, %d with a transaction open: too few to test the state", checked, open)
	}
	t.Logf("%d snapshots checked, %d with a transaction open", checked, open)
}

// TestAtSnapshotSaysWhatTheBrokerLoadsInstead: a snapshot the broker
// would not load (damaged; a stray one it deletes on startup) gives the
// state of the one it loads instead, the problems saying why; a name
// without an offset is an error.
func TestAtSnapshotSaysWhatTheBrokerLoadsInstead(t *testing.T) {
	ctx := context.Background()
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{Seed: 1, SegmentBytes: 32 << 10, BatchBytes: 512, TotalBytes: 6 * 32 << 10, HangingFrom: 48 << 10})
	if err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(st.Dir, "*.snapshot"))
	if len(snaps) < 3 {
		t.Fatalf("snapshots %v", snaps)
	}
	newest, older := snaps[len(snaps)-1], snaps[len(snaps)-2]
	b, err := os.ReadFile(newest)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(newest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A stray: no segment begins at its offset, and it is not the newest.
	stray := filepath.Join(st.Dir, "00000000000000000003.snapshot")
	good, err := os.ReadFile(older)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, good, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, from string
		problems   []string
	}{
		{newest, filepath.Base(older), []string{"bad CRC", "the broker loads the producer state at offset"}},
		{stray, "", []string{"a stray snapshot", "the broker loads no producer state at or below offset 3"}},
	} {
		in, err := Open(ctx, c.path, Question{Kind: AtSnapshot, Position: -1}, Budget{})
		if err != nil {
			t.Fatal(err)
		}
		var problems []string
		for _, p := range in.Contents.Problems {
			problems = append(problems, p.Error())
		}
		for _, w := range c.problems {
			if !strings.Contains(strings.Join(problems, "\n"), w) {
				t.Errorf("%s: problems %q, want one saying %q", filepath.Base(c.path), problems, w)
			}
		}
		switch {
		case c.from == "" && len(in.Contents.Partitions) != 0:
			t.Errorf("%s: a state from %s", filepath.Base(c.path), in.Contents.Partitions[0].Log.HighWatermarkSource)
		case c.from != "" && (len(in.Contents.Partitions) != 1 || in.Contents.Partitions[0].Log.HighWatermarkSource != "the producer snapshot "+c.from):
			t.Errorf("%s: %d partitions, want the state of %s", filepath.Base(c.path), len(in.Contents.Partitions), c.from)
		}
	}
	misnamed := filepath.Join(t.TempDir(), "orders.snapshot")
	if err := os.WriteFile(misnamed, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, misnamed, Question{Kind: AtSnapshot, Position: -1}, Budget{}); err == nil || !strings.Contains(err.Error(), "<20 digits>.snapshot") {
		t.Errorf("misnamed: %v", err)
	}
}
