package scenario

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// TestScenariosReadCommitted: for every embedded demo, each segment's built
// bytes, cut before the first batch that reaches the LSO (a broker sends
// nothing at or past it), go to kgo.ProcessFetchPartition with
// read_committed, with the aborted list taken from the built .txnindex
// files decoded here (34-byte entries: version, producer id, first offset,
// last offset, LSO; not through txnindex) the way the broker collects it
// (entries overlapping the fetched range), and HighWatermark and
// LastStableOffset as the engine computes them from the built checkpoints.
// What kgo delivers must be what the engine's Decisions deliver.
func TestScenariosReadCommitted(t *testing.T) {
	demos, err := Demos()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range demos {
		t.Run(s.Name, func(t *testing.T) { checkReadCommitted(t, s) })
	}
}

// checkReadCommitted builds s, reads it back with the loader and compares
// the engine's read_committed deliveries with kgo.ProcessFetchPartition's
// (see TestScenariosReadCommitted).
func checkReadCommitted(t *testing.T, s *Scenario) {
	t.Helper()
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	pdir := filepath.Join(dir, b.Dir)
	p, err := loader.OpenPartition(pdir)
	if err != nil {
		t.Fatal(err)
	}
	l := p.Build()

	// Every .txnindex entry, decoded independently.
	var aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction
	var lasts []int64
	ents, _ := os.ReadDir(pdir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".txnindex") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(pdir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if len(data)%34 != 0 {
			t.Fatalf("%s: %d bytes, not whole entries", e.Name(), len(data))
		}
		for o := 0; o < len(data); o += 34 {
			a := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
			a.ProducerID = int64(binary.BigEndian.Uint64(data[o+2:]))
			a.FirstOffset = int64(binary.BigEndian.Uint64(data[o+10:]))
			aborted = append(aborted, a)
			lasts = append(lasts, int64(binary.BigEndian.Uint64(data[o+18:])))
		}
	}

	var got []int64
	for si, seg := range p.Segments {
		data, err := os.ReadFile(filepath.Join(pdir, seg.Log.Name))
		if err != nil {
			t.Fatal(err)
		}
		// Cut before the first batch reaching the LSO, reading the
		// v2 header fields directly: base offset at 0, length at
		// 8, lastOffsetDelta at 23.
		end, first, last := 0, int64(-1), int64(-1)
		for end+61 <= len(data) {
			base := int64(binary.BigEndian.Uint64(data[end:]))
			n := int(binary.BigEndian.Uint32(data[end+8:])) + 12
			lo := base + int64(int32(binary.BigEndian.Uint32(data[end+23:])))
			if lo >= l.LastStableOffset {
				break
			}
			if first < 0 {
				first = base
			}
			last, end = lo, end+n
		}
		if end == 0 {
			continue
		}
		rp := &kmsg.FetchResponseTopicPartition{HighWatermark: l.HighWatermark, LastStableOffset: l.LastStableOffset,
			LogStartOffset: l.LogStartOffset, RecordBatches: data[:end]}
		for i, a := range aborted {
			if lasts[i] >= first && a.FirstOffset <= last {
				rp.AbortedTransactions = append(rp.AbortedTransactions, a)
			}
		}
		fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: s.Topic, Offset: max(first, l.LogStartOffset),
			IsolationLevel: kgo.ReadCommitted()}, rp, kgo.DefaultDecompressor(), nil)
		if fp.Err != nil {
			t.Fatalf("segment %d: %v", si, fp.Err)
		}
		for _, r := range fp.Records {
			got = append(got, r.Offset)
		}
	}
	var want []int64
	for d := range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
		if d.Verdict == txnindex.Delivered {
			for o := d.From; o <= d.To; o++ {
				want = append(want, o)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("kgo read_committed delivered %v\nengine delivered %v", got, want)
	}
	if len(want) == 0 {
		t.Error("nothing delivered: the comparison proves nothing")
	}
}
