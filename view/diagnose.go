package view

import (
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// Diagnose is present.Diagnose(l, o) through one cache shared by the
// diagnosis API and the web pages: a built log does not change, and the 1M-batch demo
// costs ~0.1 s to diagnose, which every concurrent caller would otherwise
// pay on every request. "now" is truncated to the second (ages are shown
// to the second), so a hit is at most a second stale, and callers that ask
// for the same key while it is computed wait for that one computation
// (single flight) instead of starting their own. The result is shared:
// callers must not modify it.
func Diagnose(l *txnindex.Log, o diagnosis.Options) *diagnosis.Diagnosis {
	d, _ := DiagnoseRunbook(l, o)
	return d
}

// DiagnoseRunbook is Diagnose with the diagnosis's runbook text (the CLI's
// report), computed once with it and cached alongside.
func DiagnoseRunbook(l *txnindex.Log, o diagnosis.Options) (*diagnosis.Diagnosis, string) {
	k := diagKey{l: weak.Make(l), txnTimeout: o.TxnTimeout, maxTimeout: o.MaxTxnTimeout, bootstrap: o.Bootstrap, position: o.Position, limit: txnindex.ListLimit(o.Limit)}
	if !o.Now.IsZero() {
		o.Now = o.Now.Truncate(time.Second)
		k.now = o.Now.Unix()
	}
	diags.mu.Lock()
	e, ok := diags.m[k]
	if !ok {
		if diags.m == nil || len(diags.m) >= diagCacheSize {
			diags.m = map[diagKey]*diagEntry{}
		}
		e = &diagEntry{ready: make(chan struct{})}
		diags.m[k] = e
	}
	diags.mu.Unlock()
	if ok {
		<-e.ready
		return e.d, e.runbook
	}
	// A panic in Diagnose would leave waiters blocked forever; close
	// ready whatever happens and drop the entry so the next caller retries.
	defer func() {
		if e.d == nil {
			diags.mu.Lock()
			if diags.m[k] == e {
				delete(diags.m, k)
			}
			diags.mu.Unlock()
			e.d = &diagnosis.Diagnosis{}
		}
		close(e.ready)
	}()
	diags.computed.Add(1)
	d := present.Diagnose(l, o)
	join(l, d)
	e.runbook = present.Runbook(d)
	e.d = d
	return e.d, e.runbook
}

// DiagnoseComputations counts the diagnoses the shared cache has computed
// (not served from it), for tests and the load test's accounting.
func DiagnoseComputations() int64 { return diags.computed.Load() }

type diagKey struct {
	// l is weak: a cached diagnosis must not keep its log alive once
	// the catalog let it go (serve evicts the partitions it opened
	// whole to stay within --max-memory); a diagnosis holds no pointer
	// into its log. A collected log's entries go with the next reset.
	l                      weak.Pointer[txnindex.Log]
	now                    int64 // Unix seconds; 0 for the log's newest timestamp
	txnTimeout, maxTimeout time.Duration
	bootstrap              string
	position               int64
	limit                  int
}

type diagEntry struct {
	ready   chan struct{} // closed once d and runbook are set
	d       *diagnosis.Diagnosis
	runbook string
}

// diagCacheSize bounds the keys kept. A new second is a new key, so the
// map is simply dropped when full; entries still being computed stay
// reachable from their waiters.
const diagCacheSize = 128

var diags struct {
	mu       sync.Mutex
	m        map[diagKey]*diagEntry
	computed atomic.Int64
}
