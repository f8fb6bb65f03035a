package txnindex

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"sort"
	"testing"
)

// workload is a random partition together with what a brute-force oracle
// knows of it: the outcome of every transaction, decided by the generator
// itself rather than by replaying the log.
type workload struct {
	b       *logBuilder
	outcome []TxnState // per batch: outcome of its transaction (TxnCommitted for non-transactional data)
	from    int64
	maxB    int32
}

// genWorkload turns bytes into a workload: interleaved transactional
// producers that commit, abort or never finish, idempotent and plain
// producers, segment rolls, compaction gaps and empty aborts.
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
	steps := 8 + next(48)
	for s := 0; s < steps; s++ {
		pid := ProducerID(1 + next(nTxnProducers))
		switch op := next(10); {
		case op < 4:
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
	return w
}

// oracle says what a read_committed consumer starting at from must do with
// every offset, knowing each transaction's outcome: data of committed
// transactions and non-transactional data are delivered below the LSO, which
// is the first offset of the earliest transaction never ended.
func (w workload) oracle() string {
	l := &w.b.p
	lso := w.b.next
	for i, bt := range l.Batches {
		if w.outcome[i] == TxnOpen && !bt.IsControl() && bt.BaseOffset < lso {
			lso = bt.BaseOffset
		}
	}
	var out []byte
	next := int64(0)
	for i, bt := range l.Batches {
		for ; next < bt.BaseOffset; next++ {
			out = append(out, 'G')
		}
		for off := bt.BaseOffset; off <= bt.LastOffset(); off++ {
			var c byte
			switch {
			case bt.LastOffset() < w.from:
				c = 'B'
			case bt.BaseOffset >= lso:
				c = 'P'
			case off < w.from:
				c = 'B'
			case bt.IsControl():
				c = 'C'
			case w.outcome[i] == TxnAborted:
				c = 'A'
			default:
				c = 'D'
			}
			out = append(out, c)
		}
		next = bt.LastOffset() + 1
	}
	return string(out)
}

func checkWorkload(t *testing.T, w workload) {
	t.Helper()
	l := w.b.build()
	checkTxnOf(t, l, w.b.p.Ongoing)
	want := w.oracle()
	for _, v := range []Variant{VariantJava, VariantLibrdkafka, VariantFranzGo} {
		got := letters(l, ConsumeOptions{From: w.from, Isolation: ReadCommitted, Variant: v, MaxBytes: w.maxB})
		if got != want {
			t.Fatalf("%s from=%d maxBytes=%d LSO=%d\n got %s\nwant %s\nbatches %+v", v, w.from, w.maxB, l.LastStableOffset, got, want, w.b.p.Batches)
		}
	}
	// read_uncommitted delivers all data below the HWM (= LEO here).
	ru := letters(l, ConsumeOptions{From: w.from, Isolation: ReadUncommitted, MaxBytes: w.maxB})
	for i := range ru {
		exp := byte('G')
		if bi := batchAt(w.b.p.Batches, int64(i)); bi >= 0 {
			switch bt := &w.b.p.Batches[bi]; {
			case int64(i) < w.from:
				exp = 'B'
			case bt.IsControl():
				exp = 'C'
			default:
				exp = 'D'
			}
		}
		if ru[i] != exp {
			t.Fatalf("read_uncommitted offset %d: got %c want %c\n ru %s\n rc %s", i, ru[i], exp, ru, want)
		}
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

func batchAt(bs []Batch, off int64) int {
	for i := range bs {
		if bs[i].BaseOffset <= off && off <= bs[i].LastOffset() {
			return i
		}
	}
	return -1
}

// FuzzDecide: for any generated workload, every consumer variant decides
// every offset exactly as the brute-force oracle does, for any start
// position and fetch size.
func FuzzDecide(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 32 {
		seed := randomSeed(r, 64+r.IntN(64))
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
	for range 3000 {
		seed := randomSeed(r, 128)
		checkWorkload(t, genWorkload(seed))
	}
}

// FuzzReadTxnIndex: any input decodes without panicking into at most
// len/34 entries, and the entries decoded re-encode to the bytes they came
// from.
func FuzzReadTxnIndex(f *testing.F) {
	f.Add(EncodeTxnIndex([]AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 5, LastStableOffset: 6}}))
	f.Add(make([]byte, 33))
	f.Add(append(make([]byte, 34), 1))
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
		{"TruncatedTail", append(b, b[:20]...), 1, "txnindex: entry at byte 0x22: truncated entry: want 34 bytes, found 20 before end of file"},
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
