package present

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// Status is the runbook's one sentence on the partition's LSO: STUCK and
// what pins it, or clear.
func Status(d *diagnosis.Diagnosis) string {
	switch p := d.PinnedBy; {
	case p == nil && d.Note != "":
		return fmt.Sprintf("not a data partition: %s", d.Note)
	case d.OffsetsUnknown != nil:
		return "unknown: no .log segment was read, so nothing says where the LSO is"
	case p == nil && d.LastStableOffset < d.HighWatermark:
		// Never "clear" while consumers are held below the HWM.
		return fmt.Sprintf("STUCK: the LSO is %s behind the high watermark, and no transaction found here holds it", txnindex.Plural(d.LSOLagOffsets, "offset", "offsets"))
	case p == nil && len(d.OpenTransactions) == 0:
		return "clear: no open transaction; read_committed consumers can read to the high watermark"
	case p == nil:
		return "clear: open transactions exist but none holds the LSO below the high watermark"
	case p.Unseen:
		return fmt.Sprintf("STUCK: the LSO has been held for %s, %s behind the high watermark, pinned by a transaction the capture did not see, from offset %d (%s)",
			heldText(d), txnindex.Plural(d.LSOLagOffsets, "offset", "offsets"), p.FirstOffset, p.State)
	case p.State == diagnosis.StateDecidedUnreplicated:
		return fmt.Sprintf("STUCK: the LSO is %s behind the high watermark, held by producer %d epoch %d's transaction from offset %d, decided (%s marker at offset %d) but not yet replicated: the marker is at or above the high watermark %d (%s)",
			txnindex.Plural(d.LSOLagOffsets, "offset", "offsets"), p.ProducerID, p.ProducerEpoch, p.FirstOffset, p.MarkerType, *p.MarkerOffset, d.HighWatermark, p.HighWatermarkSource)
	default:
		state := StateWords(p.State)
		if p.State == diagnosis.StateLate && p.HangingRule == "" {
			state = "late; hanging not confirmed"
		} else if p.State == diagnosis.StateLate {
			state = "late, not hanging"
		}
		return fmt.Sprintf("STUCK: the LSO has been held for %s, %s behind the high watermark (their writes span %s), pinned by producer %d epoch %d's transaction from offset %d (%s)",
			heldText(d), txnindex.Plural(d.LSOLagOffsets, "offset", "offsets"), spanText(d), p.ProducerID, p.ProducerEpoch, p.FirstOffset, state)
	}
}

// Runbook renders the diagnosis as a short runbook.
func Runbook(d *diagnosis.Diagnosis) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s\n", txnindex.PartitionName(d.Topic, d.Partition))
	if d.TopicNameProblem != "" {
		fmt.Fprintf(&sb, "  topic name Kafka would reject: %s: %s; no command is printed for it\n", txnindex.TextWord(d.Topic), d.TopicNameProblem)
	}
	runbookOffsets(&sb, d)
	runbookTiered(&sb, d)
	if r := d.Replay; r != nil {
		fmt.Fprintf(&sb, "  read: %s\n", ReplayLine(r))
	}
	fmt.Fprintf(&sb, "  %s\n", Status(d))
	runbookPinned(&sb, d)
	runbookRestart(&sb, d)
	runbookTruncation(&sb, d)
	if r := RejectedLine(d); r != "" {
		fmt.Fprintf(&sb, "  BROKER CANNOT LOAD THIS PARTITION: %s\n    %s\n", r, RejectedRemedy(d))
	}
	if u := UnlistedLine(d); u != "" {
		if r := UnlistedRemedy(d); r != "" {
			fmt.Fprintf(&sb, "  ABORTED RECORDS DELIVERED: %s; the .txnindex differences below say which\n", u)
			fmt.Fprintf(&sb, "    %s\n", r)
		} else {
			fmt.Fprintf(&sb, "  ABORTED RECORDS DELIVERED: %s\n", u)
		}
	}
	if usesBootstrapVar(d) {
		fmt.Fprintf(&sb, "  the commands below use %s: set it to your brokers first (BOOTSTRAP=kafka:9092), or pass --bootstrap\n", BootstrapVar)
	}
	if d.TopicUnknown {
		fmt.Fprintf(&sb, "  the topic is not known (a segment read alone is named by its base offset, not its topic): the commands below use %s; set it first (TOPIC=orders)\n", TopicVar)
	}
	if c := d.Capture; c != nil {
		runbookCapture(&sb, c)
	}
	for i := range d.OpenTransactions {
		runbookTxn(&sb, &d.OpenTransactions[i], i+1, d)
	}
	moreLine(&sb, txnindex.More(d.OpenTransactions, d.OpenTransactionsTotal), "open transaction", "open transactions")
	for i := range d.Unreplicated {
		t := &d.Unreplicated[i]
		fmt.Fprintf(&sb, "\n  decided, unreplicated transaction %d: producer %d epoch %d, %s, %s marker at offset %d\n",
			i+1, t.ProducerID, t.ProducerEpoch, offsetsText(t, d), t.MarkerType, *t.MarkerOffset)
		fmt.Fprintf(&sb, "    %s\n", t.Reason) // the line above says its state in words
		fmt.Fprintf(&sb, "    to end it: %s\n", t.EndsWhen)
		fmt.Fprintf(&sb, "    check the replicas (Isr against Replicas of partition %d): %s\n", d.Partition, t.CheckCommand)
	}
	moreLine(&sb, txnindex.More(d.Unreplicated, d.UnreplicatedTotal), "decided, unreplicated transaction", "decided, unreplicated transactions")
	runbookCompaction(&sb, d)
	runbookClients(&sb, d)
	if l := d.Lag; l != nil {
		fmt.Fprintf(&sb, "\n  lag from position %d to the high watermark %d: %s\n", l.Position, l.HighWatermark, txnindex.Plural(l.Offsets, "offset", "offsets"))
		fmt.Fprintf(&sb, "    %s still to deliver, %s, %s, %s waiting behind open transactions, %s missing\n",
			txnindex.Plural(l.ToDeliver, "record", "records"), txnindex.Plural(l.ControlMarkers, "control marker", "control markers"), txnindex.Plural(l.Aborted, "aborted record", "aborted records"),
			txnindex.Plural(l.BehindOpenTxns, "record", "records"), txnindex.Plural(l.Missing, "offset", "offsets"))
		if l.LastReachable < 0 {
			fmt.Fprintf(&sb, "    a read_committed consumer receives nothing from there; its position stops at %d\n", l.PositionAfterAll)
		} else {
			fmt.Fprintf(&sb, "    a read_committed consumer can reach offset %d; its position stops at %d\n", l.LastReachable, l.PositionAfterAll)
		}
	}
	return sb.String()
}

