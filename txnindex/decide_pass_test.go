package txnindex

import (
	"math/rand/v2"
	"testing"
)

// TestBatchClasses checks the table Consumer.batch reads a batch's class
// from against classify of the batch itself, for every flags value (every
// attribute byte, magic, control type and the epoch bits) and record
// counts none, one, several and negative: no header bit outside
// classIndex changes a decision.
func TestBatchClasses(t *testing.T) {
	for f := range 1 << 16 {
		for _, records := range []int32{-1, 0, 1, 7} {
			b := Batch{flags: uint16(f), Records: records, ProducerID: 1}
			for iso, want := range []Isolation{ReadUncommitted, ReadCommitted} {
				if got, want := batchClasses[iso][b.classIndex()], classify(&b, want); got != want {
					t.Fatalf("flags %#04x, %d records, %s: class %+v, want %+v", f, records, Isolation(iso), got, want)
				}
			}
		}
	}
}

// TestDecideCollidingProducers runs the fuzz property (every variant equal
// to the brute-force oracle) on workloads whose producer ids all share one
// slot of the pass's direct-mapped tables (the txn cursor's and the Java
// aborted set's), so every lookup there must tell producers apart or fall
// back to the maps.
func TestDecideCollidingProducers(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	for range 500 {
		w := genWorkload(randomSeed(r, 128))
		for i := range w.b.p.Batches {
			if b := &w.b.p.Batches[i]; b.ProducerID > NoProducerID {
				b.ProducerID = b.ProducerID*cursorSlots*setSlots + 5
			}
		}
		checkWorkload(t, w)
	}
}

// TestDecideAbortInfoIsLookup: an aborted decision's AbortInfo is
// LookupAbort of its aborted-list element, for random workloads in every
// variant and for a .txnindex that lists one transaction twice under the
// same producer and first offset (a decision pass may take the entry from
// the transaction only when no two entries share that key).
func TestDecideAbortInfoIsLookup(t *testing.T) {
	check := func(l *Log, v Variant) int {
		t.Helper()
		n := 0
		for d := range l.Decisions(ConsumeOptions{Isolation: ReadCommitted, Variant: v}) {
			if d.Verdict != Aborted {
				continue
			}
			n++
			if want := l.LookupAbort(d.Abort.ProducerID, d.Abort.FirstOffset); d.AbortInfo != want {
				t.Fatalf("%s: [%d,%d] aborted by %+v with entry %+v, want %+v", v, d.From, d.To, d.Abort, d.AbortInfo, want)
			}
		}
		return n
	}
	r := rand.New(rand.NewPCG(19, 23))
	for range 300 {
		l := genWorkload(randomSeed(r, 128)).b.build()
		for _, v := range []Variant{VariantJava, VariantLibrdkafka, VariantFranzGo} {
			check(l, v)
		}
	}
	// p1's transaction [0,1] is aborted by the marker at 2; the file
	// first lists a bogus entry with the same key ending at 5.
	b := newLog().txn(p1, 2).abort(p1).txn(p2, 1).commit(p2)
	s := &b.p.Segments[0]
	s.TxnIndexOnDisk = true
	s.TxnIndex = []AbortedTxn{
		{ProducerID: p1, FirstOffset: 0, LastOffset: 5, LastStableOffset: 6},
		{ProducerID: p1, FirstOffset: 0, LastOffset: 2, LastStableOffset: 0},
	}
	l := b.build()
	if l.abortKeysUnique() {
		t.Fatal("two entries with one key taken as unique")
	}
	if e := l.TxnOf(0).Entry; e == nil || e == l.LookupAbort(p1, 0) {
		t.Fatalf("the transaction's entry %+v is the looked-up one: the case is not made", e)
	}
	for _, v := range []Variant{VariantJava, VariantLibrdkafka, VariantFranzGo} {
		if check(l, v) == 0 {
			t.Fatalf("%s: nothing aborted", v)
		}
	}
}

// TestJavaSetSlots drives the Java aborted set's slots with random puts,
// deletes and lookups of producers that share slots, against a plain map.
func TestJavaSetSlots(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 31))
	for round := range 200 {
		c := Consumer{Isolation: ReadCommitted, Variant: VariantJava}
		c.begin([]AbortedTransaction{{ProducerID: 1}})
		want := map[ProducerID]AbortedTransaction{}
		for op := range 300 {
			pid := ProducerID(r.IntN(3)*setSlots + r.IntN(2)) // six producers, two slots
			switch r.IntN(3) {
			case 0:
				a := AbortedTransaction{ProducerID: pid, FirstOffset: int64(op)}
				c.setPut(a)
				want[pid] = a
			case 1:
				c.setDelete(pid)
				delete(want, pid)
			}
			for p := range ProducerID(3 * setSlots) {
				gotEl, got := c.setGet(p)
				wantEl, w := want[p]
				if got != w || gotEl != wantEl {
					t.Fatalf("round %d op %d: producer %d in set %v %+v, want %v %+v", round, op, p, got, gotEl, w, wantEl)
				}
			}
			if len(c.set) != len(want) {
				t.Fatalf("round %d op %d: map has %d producers, want %d", round, op, len(c.set), len(want))
			}
		}
	}
}
