package view

import (
	"runtime"
	"sync"
	"weak"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// evidence holds, per loaded log, what its log dir's internal topics say
// (diagnosis.Join): the pages and the API show the same transactional
// ids, coordinator states and groups as `diagnose DIR`. It holds the logs
// weakly: an entry goes with its log when the server lets the log go (an
// evicted upload, a lazily opened partition dropped under --max-memory),
// so that the evidence never keeps a log alive nor outlives it.
var evidence struct {
	mu sync.Mutex
	m  map[weak.Pointer[txnindex.Log]]joined
}

type joined struct {
	ev       txnindex.InternalEvidence
	readFrom int64 // the first offset the log holds batches from; -1: all
}

func setEvidence(l *txnindex.Log, j joined) {
	k := weak.Make(l)
	evidence.mu.Lock()
	defer evidence.mu.Unlock()
	if evidence.m == nil {
		evidence.m = map[weak.Pointer[txnindex.Log]]joined{}
	}
	if _, ok := evidence.m[k]; !ok {
		runtime.AddCleanup(l, func(k weak.Pointer[txnindex.Log]) {
			evidence.mu.Lock()
			delete(evidence.m, k)
			evidence.mu.Unlock()
		}, k)
	}
	evidence.m[k] = j
}

// evidenceCount is how many logs have evidence recorded (tests).
func evidenceCount() int {
	evidence.mu.Lock()
	defer evidence.mu.Unlock()
	return len(evidence.m)
}

// SetEvidence records the internal-topic evidence for l's diagnoses. Set it
// before l is first diagnosed: cached diagnoses are not recomputed.
func SetEvidence(l *txnindex.Log, ev txnindex.InternalEvidence) {
	setEvidence(l, joined{ev: ev, readFrom: -1})
}

// SetTailEvidence is SetEvidence for a log that holds only the batches
// from readFrom on (a lazily opened partition's tail, logindex.ScanTail):
// a group committed below readFrom would have its records to the LSO
// counted from readFrom only, and could be called blocked for want of the
// records before it, so its count is left out (-1, "offsets below the
// LSO", as for a group placed without a log) and it is blocked only when
// it sits at the LSO.
func SetTailEvidence(l *txnindex.Log, ev txnindex.InternalEvidence, readFrom int64) {
	setEvidence(l, joined{ev: ev, readFrom: readFrom})
}

// join adds l's recorded evidence to d, if any.
func join(l *txnindex.Log, d *diagnosis.Diagnosis) {
	evidence.mu.Lock()
	j, ok := evidence.m[weak.Make(l)]
	evidence.mu.Unlock()
	if !ok {
		return
	}
	diagnosis.Join(l, d, j.ev)
	if j.readFrom < 0 {
		return
	}
	for i := range d.ConsumerGroups {
		g := &d.ConsumerGroups[i]
		if g.BehindLSO && max(g.Offset, l.LogStartOffset) < j.readFrom {
			g.RecordsToLSO, g.Blocked = -1, g.Offset == d.LastStableOffset
		}
	}
}
