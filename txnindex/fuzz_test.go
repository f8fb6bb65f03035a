package txnindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// workload is a random partition together with what a brute-force oracle
// knows of it: the outcome of every transaction and where its marker went,
// decided by the generator itself rather than by replaying the log.
type workload struct {
	b       *logBuilder
	outcome []TxnState // per batch: outcome of its transaction (TxnCommitted for non-transactional data)
	txns    []genTxn   // every transaction with data, in order of first offset
	from    int64
	maxB    int32

	// logStart and hwm are the partition's log start offset and high
	// watermark: logStart <= hwm <= the log end offset, as the broker keeps
	// them (DeleteRecords cannot pass the high watermark).
	logStart, hwm int64
	end           int64 // the log end offset
}

// genTxn is a transaction as the generator wrote it.
type genTxn struct {
	first  int64 // offset of its first data batch
	marker int64 // offset of its COMMIT/ABORT marker, -1 if never ended
}

// genWorkload turns bytes into a workload: interleaved transactional
// producers that commit, abort or never finish, idempotent and plain
// producers, segment rolls, compaction gaps and empty aborts; then the
// consumer's start and fetch size, and the high watermark and log start
// offset. A seed that runs out of bytes reads zeros: the high watermark at
// the log end and the log start at 0.
func genWorkload(data []byte) workload {
	rd := bytes.NewReader(data)
	next := func(n int) int {
		c, err := rd.ReadByte()
		if err != nil {
			return 0
		}
		return int(c) % n
	}
	w := workload{b: newLog()}
	const nTxnProducers = 4
	openTxn := make([][]int, nTxnProducers+1) // producer -> its batch indices in the open txn
	isOpen := make([]bool, nTxnProducers+1)
	txnOf := make([]int, nTxnProducers+1) // producer -> index in w.txns of its open txn
	steps := 8 + next(48)
	for s := 0; s < steps; s++ {
		pid := ProducerID(1 + next(nTxnProducers))
		switch op := next(10); {
		case op < 4:
			if !isOpen[pid] {
				w.txns = append(w.txns, genTxn{first: w.b.next, marker: -1})
				txnOf[pid] = len(w.txns) - 1
			}
			isOpen[pid] = true
			openTxn[pid] = append(openTxn[pid], len(w.b.p.Batches))
			w.b.txn(pid, 1+next(4))
			w.outcome = append(w.outcome, TxnOpen)
		case op < 6:
			ct := ControlCommit
			if next(2) == 0 {
				ct = ControlAbort
			}
			state := TxnCommitted
			if ct == ControlAbort {
				state = TxnAborted
			}
			for _, bi := range openTxn[pid] {
				w.outcome[bi] = state
			}
			if isOpen[pid] {
				w.txns[txnOf[pid]].marker = w.b.next
			}
			openTxn[pid], isOpen[pid] = nil, false
			w.b.marker(pid, ct, 0) // also covers markers of empty transactions
			w.outcome = append(w.outcome, state)
		case op < 7:
			w.b.plain(ProducerID(100+next(3)), 1+next(3)) // idempotent, non-transactional
			w.outcome = append(w.outcome, TxnCommitted)
		case op < 8:
			w.b.plain(NoProducerID, 1+next(3))
			w.outcome = append(w.outcome, TxnCommitted)
		case op < 9:
			if len(w.b.p.Batches) > 0 {
				w.b.roll()
			}
		default:
			w.b.skip(1 + next(3))
		}
	}
	if len(w.b.p.Batches) == 0 {
		w.b.plain(NoProducerID, 1)
		w.outcome = append(w.outcome, TxnCommitted)
	}
	leo := w.b.next
	w.from = int64(next(int(leo) + 2))
	w.maxB = int32(next(4) * 100)

	// The log end offset: after the last batch, or the base of an empty
	// last segment rolled past a trailing gap.
	end := w.b.p.Batches[len(w.b.p.Batches)-1].NextOffset()
	end = max(end, w.b.p.Segments[len(w.b.p.Segments)-1].BaseOffset)
	w.end = end
	w.hwm = end - int64(next(int(end)+1))
	w.logStart = int64(next(int(w.hwm) + 1))
	if w.hwm < end {
		w.b.p.HighWatermark = w.hwm
	}
	if w.logStart > 0 {
		w.b.p.LogStartOffset = w.logStart
	}
	return w
}

