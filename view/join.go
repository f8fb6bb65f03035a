package view

import (
	"runtime"
	"sync"
	"weak"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/txnindex"
)

// evidence holds, per loaded log, what its log dir's internal topics say
// (diagnosis.Join): the pages and the API show the same transactional
// ids, coordinator states and groups as `diagnose DIR`. It holds the logs
// weakly: an entry goes with its log when the server lets the log go (an
// evicted upload, a lazily opened partition dropped under --max-memory),
// so that the evidence never keeps a log alive nor outlives it.
type evidence struct {
	mu sync.Mutex
	m  map[weak.Pointer[txnindex.Log]]joined
}

type joined struct {
	ev       txnindex.InternalEvidence
	readFrom int64 // the first offset the log holds batches from; -1: all
}

func (e *evidence) set(l *txnindex.Log, j joined) {
	k := weak.Make(l)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[weak.Pointer[txnindex.Log]]joined{}
	}
	if _, ok := e.m[k]; !ok {
		runtime.AddCleanup(l, func(k weak.Pointer[txnindex.Log]) {
			e.mu.Lock()
			delete(e.m, k)
			e.mu.Unlock()
		}, k)
	}
	e.m[k] = j
}

func (e *evidence) get(l *txnindex.Log) (joined, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, ok := e.m[weak.Make(l)]
	return j, ok
}

// evidenceCount is how many logs have evidence recorded (tests).
func (dg *Diagnoser) evidenceCount() int {
	dg.evidence.mu.Lock()
	defer dg.evidence.mu.Unlock()
	return len(dg.evidence.m)
}

// SetEvidence records the internal-topic evidence for l's diagnoses. Set it
// before l is first diagnosed: cached diagnoses are not recomputed.
func (dg *Diagnoser) SetEvidence(l *txnindex.Log, ev txnindex.InternalEvidence) {
	dg.evidence.set(l, joined{ev: ev, readFrom: -1})
}

// SetTailEvidence is SetEvidence for a log that holds only the batches
// from readFrom on (a lazily opened partition's tail, logindex.ScanTail):
// a group committed below readFrom would have its records to the LSO
// counted from readFrom only, and could be called blocked for want of the
// records before it, so its count is left out (-1, "offsets below the
// LSO", as for a group placed without a log) and it is blocked only when
// it sits at the LSO.
func (dg *Diagnoser) SetTailEvidence(l *txnindex.Log, ev txnindex.InternalEvidence, readFrom int64) {
	dg.evidence.set(l, joined{ev: ev, readFrom: readFrom})
}

// SetEvidenceOf records the internal topics of a loaded log dir (ld.Dirs)
// for the diagnoses of the partitions read from its files (not a
// capture's), as `diagnose DIR` joins them: the server's loads and
// `txnscope export` read a log dir this one way. An unreadable internal
// partition leaves the diagnoses unjoined; its damage is the loader's to
// report.
func (dg *Diagnoser) SetEvidenceOf(ld *input.Contents) {
	if len(ld.Dirs) == 0 {
		return
	}
	in, err := internaltopic.ReadLogDir(&loader.LogDir{Partitions: ld.Dirs})
	if err != nil {
		return
	}
	ev := in.Evidence()
	if ev.Coordinators == nil && !ev.HaveOffsets && !ev.HaveShareStates && ev.RemoteStorage == nil {
		return
	}
	for _, p := range ld.Partitions {
		if p.Fetches == nil {
			dg.SetEvidence(p.Log, ev)
		}
	}
}

// join adds l's recorded evidence to d, if any.
func (dg *Diagnoser) join(l *txnindex.Log, d *diagnosis.Diagnosis) {
	j, ok := dg.evidence.get(l)
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
