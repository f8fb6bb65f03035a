package present

import (
	"math"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
)

// TestTV2EpochLabels: the lane label of each producer of the transactions
// v2 logs of txnindex.TestTV2 says whether its epochs are bumps per
// transaction, fencing, or the overflow to a new producer id.
func TestTV2EpochLabels(t *testing.T) {
	const top = math.MaxInt16
	for _, c := range []struct {
		name   string
		log    *testfixture.LogBuilder
		labels []string // per producer lane
	}{
		{"bump per transaction", testfixture.NewLog().TxnAt(7, 0, 2).TxnAt(8, 5, 1).Marker(7, txnindex.ControlAbort, 1).TxnAt(7, 1, 1).Marker(8, txnindex.ControlCommit, 6).Marker(7, txnindex.ControlCommit, 2),
			[]string{"epochs 0–2 (transactions v2: one bump per transaction)", "epochs 5–6 (transactions v2: one bump per transaction)"}},
		{"retried marker", testfixture.NewLog().TxnAt(7, 3, 2).Marker(7, txnindex.ControlAbort, 4).Marker(7, txnindex.ControlAbort, 4).TxnAt(7, 4, 1),
			[]string{"epochs 3–4 (transactions v2: one bump per transaction)"}},
		{"epoch overflow", testfixture.NewLog().TxnAt(7, top-2, 1).Marker(7, txnindex.ControlCommit, top-1).TxnAt(7, top-1, 2).Marker(7, txnindex.ControlAbort, top).TxnAt(9, 0, 1).Plain(-1, 1),
			[]string{"epochs 32765–32767 (transactions v2: one bump per transaction; epoch 32767 exhausted the producer id, its transactional id went on under a new one)",
				"epoch 0"}},
		{"transactions v1 for contrast", testfixture.NewLog().TxnAt(7, 0, 1).Marker(7, txnindex.ControlCommit, 0).TxnAt(7, 1, 1).Marker(7, txnindex.ControlAbort, 1),
			[]string{"epochs 0–1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lanes := Lanes(c.log.Build())[1:]
			if len(lanes) != len(c.labels) {
				t.Fatalf("%d producer lanes, want %d", len(lanes), len(c.labels))
			}
			for i, ln := range lanes {
				if got := EpochLabel(ln.Producer); got != c.labels[i] {
					t.Errorf("lane %d: %q, want %q", i+1, got, c.labels[i])
				}
			}
		})
	}
}

// TestTV2LaneNotInflated: a transactions v2 producer that ran 3,000
// transactions is one lane whose label explains its 3,001 epochs
// (diagnosis.TestTV2DiagnosedAtLastEpoch diagnoses its open transaction).
func TestTV2LaneNotInflated(t *testing.T) {
	b := testfixture.NewLog()
	for e := range int16(3000) {
		b.TxnAt(7, e, 1).Marker(7, txnindex.ControlCommit, e+1)
	}
	b.TxnAt(7, 3000, 2).Plain(-1, 1)
	l := b.Build()
	lanes := Lanes(l)
	if len(lanes) != 2 || lanes[1].Producer.Txns != 3001 || lanes[1].Producer.TV2Markers != 3000 {
		t.Fatalf("lanes %+v", lanes)
	}
	if got, want := EpochLabel(lanes[1].Producer), "epochs 0–3000 (transactions v2: one bump per transaction)"; got != want {
		t.Errorf("label %q, want %q", got, want)
	}
}
