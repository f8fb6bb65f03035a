package server

import (
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/view"
)

// addOpened makes a source of each partition an Options.Opened holds,
// within the budget b on opening a listed partition in full.
func (c *catalog) addOpened(op Opened, b load.Budget) {
	if op.Index != nil {
		// catalog_lazy.go: its partitions opened as a --load's are.
		c.addLogDir(op.ID, load.NewLogDir(op.Index, load.Question{Kind: load.Whole, Position: -1, Segments: true}, b))
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
