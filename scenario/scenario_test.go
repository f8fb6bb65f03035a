package scenario

import (
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

func verdicts(l *txnindex.Log, o txnindex.ConsumeOptions) []string {
	var out []string
	for d := range l.Decisions(o) {
		out = append(out, d.Verdict.String()+":"+d.Cause.String())
	}
	return out
}

// TestDemosRoundTrip: every embedded scenario builds a partition directory
// that the loader reads back with no damage and no .txnindex mismatch, to
// the same batches and the same decisions; and kgo.ProcessFetchPartition
// reads the same records out of each segment's bytes.
func TestDemosRoundTrip(t *testing.T) {
	demos, err := Demos()
	if err != nil {
		t.Fatal(err)
	}
	if len(demos) < 5 {
		t.Fatalf("%d demos", len(demos))
	}
	for _, s := range demos {
		t.Run(s.Name, func(t *testing.T) {
			b, err := s.Build()
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := b.WriteDir(dir); err != nil {
				t.Fatal(err)
			}
			p, err := loader.OpenPartition(filepath.Join(dir, b.Dir))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Damage) != 0 {
				t.Fatalf("damage: %v", p.Damage)
			}
			l := p.Build()
			// The files hold the index the statements imply, but
			// where "lose txnindex" left one out: the built log,
			// marked the same way, finds the same differences.
			if len(l.Mismatches) != len(b.Log.Mismatches) {
				t.Errorf("txnindex mismatches: %+v, built %+v", l.Mismatches, b.Log.Mismatches)
			}
			for i := range min(len(l.Mismatches), len(b.Log.Mismatches)) {
				if m, w := l.Mismatches[i], b.Log.Mismatches[i]; m.Kind != w.Kind || m.Rebuilt != w.Rebuilt || m.Explanation != w.Explanation {
					t.Errorf("mismatch %d: %+v, built %+v", i, m, w)
				}
			}
			if len(l.Batches) != len(b.Log.Batches) {
				t.Fatalf("%d batches loaded, %d built", len(l.Batches), len(b.Log.Batches))
			}
			for i := range l.Batches {
				if l.Batches[i] != b.Log.Batches[i] {
					t.Errorf("batch %d:\nloaded %+v\nbuilt  %+v", i, l.Batches[i], b.Log.Batches[i])
				}
			}
			if l.LastStableOffset != b.Log.LastStableOffset || l.HighWatermark != b.Log.HighWatermark {
				t.Errorf("LSO %d/%d HWM %d/%d", l.LastStableOffset, b.Log.LastStableOffset, l.HighWatermark, b.Log.HighWatermark)
			}
			for _, from := range append([]int64{-1}, s.Seeks...) {
				o := txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}
				if got, want := verdicts(l, o), verdicts(b.Log, o); !slices.Equal(got, want) {
					t.Errorf("from %d: loaded %v\nbuilt %v", from, got, want)
				}
			}
			// A rolled segment's .timeindex ends with its largest
			// timestamp and the offset of the batch that first had it
			// (LogSegment.onBecomeInactiveSegment), which a seeded load
			// reads for the segments it skips.
			for i, seg := range p.Segments[:len(p.Segments)-1] {
				want := loader.TimeIndexEntry{Timestamp: -1}
				for _, bt := range seg.Log.Batches {
					if bt.MaxTimestamp > want.Timestamp {
						want = loader.TimeIndexEntry{Timestamp: bt.MaxTimestamp, Offset: bt.LastOffset()}
					}
				}
				if ti := seg.TimeIndex; ti == nil || len(ti.Entries) == 0 || ti.Entries[len(ti.Entries)-1] != want {
					t.Errorf("segment %d (%s): .timeindex %+v does not end with %+v", i, seg.Log.Name, ti, want)
				}
			}
			for i, seg := range p.Segments {
				data, err := os.ReadFile(filepath.Join(dir, b.Dir, seg.Log.Name))
				if err != nil {
					t.Fatal(err)
				}
				rp := &kmsg.FetchResponseTopicPartition{HighWatermark: l.HighWatermark, RecordBatches: data}
				fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: s.Topic, Offset: 0, KeepControlRecords: true}, rp, kgo.DefaultDecompressor(), nil)
				if fp.Err != nil {
					t.Fatalf("segment %d: %v", i, fp.Err)
				}
				var want []int64
				for _, bt := range seg.Log.Batches {
					for o := bt.BaseOffset; o <= bt.LastOffset(); o++ {
						want = append(want, o)
					}
				}
				var got []int64
				for _, r := range fp.Records {
					got = append(got, r.Offset)
				}
				if !slices.Equal(got, want) {
					t.Errorf("segment %d: kgo read %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestGrammarErrors(t *testing.T) {
	cases := []struct{ in, err string }{
		{"producer a transactional\nsend b", "scenario: t.txn:2:6: unknown producer \"b\" (declare it with \"producer b transactional\")"},
		{"producer a transactional\nsend a 0", "scenario: t.txn:2:8: want 1 to 10000 records, found 0"},
		{"frobnicate", "scenario: t.txn:1:1: unknown statement \"frobnicate\" (want title, topic, producer, begin, send, commit, abort, plain, roll, gap, bump, wait, seek, retain, hwm or lose)"},
		{"lose", "scenario: t.txn:1:5: want \"lose txnindex\""},
		{"lose index", "scenario: t.txn:1:6: want \"txnindex\" (the one file a lost copy of a segment leaves out that changes what consumers receive), found \"index\""},
		{"producer a sometimes", "scenario: t.txn:1:12: want \"transactional\" or \"idempotent\", found \"sometimes\""},
		{"  topic t partition x", "scenario: t.txn:1:21: want a partition number (a non-negative integer), found \"x\""},
		{"producer i idempotent\ncommit i", "scenario: t.txn:2:8: producer \"i\" is idempotent: only transactional producers commit"},
		{"producer i idempotent tv2", "scenario: t.txn:1:23: producer \"i\" is idempotent: tv2 (transactions v2) is for transactional producers"},
		{"producer a transactional epoch 32767", "scenario: t.txn:1:32: want an epoch from 0 to 32766, found 32767"},
		{"producer a transactional tv2 colour 3", "scenario: t.txn:1:30: want \"tv2\", \"id\" or \"epoch\", found \"colour\""},
	}
	for _, tc := range cases {
		_, err := Parse(strings.NewReader(tc.in), "t.txn")
		if err == nil || err.Error() != tc.err {
			t.Errorf("%q:\n got %v\nwant %s", tc.in, err, tc.err)
		}
	}
	s, err := Parse(strings.NewReader("producer a transactional\nsend a"), "t.txn")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(); err == nil || err.Error() != "scenario: t.txn:2:1: transactional producer \"a\" sends outside a transaction (add \"begin a\")" {
		t.Errorf("build: %v", err)
	}
}

// FuzzParse: any text parses or fails with a positioned error, and what
// parses builds without panicking.
func FuzzParse(f *testing.F) {
	ents, _ := demoFiles.ReadDir("demos")
	for _, e := range ents {
		b, _ := demoFiles.ReadFile("demos/" + e.Name())
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(strings.NewReader(in), "fuzz")
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error type %T", err)
			}
			return
		}
		total := int64(0)
		for _, op := range s.Ops {
			if op.Kind == OpSend || op.Kind == OpPlain || op.Kind == OpGap {
				total += op.N
			}
		}
		if total > 1<<20 {
			return // keep fuzz runs small
		}
		s.Build()
	})
}
