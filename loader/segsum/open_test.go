package segsum

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// openThenRolls writes a partition whose first segment leaves k
// transactions open (k producers, each beginning one with one record and
// never ending it) and n segments of one plain batch after it, and
// returns its directory and the bytes of its segments.
func openThenRolls(t testing.TB, k, n int) (string, int64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("topic opens\n")
	for i := range k {
		fmt.Fprintf(&b, "producer p%d transactional\n", i)
	}
	for i := range k {
		fmt.Fprintf(&b, "begin p%d\nsend p%d 1\n", i, i)
	}
	for range n {
		b.WriteString("roll\nplain 1\n")
	}
	logDir, built := testfixture.WriteScenario(t, b.String(), "opens.txn")
	dir := filepath.Join(logDir, built.Dir)
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var bytes int64
	for _, f := range logs {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		bytes += st.Size()
	}
	if len(logs) != n+1 {
		t.Fatalf("%d segments, want %d", len(logs), n+1)
	}
	return dir, bytes
}

// heapAfterGC is the heap in use once the collector has run.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestOpenTransactionsCostWhatTheyHold: 4,000 transactions left open in
// the first segment and 100 one-batch segments after it cost the
// summaries, their cache file and a decide by segment what the partition
// holds, not 4,000 × 100: each summary holds what its segment changes,
// and a window of a later segment is not seeded with every open
// transaction when only its decisions are wanted. The windows still
// decide as one full pass does. (When each summary copied the open set,
// this partition's cache file was 75 MB for 380 KB of segments, and
// deciding it by segment ran for minutes.)
func TestOpenTransactionsCostWhatTheyHold(t *testing.T) {
	const k, n = 4000, 100
	dir, bytes := openThenRolls(t, k, n)
	cache := t.TempDir()
	ctx := context.Background()

	base := heapAfterGC()
	st, err := Open(dir, Options{Scan: loader.DefaultScanOptions, MaxMemory: 256 << 20, CacheDir: cache, DecisionsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	sums, b, err := st.Summaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := int64(heapAfterGC()) - int64(base)
	files, _ := filepath.Glob(filepath.Join(cache, "segsum-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes of segments: summaries hold %d bytes of heap, cache file %d bytes", bytes, held, fi.Size())
	if fi.Size() > 4*bytes {
		t.Fatalf("cache file of %d bytes for %d bytes of segments: more than 4 times", fi.Size(), bytes)
	}
	if held > 12*bytes {
		t.Fatalf("summaries hold %d bytes of heap for %d bytes of segments: more than 12 times", held, bytes)
	}
	if b.LastStableOffset != 0 || sums[len(sums)-1].OpenCount != k {
		t.Fatalf("LSO %d, %d open at the end: want 0 and %d", b.LastStableOffset, sums[len(sums)-1].OpenCount, k)
	}

	p, err := loader.OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	full := p.Build()
	o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}
	var want []canon
	for d := range full.Decisions(o) {
		want = append(want, canonOf(&d))
	}
	// A decide by segment: every window scanned once, in order.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var got []canon
	if err := st.Decisions(ctx, -1, b.LogEndOffset, o, func(_ *Window, d *txnindex.Decision) bool {
		got = append(got, canonOf(d))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("decided by segment: %d bytes allocated", alloc)
	if d := firstDiffer(o, "segments, decisions only", got, want); d != "" {
		t.Fatal(d)
	}
	// The decisions themselves are kept (got, want): a few hundred bytes
	// each.
	if limit := 64*bytes + int64(len(want))*1024; alloc > limit {
		t.Errorf("deciding by segment allocated %d bytes for %d bytes of segments: more than %d", alloc, bytes, limit)
	}

	// The windows of a server (every open transaction seeded, for the
	// pages that list them) decide the same.
	all, err := Open(dir, Options{Scan: loader.DefaultScanOptions, MaxMemory: 256 << 20, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, k := range []int{0, 1, n / 2, n} {
		w, err := all.Window(ctx, k, o)
		if err != nil {
			t.Fatal(err)
		}
		if k > 0 && len(w.Log.Open) != 4000 {
			t.Errorf("segment %d's window holds %d open transactions, want all %d", k, len(w.Log.Open), 4000)
		}
	}
	if all.Fresh() != 0 {
		t.Errorf("a second store computed %d summaries: the cache file was not read", all.Fresh())
	}
	if err := all.Decisions(ctx, -1, b.LogEndOffset, o, func(_ *Window, d *txnindex.Decision) bool {
		got = append(got, canonOf(d))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if d := firstDiffer(o, "segments", got, want); d != "" {
		t.Fatal(d)
	}
}

// openCase is one shape of TestOpenSetChanges: the transactions a
// segment closes, and those open at its end as its replay holds them.
type openCase struct {
	name      string
	closed    []TxnKey
	ends      []OpenTxn
	refused   bool // changesOf refuses: the order needs Reset
	wantReset bool
}

// TestOpenSetChanges: the changes a summary records, applied to the set
// at its segment's start, give the set at its end in the replay's order,
// with each transaction's parts so far, for every shape of change:
// whether the scan was seeded with the whole set (changes) or with the
// part its batches need (changesOf, which refuses an order its changes do
// not give).
func TestOpenSetChanges(t *testing.T) {
	ot := func(pid int64, first int64, ts int64) txnindex.OngoingTxn {
		return txnindex.OngoingTxn{ProducerID: txnindex.ProducerID(pid), FirstOffset: first, LastTimestamp: ts, CoordinatorEpoch: -1}
	}
	part := func(batches int, last int64) TxnPart {
		if batches == 0 {
			return noPart
		}
		return TxnPart{Batches: batches, Records: int64(batches), Bytes: 70 * int64(batches), LastDataOffset: last, FirstTimestamp: last * 10, LastTimestamp: last * 10}
	}
	start := []openEntry{
		{OngoingTxn: ot(1, 0, 5), acc: part(1, 0)},
		{OngoingTxn: ot(2, 3, 7), acc: part(2, 4)},
		{OngoingTxn: ot(3, 8, 9), acc: part(1, 8)},
	}
	cases := []openCase{
		{name: "nothing changes", ends: []OpenTxn{{ot(1, 0, 5), noPart}, {ot(2, 3, 7), noPart}, {ot(3, 8, 9), noPart}}},
		{name: "one written to, one begun", ends: []OpenTxn{{ot(1, 0, 5), noPart}, {ot(2, 3, 120), part(1, 12)}, {ot(3, 8, 9), noPart}, {ot(4, 11, 110), part(1, 11)}}},
		{name: "one closed", closed: []TxnKey{{2, 3}}, ends: []OpenTxn{{ot(1, 0, 5), noPart}, {ot(3, 8, 9), noPart}}},
		{name: "closed and begun again at the same offset", closed: []TxnKey{{1, 0}},
			ends: []OpenTxn{{ot(2, 3, 7), noPart}, {ot(3, 8, 9), noPart}, {ot(1, 0, 130), part(1, 13)}}},
		{name: "one the replay no longer holds", ends: []OpenTxn{{ot(1, 0, 5), noPart}, {ot(3, 8, 9), noPart}}},
		{name: "time moved without a batch", ends: []OpenTxn{{ot(1, 0, -1), noPart}, {ot(2, 3, 7), noPart}, {ot(3, 8, 9), noPart}}},
		{name: "an order the changes do not give", refused: true, wantReset: true,
			ends: []OpenTxn{{ot(3, 8, 9), noPart}, {ot(1, 0, 5), noPart}, {ot(2, 3, 7), noPart}}},
		{name: "a seed after one begun", refused: true, wantReset: true,
			ends: []OpenTxn{{ot(1, 0, 5), noPart}, {ot(4, 1, 20), part(1, 2)}, {ot(2, 3, 7), noPart}, {ot(3, 8, 9), noPart}}},
	}
	set := func() *openSet {
		o := newOpenSet(0)
		for _, e := range start {
			o.add(e)
		}
		return o
	}
	// wantAcc is each transaction's parts as the summaries before
	// listed them (the window's closeLater walked back through them).
	wantAcc := func(closed []TxnKey, t OpenTxn) TxnPart {
		for _, c := range closed {
			if c == keyOf(&t.OngoingTxn) {
				return noPart.then(t.Here)
			}
		}
		for _, e := range start {
			if keyOf(&e.OngoingTxn) == keyOf(&t.OngoingTxn) {
				return e.acc.then(t.Here)
			}
		}
		return noPart.then(t.Here)
	}
	check := func(t *testing.T, how string, x *Summary, c openCase) {
		t.Helper()
		o := set()
		o.apply(x)
		if !o.same(c.ends) {
			t.Fatalf("%s: the changes %+v applied give %+v, want %+v", how, x, o.list, c.ends)
		}
		for _, e := range c.ends {
			if g, w := o.get(keyOf(&e.OngoingTxn)).acc, wantAcc(c.closed, e); g != w {
				t.Errorf("%s: %v's parts %+v, want %+v", how, keyOf(&e.OngoingTxn), g, w)
			}
		}
		if x.OpenCount != len(c.ends) {
			t.Errorf("%s: OpenCount %d, want %d", how, x.OpenCount, len(c.ends))
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			closed := func() *Summary {
				x := &Summary{}
				for _, k := range c.closed {
					x.Closed = append(x.Closed, ClosedTxn{ProducerID: k.ProducerID, FirstOffset: k.FirstOffset})
				}
				return x
			}
			x := closed()
			o := set()
			o.changes(x, c.ends)
			if x.Reset != c.wantReset {
				t.Errorf("changes: Reset %v, want %v", x.Reset, c.wantReset)
			}
			if !o.same(c.ends) {
				t.Fatalf("changes left the set %+v, want %+v", o.list, c.ends)
			}
			check(t, "changes", x, c)

			x = closed()
			o = set()
			seeded := openList(o.list) // the whole set: its part is the shapes above
			if ok := o.changesOf(x, c.ends, seeded); ok == c.refused {
				t.Fatalf("changesOf: %v, want %v", ok, !c.refused)
			}
			if c.refused {
				if !o.same(endsOf(start)) {
					t.Fatalf("a refused changesOf moved the set to %+v", o.list)
				}
				return
			}
			if !o.same(c.ends) {
				t.Fatalf("changesOf left the set %+v, want %+v", o.list, c.ends)
			}
			check(t, "changesOf", x, c)
		})
	}
}

func endsOf(es []openEntry) []OpenTxn {
	out := make([]OpenTxn, len(es))
	for i, e := range es {
		out[i] = OpenTxn{OngoingTxn: e.OngoingTxn}
	}
	return out
}
