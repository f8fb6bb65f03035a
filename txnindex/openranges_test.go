package txnindex

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestOpenTxnRangesOracle: the ranges the diagnosis reports for a
// transaction, found by walking only its span, are those of the whole-log
// walk (txnRanges), for every transaction of random workloads.
func TestOpenTxnRangesOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	checked := 0
	for range 1000 {
		seed := randomSeed(r, 128)
		l := genWorkload(seed).b.build()
		all := l.txnRanges()
		checked += len(l.Txns)
		for ti := range l.Txns {
			if got, want := l.openTxnRanges(ti), all[ti]; !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %x txn %d: got %v, want %v", seed, ti, got, want)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d transactions checked", checked)
	}
}
