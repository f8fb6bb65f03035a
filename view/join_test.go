package view

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/txnscope/txnscope/txnindex"
)

// TestEvidenceGoesWithItsLog: the evidence recorded for a log does not keep
// it alive, and its entry is dropped once the log is collected, so a
// server that evicts logs (uploads, lazily opened partitions) does not
// grow without bound.
func TestEvidenceGoesWithItsLog(t *testing.T) {
	before := evidenceCount()
	for range 50 {
		l := &txnindex.Log{Topic: "t"}
		SetEvidence(l, txnindex.InternalEvidence{})
	}
	kept := &txnindex.Log{Topic: "kept"}
	SetTailEvidence(kept, txnindex.InternalEvidence{}, 5)
	deadline := time.Now().Add(10 * time.Second)
	for evidenceCount() > before+1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := evidenceCount(); n != before+1 {
		t.Fatalf("%d logs have evidence after the 50 dropped ones were collected, want %d", n, before+1)
	}
	evidence.mu.Lock()
	_, ok := evidence.m[weak.Make(kept)]
	evidence.mu.Unlock()
	if !ok {
		t.Error("the live log's evidence is gone")
	}
	runtime.KeepAlive(kept)
}
