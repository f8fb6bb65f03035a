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
			if got, want := l.TxnDataRanges(ti), all[ti]; !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %x txn %d: got %v, want %v", seed, ti, got, want)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d transactions checked", checked)
	}
}

// txnRanges returns, per transaction index, the offset ranges of its data,
// walking every batch of the log: the oracle of TxnDataRanges.
func (l *Log) txnRanges() map[int][]OffsetRange {
	out := map[int][]OffsetRange{}
	for i := range l.Batches {
		ti := l.TxnIndexOf(i)
		if ti < 0 || l.Batches[i].IsControl() {
			continue
		}
		b := &l.Batches[i]
		rs := out[int(ti)]
		if n := len(rs); n > 0 && rs[n-1].To+1 == b.BaseOffset {
			rs[n-1].To = b.LastOffset()
		} else {
			rs = append(rs, OffsetRange{b.BaseOffset, b.LastOffset()})
		}
		out[int(ti)] = rs
	}
	return out
}
