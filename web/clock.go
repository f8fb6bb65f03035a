package web

import (
	"net/http"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// Whose clock a page's ages are measured with (DiagnosisView.ClockWhat).
const (
	clockServer  = view.ClockServer
	clockDemo    = view.ClockDemo
	clockLog     = view.ClockLog
	clockGiven   = view.ClockGiven
	clockCapture = "the end of the capture"
	clockExport  = "the time of the export"
)

// utcText is the pages' one format for a time: UTC, to the second.
func utcText(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05") + " UTC"
}

// diagnoseOptions reads a page's diagnosis options with the one clock rule
// the pages and the diagnosis API share (view.DiagnoseClock: a demo is aged
// by its own time). The bootstrap is taken out: the diagnosis prints
// present.BootstrapVar and the view puts the address in (so that one
// cached diagnosis serves every address, and the page's script can redo
// it).
func (u *UI) diagnoseOptions(r *http.Request, source string) (o diagnosis.Options, bootstrap, clock string, err error) {
	o, clock, err = view.DiagnoseClock(r.URL.Query(), u.now(), u.isDemo(source))
	if err != nil {
		return o, "", "", err
	}
	bootstrap, o.Bootstrap = o.Bootstrap, ""
	return o, bootstrap, clock, nil
}

func (u *UI) isDemo(id string) bool {
	for _, s := range u.cat.Sources() {
		if s.ID == id {
			return s.Demo
		}
	}
	return false
}

// clockMs is the time, in Unix milliseconds, that o measures ages against:
// o.Now, or with none (a demo's own time, now=log) the diagnosis's own
// clock, its newest write.
func clockMs(o diagnosis.Options, d *diagnosis.Diagnosis) int64 {
	switch {
	case !o.Now.IsZero():
		return o.Now.UnixMilli()
	case d != nil:
		return d.Now
	}
	return -1
}

// newestWrite is the newest batch timestamp of l, the clock a diagnosis
// with a zero Now uses; -1 for none.
func newestWrite(l *txnindex.Log) int64 {
	n := int64(-1)
	for i := range l.Batches {
		n = max(n, l.Batches[i].MaxTimestamp)
	}
	return n
}
