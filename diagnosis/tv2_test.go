package diagnosis_test

import (
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestTV2DiagnosedAtLastEpoch: the open transaction of a transactions v2
// producer that ran 3,000 transactions is diagnosed at its last epoch (the
// epoch kafka-transactions.sh abort must name: the admin's WriteTxnMarkers
// carries no transaction version, so the leader accepts a marker epoch at
// least the producer's).
func TestTV2DiagnosedAtLastEpoch(t *testing.T) {
	b := testfixture.NewLog()
	for e := range int16(3000) {
		b.TxnAt(7, e, 1).Marker(7, txnindex.ControlCommit, e+1)
	}
	b.TxnAt(7, 3000, 2).Plain(-1, 1)
	l := b.Build()
	d := diagnosis.Diagnose(l, diagnosis.Options{Position: -1})
	if d.PinnedBy == nil || d.PinnedBy.ProducerEpoch != 3000 || d.PinnedBy.FirstOffset != 6000 || l.LastStableOffset != 6000 {
		t.Fatalf("pinned by %+v, LSO %d", d.PinnedBy, l.LastStableOffset)
	}
	if rb := present.Runbook(d); !strings.Contains(rb, "producer 7 epoch 3000's transaction from offset 6000") {
		t.Errorf("runbook:\n%s", rb)
	}
}
