package segsum

import (
	"context"
	"fmt"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestWindowRecordsEqualFullLoad: every batch of every segment's window
// decodes, from its segment file, to the records a full load of the
// partition decodes for it (offsets, keys, values), page by page as the
// batch API asks; a log the Store did not build is refused (ok false), as
// is a batch whose bytes are not the scanned batch.
func TestWindowRecordsEqualFullLoad(t *testing.T) {
	dir := genPartition(t, gen.LogOptions{SegmentBytes: 16 << 10, BatchBytes: 300, TotalBytes: 64 << 10, Seed: 4, Keyed: true})
	full, err := loader.OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{Scan: loader.HeaderScanOptions, Cache: NewCache(1 << 30)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	byOffset := map[int64]int{}
	for i, b := range full.Input.Batches {
		byOffset[b.BaseOffset] = i
	}
	sums, _, err := s.Summaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k := range sums {
		w, err := s.Window(ctx, k, txnindex.ConsumeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range w.Log.Batches {
			b := &w.Log.Batches[i]
			fb := full.Input.Batches[byOffset[b.BaseOffset]]
			want, err := full.Segments[fb.Segment].Log.Records(fb)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := s.RecordsPage(ctx, w.Log, b, loader.PageLimits{})
			if !ok || err != nil {
				t.Fatalf("segment %d, batch at %d: ok %v, %v", k, b.BaseOffset, ok, err)
			}
			if fmt.Sprint(recs(got.Records)) != fmt.Sprint(recs(want)) || got.Total != len(want) || got.Next != -1 {
				t.Fatalf("segment %d, batch at %d: %v (total %d), the full load %v", k, b.BaseOffset, recs(got.Records), got.Total, recs(want))
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no batch decoded")
	}

	// A log built from the full load is not a window of s.
	fl := txnindex.Build(full.Input)
	if _, ok, _ := s.RecordsPage(ctx, fl, &fl.Batches[0], loader.PageLimits{}); ok {
		t.Error("RecordsPage decoded a batch of a log the Store did not build")
	}
	// A batch moved off its position is not the scanned batch.
	w, err := s.Window(ctx, 0, txnindex.ConsumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	moved := w.Log.Batches[1]
	moved.BaseOffset++
	if _, ok, err := s.RecordsPage(ctx, w.Log, &moved, loader.PageLimits{}); !ok || err == nil {
		t.Errorf("a batch whose bytes are another's decoded: ok %v, err %v", ok, err)
	}
}

type rec struct {
	Offset     int64
	Key, Value string
}

func recs(rs []loader.Record) []rec {
	out := make([]rec, len(rs))
	for i, r := range rs {
		out[i] = rec{r.Offset, string(r.Key), fmt.Sprintf("%x", r.Value)}
	}
	return out
}
