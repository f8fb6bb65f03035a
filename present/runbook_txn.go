package present

import (
	"fmt"
	"strings"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// offsetsText says where the transaction's offsets are, never printing the
// -1 of "no data here": "offsets 3-7", or "began at offset 120, before the
// log start 500 (deleted by retention)", with what survives of it.
func offsetsText(t *diagnosis.OpenTxnReport, d *diagnosis.Diagnosis) string {
	if !t.BeganBeforeLogStart && !t.BeganInRemoteStorage {
		if t.LastOffset < 0 {
			return fmt.Sprintf("from offset %d, no data batch here", t.FirstOffset)
		}
		return offsetSpan(t.FirstOffset, t.LastOffset)
	}
	cut := t.Cut
	if cut == "" && t.BeganInRemoteStorage {
		cut = "in remote storage"
	} else if cut == "" {
		cut = fmt.Sprintf("before the log start %d (deleted by retention)", d.LogStartOffset)
	}
	s := fmt.Sprintf("began at offset %d, %s", t.FirstOffset, cut)
	if t.LastOffset < 0 {
		return s + ", none of its data survives"
	}
	return s + fmt.Sprintf(", its data survives up to offset %d", t.LastOffset)
}

// offsetSpan is "offset 4" for one offset, "offsets 3-7" for more.
func offsetSpan(from, to int64) string {
	if from == to {
		return fmt.Sprintf("offset %d", from)
	}
	return fmt.Sprintf("offsets %d-%d", from, to)
}

// runbook writes open transaction n of d.
func runbookTxn(sb *strings.Builder, t *diagnosis.OpenTxnReport, n int, d *diagnosis.Diagnosis) {
	if t.Unseen {
		fmt.Fprintf(sb, "\n  open transaction %d: unseen producer, from offset %d\n", n, t.FirstOffset)
	} else {
		fmt.Fprintf(sb, "\n  open transaction %d: producer %d epoch %d, %s, %s, %s, %s\n",
			n, t.ProducerID, t.ProducerEpoch, offsetsText(t, d), txnindex.Plural(t.Batches, "batch", "batches"), txnindex.Plural(t.Records, "record", "records"), txnindex.Plural(t.Bytes, "byte", "bytes"))
	}
	fmt.Fprintf(sb, "    %s: %s\n", t.State, t.Reason)
	runbookCoordinator(sb, t)
	if t.ConfirmCommand != "" {
		fmt.Fprintf(sb, "    to confirm it hangs: %s\n", t.ConfirmCommand)
	}
	if t.AbortBreaks != "" {
		fmt.Fprintf(sb, "    before aborting: %s\n", t.AbortBreaks)
	}
	if t.StartEvidence != "" {
		fmt.Fprintf(sb, "    start: %s\n", t.StartEvidence)
	}
	fmt.Fprintf(sb, "    to end it: %s\n", t.AbortCommand)
	if t.AbortByProducerCommand != "" {
		fmt.Fprintf(sb, "    or, naming the producer: %s\n", t.AbortByProducerCommand)
		fmt.Fprintf(sb, "      (coordinator epoch %d, the largest known; evidence: %s)\n", t.CoordinatorEpoch, t.CoordinatorEpochSource)
	}
	switch {
	case t.Unseen:
		fmt.Fprintf(sb, "    aborting discards its records, somewhere in offsets %d-%d (not in the capture)", t.FirstOffset, d.HighWatermark-1)
	case len(t.Discards.Ranges) == 0:
		fmt.Fprintf(sb, "    aborting discards no record that survives here")
	default:
		at := "offsets"
		if t.Discards.Records == 1 {
			at = "offset"
		}
		fmt.Fprintf(sb, "    aborting discards %s at %s ", txnindex.Plural(t.Discards.Records, "record", "records"), at)
		for i, r := range t.Discards.Ranges {
			if i > 0 {
				sb.WriteString(", ")
			}
			if r.From == r.To {
				fmt.Fprintf(sb, "%d", r.From)
			} else {
				fmt.Fprintf(sb, "%d-%d", r.From, r.To)
			}
		}
	}
	fmt.Fprintf(sb, "\n    to see them first: %s\n", strings.ReplaceAll(t.Discards.PrintCommand, "\n", "\n                       "))
}

// runbookPinned writes who pins the LSO by transactional id, and the
// groups it holds up.
func runbookPinned(sb *strings.Builder, d *diagnosis.Diagnosis) {
	if p := d.PinnedBy; p != nil && p.TransactionalID != "" {
		fmt.Fprintf(sb, "  pinned by transactional id %q (coordinator state %s, %s)", p.TransactionalID, p.CoordinatorState, p.CoordinatorSource)
		if p.HangingRule != "" {
			fmt.Fprintf(sb, ", decided by rule %s", p.HangingRule)
		}
		sb.WriteString("\n")
	} else if p != nil && p.HangingRule != "" {
		fmt.Fprintf(sb, "  pinning transaction decided by rule %s\n", p.HangingRule)
	}
	if d.JoinNote != "" {
		fmt.Fprintf(sb, "  join partial: %s\n", d.JoinNote)
	}
	runbookGroupKinds(sb, d)
	defer runbookShareGroups(sb, d)
	if d.ConsumerGroups == nil {
		return
	}
	var affected, other []txnindex.GroupPosition
	for _, g := range d.ConsumerGroups {
		if g.BehindLSO {
			affected = append(affected, g)
		} else {
			other = append(other, g)
		}
	}
	switch {
	case len(d.ConsumerGroups) == 0:
		if d.PinnedBy != nil {
			sb.WriteString("  consumer groups affected: none (no group committed an offset on this partition)\n")
		}
	case len(affected) == 0:
		fmt.Fprintf(sb, "  consumer groups affected: none (%d group(s) committed on this partition, all past the LSO)\n", len(d.ConsumerGroups))
	case d.PinnedBy != nil:
		fmt.Fprintf(sb, "  consumer groups affected (committed offset <= LSO %d; read_committed consumers cannot pass it):\n", d.LastStableOffset)
	default:
		fmt.Fprintf(sb, "  consumer groups (committed offset <= LSO %d):\n", d.LastStableOffset)
	}
	for _, g := range affected {
		what := txnindex.Plural(g.RecordsToLSO, "record", "records") + " to receive before the LSO"
		switch {
		case g.RecordsToLSO < 0:
			what = txnindex.Plural(g.OffsetsToLSO, "offset", "offsets") + " below the LSO (records not counted: no log read)"
		case g.Blocked:
			what = "BLOCKED: waiting at the LSO, receives nothing until it moves"
		}
		fmt.Fprintf(sb, "    %s %q committed %d: %s\n", GroupKindLabel(g.Kind), g.Group, g.Offset, what)
	}
	for _, g := range other {
		fmt.Fprintf(sb, "    %s %q committed %d: past the LSO (a read_uncommitted consumer), not held\n", GroupKindLabel(g.Kind), g.Group, g.Offset)
	}
	if n := txnindex.More(d.ConsumerGroups, d.ConsumerGroupsTotal); n > 0 {
		fmt.Fprintf(sb, "    %s\n", txnindex.MoreText(n, "group", "groups"))
	}
}

// runbookCoordinator writes an open transaction's coordinator line.
func runbookCoordinator(sb *strings.Builder, t *diagnosis.OpenTxnReport) {
	if t.CoordinatorState == "" && t.TransactionalID == "" {
		if t.HangingRule != "" {
			fmt.Fprintf(sb, "    decided by rule %s\n", t.HangingRule)
		}
		return
	}
	fmt.Fprintf(sb, "    coordinator: transactional id %q, state %s", t.TransactionalID, t.CoordinatorState)
	if len(t.CoordinatorPartitions) > 0 {
		sb.WriteString(", partitions")
		for _, p := range t.CoordinatorPartitions {
			fmt.Fprintf(sb, " %s", txnindex.TextWord(p))
		}
	}
	if t.HangingRule != "" {
		fmt.Fprintf(sb, "; decided by rule %s", t.HangingRule)
	}
	sb.WriteString("\n")
}

// JoinRunbook is the runbook's join lines alone (who pins the LSO by
// transactional id, the groups it holds up), for reports that print the
// rest themselves (diagnose --bootstrap, which reads no log).
func JoinRunbook(d *diagnosis.Diagnosis) string {
	var sb strings.Builder
	runbookPinned(&sb, d)
	return sb.String()
}

// CoordinatorRunbook is an open transaction's coordinator line of the
// runbook, "" when nothing was joined.
func CoordinatorLine(t *diagnosis.OpenTxnReport) string {
	var sb strings.Builder
	runbookCoordinator(&sb, t)
	return sb.String()
}

// maxRunbookRuns bounds the LSO history printed in the runbook; the JSON
// keeps all of it.
const maxRunbookRuns = 12

func runbookCapture(sb *strings.Builder, cr *diagnosis.CaptureReport) {
	span := ""
	if cr.FirstMs > 0 {
		span = fmt.Sprintf(" over %s, %s to %s", txnindex.DurationMs(cr.LastMs-cr.FirstMs),
			time.UnixMilli(cr.FirstMs).UTC().Format(time.RFC3339), time.UnixMilli(cr.LastMs).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(sb, "  capture: %s%s; the batches alone imply LSO %d, the broker reported %d\n",
		txnindex.Plural(cr.Fetches, cr.Isolation+" fetch", cr.Isolation+" fetches"), span, cr.BatchesLSO, cr.BrokerLSO)
	start := max(len(cr.History)-maxRunbookRuns, 0)
	if start > 0 {
		fmt.Fprintf(sb, "    (%s omitted; --format json has them all)\n", txnindex.Plural(start, "earlier stretch", "earlier stretches"))
	}
	for _, r := range cr.History[start:] {
		when := ""
		if r.FromMs > 0 {
			when = time.UnixMilli(r.FromMs).UTC().Format("15:04:05.000") + " "
		}
		fmt.Fprintf(sb, "    %s%s at %s: LSO %d, high watermark %d, %s returned, %s\n",
			when, txnindex.Plural(r.Fetches, "fetch", "fetches"), offsetSpan(r.FetchOffsets.From, r.FetchOffsets.To), r.LastStableOffset, r.HighWatermark,
			txnindex.Plural(r.Batches, "batch", "batches"), txnindex.Plural(len(r.Aborted), "aborted entry", "aborted entries"))
	}
	if p := cr.Position; p != nil {
		if p.Passed {
			fmt.Fprintf(sb, "    the consumer got past offset %d (it last fetched at %d)\n", p.Offset, p.LastFetchOffset)
		} else {
			fmt.Fprintf(sb, "    the consumer never got past offset %d (it last fetched at %d)\n", p.Offset, p.LastFetchOffset)
		}
	}
}
