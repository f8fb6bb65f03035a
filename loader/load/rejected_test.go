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
	"github.com/txnscope/txnscope/txnindex"
)

// TestRefusedTxnIndexVersionOnEveryPath: a .txnindex holding an entry
// whose version Kafka refuses (its first byte above 0) stops the broker's
// startup, whichever segment it belongs to: LogSegment.sanityCheck reads
// every segment's. Each path of the one source says so for the same
// files, also the tail that never reads the segment's batches; and each
// decides as the broker that starts once those segments are recovered,
// their .txnindex rebuilt.
func TestRefusedTxnIndexVersionOnEveryPath(t *testing.T) {
	ctx := context.Background()
	const seg = 32 << 10
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{Seed: 1, HangingFrom: -1, SegmentBytes: seg, BatchBytes: 512, TotalBytes: 8 * seg})
	if err != nil {
		t.Fatal(err)
	}
	clean, err := Open(ctx, st.Dir, Question{Kind: Whole, Position: -1}, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	cl := clean.Contents.Partitions[0].Log
	// The first segment's file and the second-to-last one's, after an
	// entry Kafka reads: one the tail skips, one it reads.
	var refused []txnindex.RejectedTxnIndex
	for _, si := range []int{0, len(cl.Segments) - 2} {
		s := cl.Segments[si]
		if len(s.TxnIndex) < 2 {
			t.Fatalf("segment %s lists %d aborted transactions: the generator's log does not exercise it", s.Name, len(s.TxnIndex))
		}
		path := filepath.Join(st.Dir, s.TxnIndexName())
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		at := int64(0)
		if si > 0 {
			at = txnindex.AbortedTxnSize
		}
		b[at] = 3
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		refused = append(refused, txnindex.RejectedTxnIndex{File: s.TxnIndexName(), RejectedEntry: txnindex.RejectedEntry{Position: at, Version: 3}})
	}
	want := fmt.Sprint(refused)
	co := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}

	whole, err := Open(ctx, st.Dir, Question{Kind: Whole, Position: -1}, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	wl := whole.Contents.Partitions[0].Log
	if got := fmt.Sprint(wl.RejectedTxnIndexes()); got != want {
		t.Errorf("whole load: refused %s, want %s", got, want)
	}
	if !slices.Equal(words(wl, co), words(cl, co)) {
		t.Errorf("whole load: the decisions differ from those of the recovered segments' rebuilt indexes")
	}
	if n := problemsNaming(whole.Contents.Problems, "a broker fails to start with this file"); n != 2 {
		t.Errorf("whole load: %d problems say a broker fails to start, want 2: %v", n, whole.Contents.Problems)
	}

	tail, err := Open(ctx, st.Dir, Question{Kind: Tail, Position: -1}, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	tl := tail.Contents.Partitions[0].Log
	if tl.Replay == nil || tl.Replay.Mode != txnindex.ReplaySnapshot || tl.Replay.FromOffset <= cl.Segments[0].BaseOffset {
		t.Fatalf("tail: replay %+v; want one seeded past the first segment", tl.Replay)
	}
	if got := fmt.Sprint(tl.RejectedTxnIndexes()); got != want {
		t.Errorf("tail: refused %s, want %s", got, want)
	}
	if a, b := len(tail.Contents.Problems), len(whole.Contents.Problems); a != b {
		t.Errorf("tail: %d problems, the whole load %d: %v", a, b, tail.Contents.Problems)
	}

	by, err := Open(ctx, st.Dir, Question{Kind: Whole, Position: -1, Segments: true, Windows: windowsFor(1 << 20)}, Budget{MaxMemory: 2 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := by.Store.Summaries(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := by.Store.Window(ctx, len(cl.Segments)-1, co)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(w.Log.RejectedTxnIndexes()); got != want {
		t.Errorf("the last segment's window: refused %s, want %s", got, want)
	}
}

func problemsNaming(ps []error, s string) int {
	n := 0
	for _, p := range ps {
		if strings.Contains(p.Error(), s) {
			n++
		}
	}
	return n
}