// lso is the last stable offset the generator's transactions imply
// (kafka-internals.md 4.3): the first offset of the earliest transaction
// that is undecided or whose marker is not below the high watermark,
// clamped up to the log start; the high watermark if none is below it.
func (w workload) lso() int64 {
	fu := int64(-1)
	for _, t := range w.txns {
		if (t.marker < 0 || t.marker >= w.hwm) && (fu < 0 || t.first < fu) {
			fu = t.first
		}
	}
	if fu >= 0 && max(fu, w.logStart) < w.hwm {
		return max(fu, w.logStart)
	}
	return w.hwm
}

// oracle says what a consumer starting at from must do with every offset,
// in the letters of letters(), knowing each transaction's outcome. It
// fetches up to the LSO (read_committed) or the high watermark, and a fetch
// stops before the batch holding that bound, so a batch reaching it is
// pending whole. Below the bound, read_committed delivers the data of
// committed transactions and non-transactional data and skips aborted data;
// read_uncommitted delivers all data. Batches wholly below the position are
// before it; offsets missing between batches are gaps, except below the log
// start, where nothing is said of them.
func (w workload) oracle(iso Isolation) string {
	bound := w.hwm
	if iso == ReadCommitted {
		bound = w.lso()
	}
	from := max(w.from, w.logStart)
	var sb strings.Builder
	next := int64(-1)
	put := func(off int64, c byte) {
		if next >= 0 && off != next {
			fmt.Fprintf(&sb, "<jump %d->%d>", next, off)
		}
		sb.WriteByte(c)
		next = off + 1
	}
	seen := w.logStart // offsets below are accounted for
	for i, bt := range w.b.p.Batches {
		for off := seen; off < bt.BaseOffset; off++ {
			put(off, 'G')
		}
		for off := bt.BaseOffset; off <= bt.LastOffset(); off++ {
			var c byte
			switch {
			case bt.LastOffset() < from:
				c = 'B'
			case bt.LastOffset() >= bound:
				c = 'P'
			case off < from:
				c = 'B'
			case bt.IsControl():
				c = 'C'
			case iso == ReadCommitted && w.outcome[i] == TxnAborted:
				c = 'A'
			default:
				c = 'D'
			}
			put(off, c)
		}
		seen = max(seen, bt.NextOffset())
	}
	return sb.String()
}

func checkWorkload(t *testing.T, w workload) {
	t.Helper()
	l := w.b.build()
	checkTxnOf(t, l, w.b.p.Ongoing)
	if l.LogStartOffset != w.logStart || l.HighWatermark != w.hwm || l.LastStableOffset != w.lso() {
		t.Fatalf("log start %d HWM %d LSO %d, want %d %d %d\nbatches %+v", l.LogStartOffset, l.HighWatermark, l.LastStableOffset,
			w.logStart, w.hwm, w.lso(), w.b.p.Batches)
	}
	// The generator writes no overlapping batches, and gaps are said of
	// offsets at or above the log start only.
	for _, g := range l.Gaps {
		if g.Cause == GapOverlap || g.From < w.logStart {
			t.Fatalf("gap %+v with log start %d\nbatches %+v", g, w.logStart, w.b.p.Batches)
		}
	}
	want := w.oracle(ReadCommitted)
	for _, v := range []Variant{VariantJava, VariantLibrdkafka, VariantFranzGo} {
		got := letters(l, ConsumeOptions{From: w.from, Isolation: ReadCommitted, Variant: v, MaxBytes: w.maxB})
		if got != want {
			t.Fatalf("%s from=%d maxBytes=%d log start=%d HWM=%d LSO=%d\n got %s\nwant %s\nbatches %+v", v, w.from, w.maxB,
				w.logStart, w.hwm, l.LastStableOffset, got, want, w.b.p.Batches)
		}
	}
	if got, want := letters(l, ConsumeOptions{From: w.from, Isolation: ReadUncommitted, MaxBytes: w.maxB}), w.oracle(ReadUncommitted); got != want {
		t.Fatalf("read_uncommitted from=%d log start=%d HWM=%d\n got %s\nwant %s", w.from, w.logStart, w.hwm, got, want)
	}
	// A rebuilt index served from "disk" must decide the same.
	for si := range w.b.p.Segments {
		w.b.p.Segments[si].TxnIndex = l.RebuiltIndex[si]
		w.b.p.Segments[si].TxnIndexOnDisk = true
	}
	l2 := w.b.build()
	if len(l2.Mismatches) != 0 {
		t.Fatalf("rebuilt index round trip mismatches: %+v", l2.Mismatches)
	}
	if got := letters(l2, ConsumeOptions{From: w.from, Isolation: ReadCommitted, MaxBytes: w.maxB}); got != want {
		t.Fatalf("from disk index: got %s want %s", got, want)
	}
	for si := range w.b.p.Segments {
		w.b.p.Segments[si].TxnIndex, w.b.p.Segments[si].TxnIndexOnDisk = nil, false
	}
}

