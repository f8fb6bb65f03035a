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
