package view

import (
	"sync"

	"github.com/txnscope/txnscope/txnindex"
)

// evidence holds, per loaded log, what its log dir's internal topics say
// (txnindex.Log.Join): the pages and the API show the same transactional
// ids, coordinator states and groups as `diagnose DIR`.
var evidence sync.Map // *txnindex.Log -> txnindex.InternalEvidence

// SetEvidence records the internal-topic evidence for l's diagnoses. Set it
// before l is first diagnosed: cached diagnoses are not recomputed.
func SetEvidence(l *txnindex.Log, ev txnindex.InternalEvidence) { evidence.Store(l, ev) }

// join adds l's recorded evidence to d, if any.
func join(l *txnindex.Log, d *txnindex.Diagnosis) {
	if ev, ok := evidence.Load(l); ok {
		l.Join(d, ev.(txnindex.InternalEvidence))
	}
}
