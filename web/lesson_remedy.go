package web

// The end of a stuck-LSO lesson: the remedy played out. When the engine's
// diagnosis finds the LSO pinned by a hanging transaction (KIP-664), or by
// a late one no coordinator evidence decided (diagnosis.Diagnosis.Alert),
// the lesson appends, one step each, the ABORT marker that
// `kafka-transactions.sh abort --start-offset` makes the broker write for
// every such transaction, oldest first; the LSO moves and the consumer
// proceeds, computed by the same engine as every other step.

import (
	"cmp"
	"slices"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// remedies returns the commands and the markers they write, after the
// log end: offsets from the log end offset on, in the last segment, at
// the diagnosis' clock (the newest timestamp in the log).
func remedies(l *txnindex.Log) ([]string, []txnindex.Batch) {
	// No bootstrap: the commands name the shell variable BOOTSTRAP
	// (present.BootstrapVar), so the command runs once it is set.
	d := present.Diagnose(l, diagnosis.Options{Position: -1})
	if !d.Alert() || d.Capture != nil || len(l.Segments) == 0 {
		// A capture's LSO is the broker's word, not a log to append to.
		return nil, nil
	}
	hanging := slices.DeleteFunc(slices.Clone(d.OpenTransactions), func(t diagnosis.OpenTxnReport) bool {
		act := t.State == diagnosis.StateHanging || t.State == diagnosis.StateLate && t.HangingRule == ""
		return !act || t.Unseen
	})
	slices.SortFunc(hanging, func(a, b diagnosis.OpenTxnReport) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	si := int32(len(l.Segments) - 1)
	off, pos := l.LogEndOffset, l.Segments[si].Size
	var cmds []string
	var out []txnindex.Batch
	for i := range hanging {
		t := &hanging[i]
		raw, b := scenario.AdminAbort(scenario.Abort{ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, CoordinatorEpoch: t.CoordinatorEpoch}, off, d.Now, si, pos)
		off, pos = off+1, pos+int64(len(raw))
		cmds = append(cmds, t.AbortCommand)
		out = append(out, b)
	}
	return cmds, out
}
