package load

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestCostOfCountsKeptBytesAndBatches: an uploaded segment's cost counts
// its kept bytes and txnindex.LogBytes a decoded batch; a directory read
// from disk keeps no bytes.
func TestCostOfCountsKeptBytesAndBatches(t *testing.T) {
	b, err := os.ReadFile(lsxSegment)
	if err != nil {
		t.Fatal(err)
	}
	in, err := input.OpenBytes("x.log", b)
	if err != nil {
		t.Fatal(err)
	}
	batches := int64(len(in.Partitions[0].Log.Batches))
	if c := CostOf(in); batches == 0 || !c.Counted || c.Batches != batches || c.Memory() != int64(len(b))+txnindex.LogBytes(batches) {
		t.Fatalf("cost %+v, memory %d, want %d bytes and %d batches", c, c.Memory(), len(b), batches)
	}
	d, err := input.Open(ksqlDir)
	if err != nil {
		t.Fatal(err)
	}
	if c, n := CostOf(d), int64(len(d.Partitions[0].Log.Batches)); c.Kept != 0 || c.Memory() != txnindex.LogBytes(n) || c.LargestName != "_confluent-ksql-default__command_topic-0" {
		t.Fatalf("directory: cost %+v for %d batches", c, n)
	}
}

// TestEstimateFromPosition: the estimate of a load from a position counts
// the segments from the one holding it to the end: the whole partition's
// from the log start, one segment's from the last one's base or past the
// end; and its batches, from the mean batch size sampled, near what the
// load then counts. The bytes of segments it names are the partition's.
func TestEstimateFromPosition(t *testing.T) {
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 240 << 10, HangingFrom: -1, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := Budget{MaxMemory: 1 << 30}
	at := func(pos int64) Cost {
		t.Helper()
		q := Question{Kind: Whole, Position: -1}
		if pos != math.MinInt64 {
			q = Question{Kind: Tail, Position: pos}
		}
		c, err := Estimate(ctx, st.Dir, q, b)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	whole := at(math.MinInt64)
	in, err := input.Open(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	counted := CostOf(in)
	if !whole.Partition || !whole.Data || whole.Batches < counted.Batches*4/5 || whole.Batches > counted.Batches*5/4 {
		t.Errorf("whole load estimated at %d batches (%+v), the load counts %d", whole.Batches, whole, counted.Batches)
	}
	segs := in.Dirs[0].Segments
	n := len(segs)
	if n < 8 {
		t.Fatalf("%d segments, want at least 8", n)
	}
	mid, last, past := at(segs[n/2].Log.BaseOffset+1), at(segs[n-1].Log.BaseOffset), at(math.MaxInt64)
	// Whichever budget bounds memory, the estimate is the one.
	if c, err := Estimate(ctx, st.Dir, Question{Kind: Whole, Position: -1}, Budget{MaxShared: 1 << 30}); err != nil || c.Batches != whole.Batches {
		t.Errorf("under serve's --max-memory: %d batches (%v), under decide's %d", c.Batches, err, whole.Batches)
	}
	if at(0).Memory() != whole.Memory() {
		t.Errorf("from offset 0: %d, want the whole load's %d", at(0).Memory(), whole.Memory())
	}
	if !(last.Memory() > 0 && last.Memory() < mid.Memory() && mid.Memory() < whole.Memory()) || past.Memory() != last.Memory() {
		t.Errorf("whole %d, from the middle %d, from the last segment %d, past the end %d: want whole > middle > last = past > 0", whole.Memory(), mid.Memory(), last.Memory(), past.Memory())
	}
	var size int64
	for _, s := range segs {
		size += s.Log.Size
	}
	if last.SegmentBytes != size || whole.SegmentBytes != size || last.LastSegment == "" {
		t.Errorf("from the last segment: %d bytes of segments (whole: %d), last %q; want the partition's %d", last.SegmentBytes, whole.SegmentBytes, last.LastSegment, size)
	}
}