// checkTxnOf compares Log.TxnOf for every batch with a direct replay of the
// producer state's currentTxnFirstOffset: a transactional data batch belongs
// to its producer's open transaction (opening one if none is open), an
// end-transaction marker with records to the one it closes, anything else
// to none. It also checks that each transaction's counts are those of the
// batches TxnOf gives it.
func checkTxnOf(t *testing.T, l *Log, seed []OngoingTxn) {
	t.Helper()
	type key struct {
		pid   ProducerID
		first int64
	}
	open := map[ProducerID]int64{}
	seeded := append([]OngoingTxn(nil), seed...)
	sort.SliceStable(seeded, func(i, j int) bool { return seeded[i].FirstOffset < seeded[j].FirstOffset })
	for _, s := range seeded {
		if _, ok := open[s.ProducerID]; !ok {
			open[s.ProducerID] = s.FirstOffset
		}
	}
	batches := map[key]int{}
	for i := range l.Batches {
		b := &l.Batches[i]
		var want *key
		switch {
		case !b.HasProducerID():
		case b.IsControl():
			if f, ok := open[b.ProducerID]; ok && b.Records > 0 && b.IsEndTxnMarker() {
				want = &key{b.ProducerID, f}
				delete(open, b.ProducerID)
			}
		case b.IsTransactional():
			f, ok := open[b.ProducerID]
			if !ok {
				f = b.BaseOffset
				open[b.ProducerID] = f
			}
			want = &key{b.ProducerID, f}
			batches[*want]++
		}
		got := l.TxnOf(i)
		switch {
		case want == nil && got != nil:
			t.Fatalf("batch %d (%+v): TxnOf = txn of %d at %d, want none", i, b.Fields(), got.ProducerID, got.FirstOffset)
		case want != nil && got == nil:
			t.Fatalf("batch %d (%+v): TxnOf = none, want txn of %d at %d", i, b.Fields(), want.pid, want.first)
		case want != nil && (got.ProducerID != want.pid || got.FirstOffset != want.first):
			t.Fatalf("batch %d: TxnOf = txn of %d at %d, want %d at %d", i, got.ProducerID, got.FirstOffset, want.pid, want.first)
		}
	}
	for i := range l.Txns {
		tx := &l.Txns[i]
		if n := batches[key{tx.ProducerID, tx.FirstOffset}]; int(tx.Batches) != n {
			t.Fatalf("txn %d of %d at %d: Batches %d, TxnOf gives it %d data batches", i, tx.ProducerID, tx.FirstOffset, tx.Batches, n)
		}
	}
	// A pass resolves Decision.Txn with its own sequential cursor; it must
	// agree with TxnOf for every batch, in both isolations.
	for _, iso := range []Isolation{ReadCommitted, ReadUncommitted} {
		for d := range l.Decisions(ConsumeOptions{Isolation: iso}) {
			if d.BatchIndex >= 0 && d.Txn != l.TxnOf(int(d.BatchIndex)) {
				t.Fatalf("%v decision for batch %d: Txn %p, TxnOf %p", iso, d.BatchIndex, d.Txn, l.TxnOf(int(d.BatchIndex)))
			}
		}
	}
}

// FuzzDecide: for any generated workload, every consumer variant decides
// every offset exactly as the brute-force oracle does, for any start
// position, fetch size, log start offset and high watermark. Seeds: random
// bytes, and the shapes of the real partitions in testdata/realdata.
func FuzzDecide(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 32 {
		seed := randomSeed(r, 64+r.IntN(64))
		f.Add(seed)
	}
	for _, seed := range realDataSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkWorkload(t, genWorkload(data))
	})
}

// TestRandomWorkloads runs the fuzz property over many seeds in every
// `go test`, so the oracle comparison does not depend on fuzzing time.
func TestRandomWorkloads(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var seeds [][]byte
	for range 3000 {
		seed := randomSeed(r, 128)
		checkWorkload(t, genWorkload(seed))
		seeds = append(seeds, seed)
	}
	checkBoundsVary(t, seeds)
}

// checkBoundsVary fails t unless at least a quarter of the workloads of
// seeds have a high watermark below the log end, and a quarter a log start
// above 0: the oracle comparison is only worth what it is run on.
func checkBoundsVary(t *testing.T, seeds [][]byte) {
	t.Helper()
	var belowEnd, started int
	for _, s := range seeds {
		w := genWorkload(s)
		if w.hwm < w.end {
			belowEnd++
		}
		if w.logStart > 0 {
			started++
		}
	}
	t.Logf("%d workloads: %d with the high watermark below the log end, %d with a log start above 0", len(seeds), belowEnd, started)
	if 4*belowEnd < len(seeds) || 4*started < len(seeds) {
		t.Errorf("of %d workloads, %d have the high watermark below the log end and %d a log start above 0: want a quarter each", len(seeds), belowEnd, started)
	}
}

