package loader_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestOpenPartitionTailSpan: between the first offset of the oldest
// transaction open in the snapshot and the snapshot's offset, a seeded load
// keeps only the batches of the producers whose transaction is open there
// (from that transaction's first offset), and the diagnosis still equals the
// full replay's. A mark of the log cleaner in that span (here the KIP-534
// delete horizon on a batch the span would pass over) makes it read the span
// whole, as a full replay counts the mark as compaction evidence.
func TestOpenPartitionTailSpan(t *testing.T) {
	const seg = 64 << 10
	write := func(t *testing.T) *gen.LogStats {
		st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: seg, BatchBytes: 1024, TotalBytes: 9 * seg, HangingFrom: seg * 7 / 2})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	open := func(t *testing.T, st *gen.LogStats) (full, tail *loader.Partition) {
		full, err := loader.OpenPartition(st.Dir)
		if err != nil {
			t.Fatal(err)
		}
		tail, err = loader.OpenPartitionTail(context.Background(), st.Dir, loader.DefaultScanOptions, loader.TailOptions{Position: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(full.Damage)+len(tail.Damage) > 0 {
			t.Fatalf("damage: %v %v", full.Damage, tail.Damage)
		}
		return full, tail
	}

	t.Run("open transactions only", func(t *testing.T) {
		st := write(t)
		full, tail := open(t, st)
		r := tail.Input.Replay
		if r.Mode != txnindex.ReplaySnapshot || r.EveryBatchFrom <= r.FromOffset || r.FromOffset > st.HangingFirstOffset || !slices.Contains(r.SpanProducers, 9000) {
			t.Fatalf("replay %+v: want a span from at most the hanging transaction's first offset %d, kept for producer 9000", r, st.HangingFirstOffset)
		}
		kept, passed := 0, 0
		for _, b := range full.Input.Batches {
			if b.BaseOffset >= r.FromOffset && b.BaseOffset < r.EveryBatchFrom {
				passed++
			}
		}
		for _, b := range tail.Input.Batches {
			if b.BaseOffset >= r.EveryBatchFrom {
				break
			}
			kept++
			passed--
			if !slices.Contains(r.SpanProducers, b.ProducerID) {
				t.Fatalf("batch at offset %d of producer %d kept before offset %d, want only those of %v", b.BaseOffset, b.ProducerID, r.EveryBatchFrom, r.SpanProducers)
			}
		}
		if kept == 0 || passed <= kept {
			t.Errorf("%d batches kept in the span, %d passed over: want the open transactions' few kept", kept, passed)
		}
		if !strings.Contains(present.ReplayLine(r), "only the batches of producer") {
			t.Errorf("the replay line does not say what was kept: %s", present.ReplayLine(r))
		}
		if want, got := diagnoseJSON(t, full), diagnoseJSON(t, tail); want != got {
			t.Fatalf("differs from the full replay:\nfull:\n%s\nseeded:\n%s", want, got)
		}
		// The newest write covers the batches passed over too.
		var newest int64
		for _, b := range full.Input.Batches {
			newest = max(newest, b.MaxTimestamp)
		}
		if r.SkippedMaxTimestamp <= 0 || r.SkippedMaxTimestamp > newest {
			t.Errorf("skipped max timestamp %d, want positive and at most the newest %d", r.SkippedMaxTimestamp, newest)
		}
	})

	t.Run("cleaner's mark in the span", func(t *testing.T) {
		st := write(t)
		_, tail := open(t, st)
		r := tail.Input.Replay
		if r.EveryBatchFrom == 0 {
			t.Fatalf("replay %+v: no span to mark", r)
		}
		// Mark the first batch the span passes over: a producer not kept.
		marked := int64(-1)
		for _, name := range st.Segments {
			path := filepath.Join(st.Dir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for pos := 0; pos+61 <= len(b) && marked < 0; pos += 12 + int(binary.BigEndian.Uint32(b[pos+8:])) {
				base := int64(binary.BigEndian.Uint64(b[pos:]))
				pid := txnindex.ProducerID(binary.BigEndian.Uint64(b[pos+43:]))
				if base < r.FromOffset || base >= r.EveryBatchFrom || slices.Contains(r.SpanProducers, pid) {
					continue
				}
				n := 12 + int(binary.BigEndian.Uint32(b[pos+8:]))
				binary.BigEndian.PutUint16(b[pos+21:], binary.BigEndian.Uint16(b[pos+21:])|txnindex.AttrDeleteHorizon)
				binary.BigEndian.PutUint32(b[pos+17:], crc32.Checksum(b[pos+21:pos+n], crc32.MakeTable(crc32.Castagnoli)))
				marked = base
			}
			if marked >= 0 {
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		if marked < 0 {
			t.Fatal("no batch in the span to mark")
		}
		full, tail := open(t, st)
		r = tail.Input.Replay
		if r.Mode != txnindex.ReplaySnapshot || r.EveryBatchFrom != 0 || r.FromOffset > marked {
			t.Fatalf("replay %+v: want the span from offset %d read whole", r, marked)
		}
		now := time.UnixMilli(gen.Start + 3_600_000*24)
		fd := present.Diagnose(full.Build(), diagnosis.Options{Now: now, Position: -1})
		td := present.Diagnose(tail.Build(), diagnosis.Options{Now: now, Position: -1})
		if td.Compaction == nil || !strings.Contains(strings.Join(td.Compaction.Evidence, " "), "delete horizon") {
			t.Fatalf("the seeded diagnosis does not count the mark at offset %d: %+v", marked, td.Compaction)
		}
		fd.Compaction, td.Compaction, fd.Replay, td.Replay = nil, nil, nil, nil
		fd.ClientDepartures, td.ClientDepartures = nil, nil // they cover the batches read
		a, _ := json.MarshalIndent(fd, "", " ")
		c, _ := json.MarshalIndent(td, "", " ")
		if string(a) != string(c) {
			t.Errorf("beyond the compaction evidence, the seeded diagnosis differs from the full replay:\nfull:\n%s\nseeded:\n%s", a, c)
		}
	})
}
