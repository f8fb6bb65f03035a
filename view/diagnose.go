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

// Diagnoser diagnoses logs (present.Diagnose) through one bounded
// single-flight cache, joined with the internal-topic evidence recorded
// for each log (SetEvidence). A server holds one, which the diagnosis API
// and the web pages share, so that a page and its API agree and a
// diagnosis is computed once however many ask; a command that diagnoses a
// log dir makes its own. Create one with NewDiagnoser; it is safe for
// concurrent use.
type Diagnoser struct {
	diags    diagCache
	evidence evidence // join.go
}

// NewDiagnoser returns a Diagnoser with nothing cached and no evidence.
func NewDiagnoser() *Diagnoser { return &Diagnoser{} }

// Diagnose is present.Diagnose(l, o) through the cache: a built log does
// not change, and the 1M-batch demo costs ~0.1 s to diagnose, which every
// concurrent caller would otherwise pay on every request. "now" is
// truncated to the second (ages are shown to the second), so a hit is at
// most a second stale, and callers that ask for the same key while it is
// computed wait for that one computation (single flight) instead of
// starting their own. The result is shared: callers must not modify it.
func (dg *Diagnoser) Diagnose(l *txnindex.Log, o diagnosis.Options) *diagnosis.Diagnosis {
	d, _ := dg.DiagnoseRunbook(l, o)
	return d
}

// DiagnoseRunbook is Diagnose with the diagnosis's runbook text (the CLI's
// report), computed once with it and cached alongside.
func (dg *Diagnoser) DiagnoseRunbook(l *txnindex.Log, o diagnosis.Options) (*diagnosis.Diagnosis, string) {
	k := diagKey{l: weak.Make(l), txnTimeout: o.TxnTimeout, maxTimeout: o.MaxTxnTimeout, bootstrap: o.Bootstrap, position: o.Position, limit: txnindex.ListLimit(o.Limit)}
	if !o.Now.IsZero() {
		o.Now = o.Now.Truncate(time.Second)
		k.now = o.Now.Unix()
	}
	c := &dg.diags
	c.mu.Lock()
	e, ok := c.m[k]
	if !ok {
		if c.m == nil || len(c.m) >= diagCacheSize {
			c.m = map[diagKey]*diagEntry{}
		}
		e = &diagEntry{ready: make(chan struct{})}
		c.m[k] = e
	}
	c.mu.Unlock()
	if ok {
		<-e.ready
		return e.d, e.runbook
	}
	// A panic in Diagnose would leave waiters blocked forever; close
	// ready whatever happens and drop the entry so the next caller retries.
	defer func() {
		if e.d == nil {
			c.mu.Lock()
			if c.m[k] == e {
				delete(c.m, k)
			}
			c.mu.Unlock()
			e.d = &diagnosis.Diagnosis{}
		}
		close(e.ready)
	}()
	c.computed.Add(1)
	d := present.Diagnose(l, o)
	dg.join(l, d)
	e.runbook = present.Runbook(d)
	e.d = d
	return e.d, e.runbook
}

// Computations counts the diagnoses dg has computed (not served from its
// cache), for tests and the load test's accounting.
func (dg *Diagnoser) Computations() int64 { return dg.diags.computed.Load() }

// diagCache is the single-flight cache of diagnoses, by log and options.
type diagCache struct {
	mu       sync.Mutex
	m        map[diagKey]*diagEntry
	computed atomic.Int64
}

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
