package view

import (
	"runtime"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

// TestEvidenceGoesWithItsLog: the evidence recorded for a log does not keep
// it alive, and its entry is dropped once the log is collected, so a
// server that evicts logs (uploads, lazily opened partitions) does not
// grow without bound.
func TestEvidenceGoesWithItsLog(t *testing.T) {
	dg := NewDiagnoser()
	for range 50 {
		l := &txnindex.Log{Topic: "t"}
		dg.SetEvidence(l, txnindex.InternalEvidence{})
	}
	kept := &txnindex.Log{Topic: "kept"}
	dg.SetTailEvidence(kept, txnindex.InternalEvidence{}, 5)
	deadline := time.Now().Add(10 * time.Second)
	for dg.evidenceCount() > 1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := dg.evidenceCount(); n != 1 {
		t.Fatalf("%d logs have evidence after the 50 dropped ones were collected, want 1", n)
	}
	if j, ok := dg.evidence.get(kept); !ok || j.readFrom != 5 {
		t.Error("the live log's evidence is gone")
	}
	runtime.KeepAlive(kept)
}

// TestSetEvidenceOf: a log dir's internal topics name the transaction
// that pins orders-0 in the diagnoses of the Diagnoser they were recorded
// in, and only there: each server and each command has its own.
func TestSetEvidenceOf(t *testing.T) {
	ld, err := input.Open(testfixture.WriteJoinLogDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var l *txnindex.Log
	for _, p := range ld.Partitions {
		if p.Log.Topic == "orders" && p.Log.Partition == 0 {
			l = p.Log
		}
	}
	if l == nil {
		t.Fatal("no orders-0")
	}
	dg, other := NewDiagnoser(), NewDiagnoser()
	dg.SetEvidenceOf(ld)
	o := diagnosis.Options{Position: -1}
	if d := dg.Diagnose(l, o); d.PinnedBy == nil || d.PinnedBy.TransactionalID != "zombie-tx" || d.PinnedBy.CoordinatorState != "Ongoing" {
		t.Errorf("joined: pinned by %+v, want zombie-tx, Ongoing", d.PinnedBy)
	}
	if d := other.Diagnose(l, o); d.PinnedBy == nil || d.PinnedBy.TransactionalID != "" {
		t.Errorf("another Diagnoser: pinned by %+v, want no transactional id", d.PinnedBy)
	}
}
