package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
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
	return topic == internaltopic.ConsumerOffsetsTopic || topic == internaltopic.TransactionStateTopic || topic == internaltopic.ShareGroupStateTopic
}

// internalLast orders the diagnoses so the internal topics' partitions
// come after the data partitions (stable otherwise): with 50 + 50 of them
// in a log dir, the answer must not be buried under them.
func internalLast(ds []*diagnosis.Diagnosis) {
	slices.SortStableFunc(ds, func(a, b *diagnosis.Diagnosis) int {
		return cmp.Compare(internalRank(a), internalRank(b))
	})
}

func internalRank(d *diagnosis.Diagnosis) int {
	if isInternalTopic(d.Topic) && d.PinnedBy == nil {
		return 1
	}
	return 0
}

// writeRunbooks prints each diagnosis' runbook, and the clear internal
// partitions in one line. Several partitions (a log directory) first get a
// summary, the stuck ones by LSO lag, so that the answer to "which
// partition, whose transaction" is on the first lines of thousands; the
// data partitions with nothing to say (clear, no open transaction) are then
// named in one line instead of a runbook each.
func writeRunbooks(w io.Writer, ds []*diagnosis.Diagnosis) {
	var clear, quiet []string
	n := 0
	if len(ds) > 1 {
		writeSummary(w, ds)
		n++
	}
	for _, d := range ds {
		if internalRank(d) == 1 {
			clear = append(clear, txnindex.PartitionName(d.Topic, d.Partition))
			continue
		}
		if len(ds) > 1 && nothingToSay(d) {
			quiet = append(quiet, txnindex.PartitionName(d.Topic, d.Partition))
			continue
		}
		if n > 0 {
			fmt.Fprintln(w)
		}
		n++
		fmt.Fprint(w, present.Runbook(d))
	}
	if len(quiet) > 0 {
		if n > 0 {
			fmt.Fprintln(w)
		}
		n++
		fmt.Fprintf(w, "clear, no open transaction (read_committed consumers read to the high watermark): %s\n", strings.Join(quiet, " "))
	}
	if len(clear) > 0 {
		if n > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "internal partitions read for the join, LSO clear: %s\n", strings.Join(clear, " "))
	}
}

// nothingToSay: a clear data partition with no open transaction, no
// compaction, .txnindex difference or lag split to report.
func nothingToSay(d *diagnosis.Diagnosis) bool {
	return d.PinnedBy == nil && d.LastStableOffset >= d.HighWatermark && len(d.OpenTransactions) == 0 &&
		d.Compaction == nil && len(d.TxnIndexMismatches) == 0 && len(d.MarkerRemoved) == 0 && d.Lag == nil && d.Note == "" && d.UnlistedAborted == nil && len(d.TxnIndexRejected) == 0 && d.RecoveryTruncates == nil
}

// writeSummary is the first lines of a diagnosis of several partitions:
// how many are stuck and why, most offsets behind first.
func writeSummary(w io.Writer, ds []*diagnosis.Diagnosis) {
	var stuck, unlisted, rejected, truncated []*diagnosis.Diagnosis
	hanging, late := 0, 0
	for _, d := range ds {
		if d.LastStableOffset < d.HighWatermark {
			stuck = append(stuck, d)
		}
		if d.UnlistedAborted != nil {
			unlisted = append(unlisted, d)
		}
		if len(d.TxnIndexRejected) > 0 {
			rejected = append(rejected, d)
		}
		if d.RecoveryTruncates != nil {
			truncated = append(truncated, d)
		}
		if d.Hanging() {
			hanging++
		} else if d.Alert() {
			late++
		}
	}
	lateText := ""
	if late > 0 {
		lateText = fmt.Sprintf(", %s by a late one whose coordinator was not read (hanging not confirmed)", txnindex.Count(int64(late)))
	}
	fmt.Fprintf(w, "%s: %s stuck (LSO below the high watermark), %s pinned by a hanging transaction%s, %s clear\n",
		txnindex.Plural(len(ds), "partition", "partitions"), txnindex.Count(int64(len(stuck))), txnindex.Count(int64(hanging)), lateText, txnindex.Count(int64(len(ds)-len(stuck))))
	slices.SortStableFunc(stuck, func(a, b *diagnosis.Diagnosis) int { return cmp.Compare(b.LSOLagOffsets, a.LSOLagOffsets) })
	for _, d := range stuck {
		fmt.Fprintf(w, "  %s: %s\n", txnindex.PartitionName(d.Topic, d.Partition), present.Status(d))
	}
	// A broker fails to start with these files: first, whatever the LSO.
	if len(rejected) > 0 {
		fmt.Fprintf(w, "%s a .txnindex whose version Kafka refuses, so a broker fails to start with it:\n", txnindex.Plural(len(rejected), "partition holds", "partitions hold"))
		for _, d := range rejected {
			files := make([]string, len(d.TxnIndexRejected))
			for i, r := range d.TxnIndexRejected {
				files[i] = r.File
			}
			fmt.Fprintf(w, "  %s: %s\n", txnindex.PartitionName(d.Topic, d.Partition), strings.Join(files, ", "))
		}
	}
	// A crash now takes batches from these (a damaged segment the
	// restart recovers), whatever their LSO.
	if len(truncated) > 0 {
		fmt.Fprintf(w, "%s batches to a restart after an unclean shutdown (a damaged segment its recovery truncates):\n", txnindex.Plural(len(truncated), "partition loses", "partitions lose"))
		for _, d := range truncated {
			r := d.RecoveryTruncates
			fmt.Fprintf(w, "  %s: %s at byte %#x, the log then ends at offset %d, LSO %d\n", txnindex.PartitionName(d.Topic, d.Partition), r.Segment, r.Byte, r.Offset, r.LastStableOffset)
		}
	}
	// Whatever their LSO: the broker hands their read_committed consumers
	// aborted records (a lost .txnindex), which a clear LSO hides.
	if len(unlisted) > 0 {
		fmt.Fprintf(w, "%s read_committed consumers aborted records (no .txnindex entry lists them):\n", txnindex.Plural(len(unlisted), "partition hands its", "partitions hand their"))
		for _, d := range unlisted {
			u := d.UnlistedAborted
			fmt.Fprintf(w, "  %s: %s of %s, from offset %d on\n", txnindex.PartitionName(d.Topic, d.Partition),
				txnindex.Plural(u.Records, "record", "records"), txnindex.Plural(u.Transactions, "aborted transaction", "aborted transactions"), u.FirstOffset)
		}
	}
}

// writeDiagnoses prints the diagnoses as JSON or runbooks, and returns
// exit status 3 when one needs an operator (diagnosis.Diagnosis.Alert):
// pinned by a hanging transaction, or by a late one no coordinator
// evidence decided.
func writeDiagnoses(e *env, format string, ds []*diagnosis.Diagnosis) error {
	if format == "json" {
		if err := jsonid.WriteIndent(e.stdout, struct {
			Partitions []*diagnosis.Diagnosis `json:"partitions"`
		}{ds}); err != nil {
			return err
		}
	} else {
		writeRunbooks(e.stdout, ds)
	}
	for _, d := range ds {
		if d.Alert() {
			return &codeError{code: exitHanging}
		}
	}
	return nil
}
