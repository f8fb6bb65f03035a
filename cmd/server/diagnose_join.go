package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// internalEvidence reads the __transaction_state and __consumer_offsets
// partitions among the directories c holds, the way their coordinators load
// them, for diagnose's join (internaltopic.Internal.Evidence); records that
// do not decode are warnings. No such partition gives empty evidence.
func internalEvidence(e *env, c *input.Contents) (txnindex.InternalEvidence, error) {
	if len(c.Dirs) == 0 {
		return txnindex.InternalEvidence{}, nil
	}
	in, err := internaltopic.ReadLogDir(&loader.LogDir{Partitions: c.Dirs})
	if err != nil {
		return txnindex.InternalEvidence{}, err
	}
	for _, d := range in.Damage() {
		fmt.Fprintf(e.stderr, "warning: %v\n", d)
	}
	return in.Evidence(), nil
}

// isInternalTopic reports the broker's own topics, whose partitions are
// evidence for the others' diagnosis rather than the answer.
func isInternalTopic(topic string) bool {
	return topic == internaltopic.ConsumerOffsetsTopic || topic == internaltopic.TransactionStateTopic
}

// internalLast orders the diagnoses so the internal topics' partitions
// come after the data partitions (stable otherwise): with 50 + 50 of them
// in a log dir, the answer must not be buried under them.
func internalLast(ds []*txnindex.Diagnosis) {
	slices.SortStableFunc(ds, func(a, b *txnindex.Diagnosis) int {
		return cmp.Compare(internalRank(a), internalRank(b))
	})
}

func internalRank(d *txnindex.Diagnosis) int {
	if isInternalTopic(d.Topic) && d.PinnedBy == nil {
		return 1
	}
	return 0
}

// writeRunbooks prints each diagnosis' runbook, and the clear internal
// partitions in one line.
func writeRunbooks(w io.Writer, ds []*txnindex.Diagnosis) {
	var clear []string
	n := 0
	for _, d := range ds {
		if internalRank(d) == 1 {
			clear = append(clear, fmt.Sprintf("%s-%d", d.Topic, d.Partition))
			continue
		}
		if n > 0 {
			fmt.Fprintln(w)
		}
		n++
		fmt.Fprint(w, d.Runbook())
	}
	if len(clear) > 0 {
		if n > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "internal partitions read for the join, LSO clear: %s\n", strings.Join(clear, " "))
	}
}

// writeDiagnoses prints the diagnoses as JSON or runbooks, and returns
// exit status 3 when one is pinned by a hanging transaction.
func writeDiagnoses(e *env, format string, ds []*txnindex.Diagnosis) error {
	if format == "json" {
		if err := jsonid.WriteIndent(e.stdout, struct {
			Partitions []*txnindex.Diagnosis `json:"partitions"`
		}{ds}); err != nil {
			return err
		}
	} else {
		writeRunbooks(e.stdout, ds)
	}
	for _, d := range ds {
		if d.Hanging() {
			return &codeError{code: exitHanging}
		}
	}
	return nil
}

// setEvidence records the internal topics of a loaded log dir for the
// diagnoses the pages and the API serve (view.Diagnose joins them). An
// unreadable internal partition leaves the diagnosis unjoined; its damage
// is the loader's to report.
func setEvidence(ld *input.Contents) {
	ev, err := internalEvidence(&env{stderr: io.Discard}, ld)
	if err != nil || ev.Coordinators == nil && !ev.HaveOffsets {
		return
	}
	for _, p := range ld.Partitions {
		if p.Fetches == nil {
			view.SetEvidence(p.Log, ev)
		}
	}
}
