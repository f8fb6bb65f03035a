package segsum

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// genPartition writes a broker-shaped partition of small segments (gen.WriteLog)
// and returns its directory.
func genPartition(t testing.TB, o gen.LogOptions) string {
	t.Helper()
	st, err := gen.WriteLog(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	return st.Dir
}

// canon is what a decision says, with its pointers replaced by what they
// point at, so that decisions of two logs compare.
type canon struct {
	From, To, FetchOffset, Bound int64
	Verdict, Uncommitted         txnindex.Verdict
	Cause                        txnindex.Cause
	Abort                        txnindex.AbortedTransaction
	Batch                        int64 // base offset, -1 for a gap
	Segment                      int32 // the batch's segment, -1 for a gap
	BatchIndex                   int32
	Txn                          string
	Entry                        string
	Reason                       string
}

func canonOf(d *txnindex.Decision) canon {
	c := canon{From: d.From, To: d.To, FetchOffset: d.FetchOffset, Bound: d.Bound, Verdict: d.Verdict, Uncommitted: d.Uncommitted,
		Cause: d.Cause, Abort: d.Abort, Batch: -1, Segment: -1, BatchIndex: d.BatchIndex, Reason: d.Reason()}
	if d.Batch != nil {
		c.Batch, c.Segment = d.Batch.BaseOffset, d.Batch.Segment
	}
	if t := d.Txn; t != nil {
		c.Txn = fmt.Sprintf("%d@%d epoch %d %s marker %d, data to %d, %d batches, %d records", t.ProducerID, t.FirstOffset, t.ProducerEpoch, t.State, t.MarkerOffset, t.LastDataOffset, t.Batches, t.Records)
	}
	if a := d.AbortInfo; a != nil {
		c.Entry = fmt.Sprintf("%+v in %s found %v", a.Entry, a.IndexName, a.MarkerFound)
	}
	return c
}

// TestWindowsEqualFullPass: every segment decided alone, from the state at
// its start and the later segments' summaries, gives the decisions a full
// pass over the whole partition gives, for several consumers, on
// partitions whose transactions span segments and whose aborts have their
// marker (and .txnindex entry) in a later segment than some of their data.
func TestWindowsEqualFullPass(t *testing.T) {
	cases := []struct {
		name string
		o    gen.LogOptions
	}{
		{"no hanging transaction", gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 600 << 10, HangingFrom: -1, Seed: 3}},
		{"hanging transaction", gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 600 << 10, Seed: 4}},
		{"retention and an old transaction", gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 600 << 10, HangingFrom: -1,
			DeleteSegments: 3, OldTxn: true, OldTxnLateWrite: true, Seed: 5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := genPartition(t, tc.o)
			p, err := loader.OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			full := p.Build()
			st, err := Open(dir, Options{Scan: loader.DefaultScanOptions, MaxMemory: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			sums, b, err := st.Summaries(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) < 10 {
				t.Fatalf("%d segments; the test wants many", len(sums))
			}
			if want := (Bounds{full.LogStartOffset, full.LogEndOffset, full.HighWatermark, full.LastStableOffset}); b != want {
				t.Fatalf("bounds %+v, full pass %+v", b, want)
			}
			spanning := spanningAborts(full)
			if tc.name != "hanging transaction" && spanning == 0 {
				t.Fatal("no aborted transaction with data in an earlier segment than its marker: the case this test is for")
			}
			mid := full.Batches[len(full.Batches)/2].BaseOffset + 1
			for _, o := range []txnindex.ConsumeOptions{
				{From: -1, Isolation: txnindex.ReadCommitted},
				{From: -1, Isolation: txnindex.ReadUncommitted},
				{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: 3000},
				{From: mid, Isolation: txnindex.ReadCommitted},
				{From: -1, Isolation: txnindex.ReadCommitted, Variant: txnindex.VariantLibrdkafka},
			} {
				var want, got []canon
				for d := range full.Decisions(o) {
					want = append(want, canonOf(&d))
				}
				for k := range sums {
					w, err := st.Window(context.Background(), k, o)
					if err != nil {
						t.Fatal(err)
					}
					for i := range w.Len() {
						got = append(got, canonOf(ptr(w.Decision(i))))
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%+v: %d decisions from the segments, %d from a full pass", o, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%+v: decision %d:\n segments  %+v\n full pass %+v", o, i, got[i], want[i])
					}
				}
			}
			t.Logf("%d segments, %d batches, %d aborted transactions spanning segments", len(sums), len(full.Batches), spanning)
		})
	}
}

// spanningAborts counts the aborted transactions whose data begins in an
// earlier segment than their marker.
func spanningAborts(l *txnindex.Log) int {
	n := 0
	for i := range l.Txns {
		t := &l.Txns[i]
		if t.State == txnindex.TxnAborted && l.SegmentOf(t.FirstOffset) < l.SegmentOf(t.MarkerOffset) {
			n++
		}
	}
	return n
}