// FuzzReadTxnIndex: any input decodes without panicking into at most
// len/34 entries, and the entries decoded re-encode to the bytes they came
// from.
func FuzzReadTxnIndex(f *testing.F) {
	f.Add(EncodeTxnIndex([]AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 5, LastStableOffset: 6}}))
	f.Add(make([]byte, 33))
	f.Add(append(make([]byte, 34), 1))
	// Hostile entries: offsets at the int64 extremes, a last
	// offset below the first, an LSO far past the marker, the version
	// quirks Kafka lets through.
	f.Add(EncodeTxnIndex([]AbortedTxn{
		{ProducerID: -1, FirstOffset: math.MinInt64, LastOffset: math.MaxInt64, LastStableOffset: math.MaxInt64},
		{ProducerID: math.MaxInt64, FirstOffset: 9, LastOffset: 3, LastStableOffset: -1},
		{ProducerID: 7, FirstOffset: math.MaxInt64 - 8, LastOffset: math.MaxInt64 - 1, LastStableOffset: math.MinInt64},
	}))
	f.Add(append([]byte{0xff, 0}, EncodeTxnIndex([]AbortedTxn{{ProducerID: 1, LastOffset: 1, LastStableOffset: 2}})[2:]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := ReadTxnIndex(bytes.NewReader(data), int64(len(data)))
		if len(es) > len(data)/AbortedTxnSize {
			t.Fatalf("%d entries from %d bytes", len(es), len(data))
		}
		enc := EncodeTxnIndex(es)
		if !bytes.Equal(enc, data[:len(enc)]) {
			t.Fatalf("re-encoding differs")
		}
		if err == nil && len(enc) != len(data) {
			t.Fatalf("no error but %d of %d bytes used", len(enc), len(data))
		}
	})
}

func TestTxnIndexCodec(t *testing.T) {
	e := AbortedTxn{ProducerID: 7, FirstOffset: 120, LastOffset: 146, LastStableOffset: 147}
	b := e.AppendTo(nil)
	if len(b) != AbortedTxnSize {
		t.Fatalf("len %d", len(b))
	}
	// Golden bytes: version 0, then four big-endian int64s.
	var golden [34]byte
	binary.BigEndian.PutUint64(golden[2:], 7)
	binary.BigEndian.PutUint64(golden[10:], 120)
	binary.BigEndian.PutUint64(golden[18:], 146)
	binary.BigEndian.PutUint64(golden[26:], 147)
	if !bytes.Equal(b, golden[:]) {
		t.Fatalf("encoding % x", b)
	}
	got, err := DecodeAbortedTxn(b, 0)
	if err != nil || got != e {
		t.Fatalf("round trip %+v %v", got, err)
	}
	if s := e.String(); s != "version: 0 producerId: 7 firstOffset: 120 lastOffset: 146 lastStableOffset: 147" {
		t.Errorf("String = %q", s)
	}

	cases := []struct {
		name    string
		data    []byte
		entries int
		err     string
	}{
		{"Empty", nil, 0, ""},
		{"TwoEntries", append(b, b...), 2, ""},
		{"TruncatedTail", append(b, b[:20]...), 1, "txnindex: entry at byte 0x22: truncated entry: want 34 bytes, found 20 before end of file (the broker reads only whole entries and skips them)"},
		{"BadVersion", append(b, append([]byte{1, 0}, b[2:]...)...), 1, "txnindex: entry at byte 0x22: unsupported version: want 0, found 1 (first byte 0x01)"},
		// Kafka reads the version as one signed byte: 0x0001 passes, and
		// so does a negative first byte.
		{"VersionQuirkLowByte", append([]byte{0, 1}, b[2:]...), 1, ""},
		{"VersionQuirkNegative", append([]byte{0xff, 0}, b[2:]...), 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			es, err := ReadTxnIndex(bytes.NewReader(tc.data), int64(len(tc.data)))
			if len(es) != tc.entries {
				t.Errorf("entries = %d, want %d", len(es), tc.entries)
			}
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if msg != tc.err {
				t.Errorf("err = %q, want %q", msg, tc.err)
			}
		})
	}
}

// randomSeed is n random bytes from r: a genWorkload seed.
func randomSeed(r *rand.Rand, n int) []byte {
	seed := make([]byte, n)
	for i := range seed {
		seed[i] = byte(r.UintN(256))
	}
	return seed
}
