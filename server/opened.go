package server

import (
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/logindex"
	"github.com/txnscope/txnscope/view"
)

// addOpened makes a source of each partition an Options.Opened holds,
// within the limits lim on opening a listed partition in full.
func (c *catalog) addOpened(op Opened, lim logindex.Limits) {
	if op.Index != nil {
		c.addLogDir(op.ID, op.Index, lim) // catalog_lazy.go
		return
	}
	if op.Path != "" {
		c.add(op.ID, op.Path, op.Contents)
		return
	}
	setEvidence(op.Contents)
	srcs := sourcesOf(op.ID, op.Title, op.Contents)
	for _, s := range srcs {
		s.title = op.Title
	}
	c.put(srcs...)
}

// setEvidence records the internal topics of a loaded log dir for the
// diagnoses the pages and the API serve (view.Diagnose joins them), as
// `diagnose DIR` joins them. An unreadable internal partition leaves the
// diagnosis unjoined; its damage is the loader's to report.
func setEvidence(ld *input.Contents) {
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
			view.SetEvidence(p.Log, ev)
		}
	}
}