// TestSummariesCached: a second Store over the same directory takes every
// summary from the cache file (in the cache directory, nothing written in
// the log dir), and a segment whose file changed is summarised again,
// with every segment after it.
func TestSummariesCached(t *testing.T) {
	dir := genPartition(t, gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 200 << 10, HangingFrom: -1, Seed: 7})
	cache := t.TempDir()
	before := listing(t, dir)
	st, err := Open(dir, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	sums, b1, err := st.Summaries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Fresh() != len(sums) {
		t.Fatalf("first open computed %d of %d summaries", st.Fresh(), len(sums))
	}
	if after := listing(t, dir); after != before {
		t.Fatalf("the log dir changed:\n%s\n%s", before, after)
	}
	st2, err := Open(dir, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	sums2, b2, err := st2.Summaries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	noEntries := func(ss []Summary) string {
		for i := range ss {
			ss[i].Aborted = nil // read back from the .txnindex when needed
		}
		return fmt.Sprint(ss)
	}
	if st2.Fresh() != 0 || st2.Scans() != 0 || b1 != b2 || noEntries(sums) != noEntries(sums2) {
		t.Fatalf("second open computed %d summaries in %d scans; bounds %+v vs %+v", st2.Fresh(), st2.Scans(), b1, b2)
	}
	// Windows of the cached summaries (whose entries are read back from
	// the .txnindex files) decide as those of the computed ones.
	o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}
	for k := range sums {
		w1, err1 := st.Window(context.Background(), k, o)
		w2, err2 := st2.Window(context.Background(), k, o)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if w1.Len() != w2.Len() {
			t.Fatalf("segment %d: %d decisions, %d from the cache", k, w1.Len(), w2.Len())
		}
		for i := range w1.Len() {
			if a, b := canonOf(ptr(w1.Decision(i))), canonOf(ptr(w2.Decision(i))); a != b {
				t.Fatalf("segment %d decision %d:\n %+v\n %+v from the cache", k, i, a, b)
			}
		}
	}
	// A segment file that changed (here its modification time) is
	// summarised again, and so is every one after it.
	k := len(sums) - 3
	when := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, sums[k].Name), when, when); err != nil {
		t.Fatal(err)
	}
	st3, err := Open(dir, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	sums3, b3, err := st3.Summaries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st3.Fresh() != 3 || b3 != b1 || len(sums3) != len(sums) {
		t.Fatalf("after segment %d of %d changed: %d summaries computed, bounds %+v vs %+v", k, len(sums), st3.Fresh(), b3, b1)
	}
}

func listing(t *testing.T, dir string) string {
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(m)
}

// TestPanBoundedMemory pans a viewport across every segment boundary of a
// partition whose scanned segments together hold many times the budget:
// the LRU's count stays under the budget, and so does the heap the
// windows really hold (measured after a GC, against the heap before the
// first window).
func TestPanBoundedMemory(t *testing.T) {
	dir := genPartition(t, gen.LogOptions{SegmentBytes: 256 << 10, BatchBytes: 256, TotalBytes: 10 << 20, HangingFrom: -1, Seed: 9})
	const budget = 2 << 20
	st, err := Open(dir, Options{MaxMemory: 2 * budget})
	if err != nil {
		t.Fatal(err)
	}
	sums, _, err := st.Summaries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	base := heap()
	o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}
	var total, peak int64
	for k := 1; k < len(sums); k++ {
		// A viewport across the boundary between segments k-1 and k.
		b := sums[k].BaseOffset
		n := 0
		err := st.Decisions(context.Background(), b-50, b+50, o, func(w *Window, d *txnindex.Decision) bool { n++; return true })
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("no decision around offset %d", b)
		}
		if w, _ := st.Window(context.Background(), k, o); w != nil {
			total += w.Bytes()
		}
		if u := st.MemoryInUse(); u > budget {
			t.Fatalf("after segment %d the LRU holds %d bytes, over the budget %d", k, u, budget)
		}
		if h := heap() - base; h > peak {
			peak = h
		}
	}
	if total < 5*budget {
		t.Fatalf("the segments scanned hold %d bytes together, not enough over the budget %d to test it", total, budget)
	}
	if peak > budget+budget/4 {
		t.Fatalf("the heap grew by %d bytes panning, over the budget %d (+25%%)", peak, budget)
	}
	t.Logf("%d segments, %d bytes scanned in all, budget %d, heap growth at most %d", len(sums), total, budget, peak)
}