// heldText is LSOHeldMs in words: "422d 17h", "at least 5s", "an unknown time".
func heldText(d *diagnosis.Diagnosis) string {
	switch {
	case d.LSOHeldMs < 0:
		return "an unknown time"
	case d.LSOHeldAtLeast:
		return "at least " + txnindex.DurationMs(d.LSOHeldMs)
	}
	return txnindex.DurationMs(d.LSOHeldMs)
}

// spanText is what the offsets behind the LSO span, as the status says it.
func spanText(d *diagnosis.Diagnosis) string {
	if d.LSOLagAtLeast {
		return "at least " + txnindex.DurationMs(d.LSOLagMs)
	}
	return txnindex.DurationMs(d.LSOLagMs)
}

// runbookOffsets is the runbook's offsets line.
func runbookOffsets(sb *strings.Builder, d *diagnosis.Diagnosis) {
	u := d.OffsetsUnknown
	if u == nil {
		fmt.Fprintf(sb, "  log start %d, log end %d, high watermark %d (%s), last stable offset %d\n",
			d.LogStartOffset, d.LogEndOffset, d.HighWatermark, d.HighWatermarkSource, d.LastStableOffset)
		return
	}
	fmt.Fprintf(sb, "  offsets unknown: %s\n", u.Reason)
	if len(u.Evidence) > 0 {
		sb.WriteString("  what the directory shows:\n")
	}
	for _, e := range u.Evidence {
		fmt.Fprintf(sb, "    - %s\n", e)
	}
}

func runbookTiered(sb *strings.Builder, d *diagnosis.Diagnosis) {
	t := d.Tiered
	if t == nil {
		return
	}
	fmt.Fprintf(sb, "  tiered storage (KIP-405): offsets %d-%d are in remote storage, the first local segment begins at %d; the broker takes the log start from log-start-offset-checkpoint as it is (LogLoader.load with remote storage)\n",
		t.LogStartOffset, t.LocalLogStartOffset-1, t.LocalLogStartOffset)
	for _, e := range t.Evidence {
		fmt.Fprintf(sb, "    - %s\n", e)
	}
}

// runbookRestart writes the restart report, if any.
func runbookRestart(sb *strings.Builder, d *diagnosis.Diagnosis) {
	r := d.AfterRestart
	if r == nil {
		return
	}
	fmt.Fprintf(sb, "\n  the running broker against its next restart: LSO %d now, %d after a restart that follows an unclean shutdown\n", d.LastStableOffset, r.LastStableOffset)
	fmt.Fprintf(sb, "    %s\n", r.Text)
}

// runbookTruncation writes what an unclean restart's recovery takes, if
// anything.
func runbookTruncation(sb *strings.Builder, d *diagnosis.Diagnosis) {
	r := d.RecoveryTruncates
	if r == nil {
		return
	}
	fmt.Fprintf(sb, "\n  AN UNCLEAN RESTART TRUNCATES THIS LOG at offset %d: LSO %d now, %d after it\n", r.Offset, d.LastStableOffset, r.LastStableOffset)
	fmt.Fprintf(sb, "    %s\n", r.Text)
}

