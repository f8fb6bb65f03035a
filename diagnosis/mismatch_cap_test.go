package diagnosis_test

import (
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
)

// TestTxnIndexDifferencesPastTheBound: a .txnindex of more entries than
// txnindex.MaxMismatches, none of which the log rebuilds (a damaged or
// hostile file), keeps MaxMismatches differences with their explanations
// and counts the rest; the diagnosis lists at most its limit and counts
// every difference.
func TestTxnIndexDifferencesPastTheBound(t *testing.T) {
	b := testfixture.NewLog().Txn(p1, 2).Abort(p1).Plain(-1, 1)
	n := txnindex.MaxMismatches + 5
	entries := make([]txnindex.AbortedTxn, n)
	for i := range entries {
		entries[i] = txnindex.AbortedTxn{ProducerID: txnindex.ProducerID(1000 + i), FirstOffset: 0, LastOffset: 1, LastStableOffset: 0}
	}
	s := &b.Partition.Segments[0]
	s.TxnIndex, s.TxnIndexOnDisk = entries, true
	l := b.Build()
	if len(l.Mismatches) != txnindex.MaxMismatches || l.MismatchesOmitted != n+1-txnindex.MaxMismatches {
		// n entries on disk the log does not rebuild, and the rebuilt
		// entry of p1's abort, which the file lacks.
		t.Fatalf("%d differences kept, %d omitted; want %d and %d", len(l.Mismatches), l.MismatchesOmitted, txnindex.MaxMismatches, n+1-txnindex.MaxMismatches)
	}
	d := diagnosis.Diagnose(l, diagnosis.Options{Limit: 50})
	if len(d.TxnIndexMismatches) != 50 || d.TxnIndexMismatchesTotal != n+1 {
		t.Errorf("diagnosis lists %d differences of %d; want 50 of %d", len(d.TxnIndexMismatches), d.TxnIndexMismatchesTotal, n+1)
	}
}