func heap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestOverviewCountsEqualFullPass: the overview's records per outcome,
// segment by segment, equal those a full pass gives each batch through its
// transaction (so a transaction's records in segment k count as aborted
// when its marker is in segment k+2).
func TestOverviewCountsEqualFullPass(t *testing.T) {
	dir := genPartition(t, gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 600 << 10, Seed: 11})
	p, err := loader.OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	full := p.Build()
	st, err := Open(dir, Options{Scan: loader.DefaultScanOptions})
	if err != nil {
		t.Fatal(err)
	}
	ov, err := st.Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := make([]SegmentView, len(ov.Segments))
	for i := range full.Batches {
		b := &full.Batches[i]
		v := &want[b.Segment]
		switch tx := full.TxnOf(i); {
		case b.IsControl():
			v.Control += int64(b.Records)
		case tx == nil:
			v.NonTransactional += int64(b.Records)
		case tx.State == txnindex.TxnCommitted:
			v.Committed += int64(b.Records)
		case tx.State == txnindex.TxnAborted:
			v.Aborted += int64(b.Records)
		default:
			v.Open += int64(b.Records)
		}
	}
	moved := 0
	for k, g := range ov.Segments {
		w := want[k]
		if g.NonTransactional != w.NonTransactional || g.Committed != w.Committed || g.Aborted != w.Aborted || g.Open != w.Open || g.Control != w.Control {
			t.Fatalf("segment %d: overview %+v, full pass %+v", k, g, w)
		}
		if sums := st.sums[k]; sums.Undecided != g.Open {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no segment had records of a transaction decided in a later segment: the case this test is for")
	}
}

// gapScenario has the cleaner's gaps inside segments and at their ends
// (a segment whose tail was cleaned, so the next begins after a hole),
// with transactions open across them.
const gapScenario = `topic gaps
producer a transactional
producer b transactional
plain 2
begin a
send a 2
begin b
send b
gap 3
roll
send a
send b 2
gap 4
abort a
plain
gap 2
roll
send b
commit b
begin a
send a 3
gap 5
roll
plain 2
abort a
roll
plain
`

// TestWindowsEqualFullPassGaps: on a compacted partition, the gap decision
// that begins at a segment's cleaned tail and reaches the next segment is
// decided, with its cause, by the next segment's window as a full pass
// decides it.
func TestWindowsEqualFullPassGaps(t *testing.T) {
	dir, _ := writeScenario(t, gapScenario)
	p, err := loader.OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	full := p.Build()
	boundary := 0
	for _, g := range full.Gaps {
		if g.Cause == txnindex.GapSegmentBoundary {
			boundary++
		}
	}
	if boundary < 2 {
		t.Fatalf("%d gaps at segment boundaries; the scenario wants several", boundary)
	}
	st, err := Open(dir, Options{Scan: loader.DefaultScanOptions})
	if err != nil {
		t.Fatal(err)
	}
	sums, _, err := st.Summaries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []txnindex.ConsumeOptions{{From: -1, Isolation: txnindex.ReadCommitted}, {From: -1, Isolation: txnindex.ReadUncommitted}} {
		var want, got []canon
		for d := range full.Decisions(o) {
			want = append(want, canonOf(&d))
		}
		for k := range sums {
			w, err := st.Window(context.Background(), k, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range w.Len() {
				got = append(got, canonOf(ptr(w.Decision(i))))
			}
		}
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || got[i] != want[i] {
				t.Fatalf("%+v: decision %d of %d and %d:\n segments  %+v\n full pass %+v", o, i, len(got), len(want), got[i:min(i+2, len(got))], want[i:min(i+2, len(want))])
			}
		}
		// A view inside each cleaned hole finds the gap.
		for _, g := range full.Gaps {
			if g.Cause != txnindex.GapSegmentBoundary {
				continue
			}
			var in []canon
			st.Decisions(context.Background(), g.From, g.From, o, func(_ *Window, d *txnindex.Decision) bool { in = append(in, canonOf(d)); return true })
			if len(in) != 1 || in[0].From != g.From || in[0].Cause != txnindex.CauseGapSegmentBoundary {
				t.Fatalf("view [%d,%d] in the hole %+v: %+v", g.From, g.From, g, in)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestCacheShared: windows sharing their budget with memory held elsewhere
// (serve's partitions opened whole) evict until both fit, and ask the
// other holder to make room when evicting windows is not enough.
func TestCacheShared(t *testing.T) {
	dir := genPartition(t, gen.LogOptions{SegmentBytes: 256 << 10, BatchBytes: 256, TotalBytes: 4 << 20, HangingFrom: -1, Seed: 9})
	const budget = 2 << 20
	c := NewCache(2 * budget)
	var mu sync.Mutex
	others, asked := int64(budget-budget/8), 0 // nearly all of it, at first
	c.Share(func() int64 { mu.Lock(); defer mu.Unlock(); return others }, func(n int64) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		others = max(0, min(others, budget-n-c.InUse())) // what the holder gives back
	})
	st, err := Open(dir, Options{Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	sums, _, err := st.Summaries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}
	for k := range sums {
		if _, err := st.Window(context.Background(), k, o); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		held := others
		mu.Unlock()
		if u := c.InUse(); u+held > budget {
			t.Fatalf("after segment %d the windows hold %d bytes and the others %d, over the budget %d together", k, u, held, budget)
		}
	}
	if asked == 0 {
		t.Errorf("the others were never asked to make room")
	}
}