// runbookCompaction writes the cleaner's evidence, the .txnindex
// differences and the transactions whose marker the cleaner removed.
func runbookCompaction(sb *strings.Builder, d *diagnosis.Diagnosis) {
	if c := d.Compaction; c != nil {
		fmt.Fprintf(sb, "\n  compacted: the log cleaner has worked on this partition (cleanup.policy includes compact):\n")
		for _, e := range c.Evidence {
			fmt.Fprintf(sb, "    - %s\n", e)
		}
		if c.Scope != "" {
			fmt.Fprintf(sb, "    (%s)\n", c.Scope)
		}
	}
	if len(d.TxnIndexMismatches) > 0 {
		fmt.Fprintf(sb, "\n  .txnindex on disk differs from the one rebuilt from the batches in %s:\n", txnindex.Plural(max(d.TxnIndexMismatchesTotal, len(d.TxnIndexMismatches)), "entry", "entries"))
		ms := d.TxnIndexMismatches
		for len(ms) > 0 {
			// Differences with one explanation in one file (every entry
			// of a lost .txnindex) are one line.
			n := 1
			for n < len(ms) && ms[n].Segment == ms[0].Segment && ms[n].Kind == ms[0].Kind && ms[n].Explanation == ms[0].Explanation && ms[n].Note == ms[0].Note {
				n++
			}
			fmt.Fprintf(sb, "    - %s: %s\n", mismatchWords(ms[0], n), ms[0].Note)
			ms = ms[n:]
		}
		if n := txnindex.More(d.TxnIndexMismatches, d.TxnIndexMismatchesTotal); n > 0 {
			fmt.Fprintf(sb, "    - %s\n", txnindex.MoreText(n, "difference", "differences"))
		}
	}
	for i := range d.MarkerRemoved {
		t := &d.MarkerRemoved[i]
		fmt.Fprintf(sb, "\n  decided, marker removed by the cleaner, transaction %d: producer %d epoch %d, %s\n",
			i+1, t.ProducerID, t.ProducerEpoch, offsetsText(t, d))
		fmt.Fprintf(sb, "    %s\n", t.Reason) // the line above says its state in words
	}
	moreLine(sb, txnindex.More(d.MarkerRemoved, d.MarkerRemovedTotal), "transaction whose marker the cleaner removed", "transactions whose marker the cleaner removed")
}

// mismatchWords says what n differences like m are: "00000000000000000100.txnindex
// lacks 3 entries the log implies (the first: …)".
func mismatchWords(m txnindex.MismatchReport, n int) string {
	switch m.Kind {
	case txnindex.MissingOnDisk.String():
		if n == 1 {
			return fmt.Sprintf("%s lacks an entry the log implies (%s)", m.Segment, m.Rebuilt)
		}
		return fmt.Sprintf("%s lacks %s the log implies (the first: %s)", m.Segment, txnindex.Plural(n, "entry", "entries"), m.Rebuilt)
	case txnindex.ExtraOnDisk.String():
		if n == 1 {
			return fmt.Sprintf("%s has an entry the log does not imply (%s)", m.Segment, m.Disk)
		}
		return fmt.Sprintf("%s has %s the log does not imply (the first: %s)", m.Segment, txnindex.Plural(n, "entry", "entries"), m.Disk)
	}
	if n == 1 {
		return fmt.Sprintf("%s has other offsets for an entry (%s; rebuilt: %s)", m.Segment, m.Disk, m.Rebuilt)
	}
	return fmt.Sprintf("%s has other offsets for %s (the first: %s; rebuilt: %s)", m.Segment, txnindex.Plural(n, "entry", "entries"), m.Disk, m.Rebuilt)
}

// moreLine is the runbook's line for the entries of a list left out: "…
// and 99,900 more open transactions", with how to list them.
func moreLine(sb *strings.Builder, n int, one, many string) {
	if n > 0 {
		fmt.Fprintf(sb, "\n  %s (diagnose --limit N lists up to %s)\n", txnindex.MoreText(n, one, many), txnindex.Count(txnindex.MaxListLimit))
	}
}

// usesBootstrapVar: some command of d needs BOOTSTRAP set.
func usesBootstrapVar(d *diagnosis.Diagnosis) bool {
	for _, ts := range [][]diagnosis.OpenTxnReport{d.OpenTransactions, d.Unreplicated} {
		for i := range ts {
			if UsesBootstrapVar(ts[i].AbortCommand) || UsesBootstrapVar(ts[i].Discards.PrintCommand) || UsesBootstrapVar(ts[i].ConfirmCommand) {
				return true
			}
		}
	}
	return false
}
