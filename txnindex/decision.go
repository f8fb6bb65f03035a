package txnindex

import (
	"fmt"
	"strings"
)

// Verdict is what a consumer does with a run of offsets.
type Verdict uint8

// Verdicts. Missing is not a consumer action: it marks offsets absent from the
// log, reported so that nothing is skipped silently.
const (
	Delivered      Verdict = iota // returned to the application
	Aborted                       // skipped: data of an aborted transaction
	Control                       // a COMMIT/ABORT (or other control) record, never returned
	Pending                       // at or past the LSO (read_committed) or high watermark: not yet readable
	BeforePosition                // below the fetch/seek position or the log start offset
	Missing                       // no record at these offsets
	// Unpredictable: what the client does here depends on more than the
	// log holds (which offsets a compacted batch kept, for a client that
	// filters record by record); Decision.Reason says what is missing.
	Unpredictable
)

// String returns the lower-case name used in NDJSON and the UI.
func (v Verdict) String() string {
	switch v {
	case Delivered:
		return "delivered"
	case Aborted:
		return "aborted"
	case Control:
		return "control"
	case Pending:
		return "pending"
	case BeforePosition:
		return "before_position"
	case Missing:
		return "gap"
	case Unpredictable:
		return "unpredictable"
	}
	return "unknown"
}

// Cause is the machine-readable reason for a verdict.
type Cause uint8

// Causes, grouped by the verdict they explain.
const (
	CauseNone Cause = iota

	// Delivered.
	CauseNonTransactional          // a batch without the transactional bit
	CauseNotAborted                // transactional, producer not in the aborted set
	CauseNonTxnFromAbortedProducer // non-transactional batch of a producer in the aborted set: never filtered
	CauseReadUncommitted           // read_uncommitted delivers every data record below the HWM
	CauseLegacy                    // magic 0/1 entries carry no producer id

	// Aborted.
	CauseAbortedTxn // producer in the aborted set, batch transactional

	// Control. A control batch the cleaner emptied holds no record and is
	// a gap (CauseGapEmptiedBatch), never a control decision.
	CauseCommitMarker
	CauseAbortMarker
	CauseOtherControl

	// Pending.
	CauseAtOrAboveLSO
	CauseAtOrAboveHWM
	CauseUnreachable // the consumer cannot get past an earlier batch

	// BeforePosition.
	CauseBelowPosition
	CauseBelowLogStart

	// Gap.
	CauseGapCompacted
	CauseGapSegmentBoundary
	CauseGapEmptiedBatch
	CauseGapBeforeFirstBatch
	CauseGapOverlap

	// Client variants (clients.go), which depart from Kafka's rule.
	CauseAbortedDelivered    // Delivered: Kafka's rule skips it, this client hands it over
	CauseControlDelivered    // Delivered: a COMMIT/ABORT marker handed to the application as a record
	CauseClientCannotDecode  // Pending: the client cannot decompress a batch of this fetch
	CauseClientUnpredictable // Unpredictable: the client's filter needs offsets the log does not hold
	CauseClientNoRecord      // Pending: the client's fetches from here return no record, and it never moves on

	// Gap, after the others so that the codes before keep their numbers.
	CauseGapDamaged
)

var causeNames = [...]string{
	CauseNone:                      "none",
	CauseNonTransactional:          "non_transactional",
	CauseNotAborted:                "not_aborted",
	CauseNonTxnFromAbortedProducer: "non_transactional_from_aborted_producer",
	CauseReadUncommitted:           "read_uncommitted",
	CauseLegacy:                    "legacy_message_set",
	CauseAbortedTxn:                "aborted_transaction",
	CauseCommitMarker:              "commit_marker",
	CauseAbortMarker:               "abort_marker",
	CauseOtherControl:              "other_control",
	CauseAtOrAboveLSO:              "at_or_above_lso",
	CauseAtOrAboveHWM:              "at_or_above_high_watermark",
	CauseUnreachable:               "unreachable",
	CauseBelowPosition:             "below_position",
	CauseBelowLogStart:             "below_log_start",
	CauseGapCompacted:              "gap_compacted",
	CauseGapSegmentBoundary:        "gap_segment_boundary",
	CauseGapEmptiedBatch:           "gap_emptied_batch",
	CauseGapBeforeFirstBatch:       "gap_before_first_batch",
	CauseGapOverlap:                "gap_overlap",
	CauseAbortedDelivered:          "aborted_delivered",
	CauseControlDelivered:          "control_delivered",
	CauseClientCannotDecode:        "client_cannot_decode",
	CauseClientUnpredictable:       "client_unpredictable",
	CauseClientNoRecord:            "client_no_record",
	CauseGapDamaged:                "gap_damaged",
}

// String returns the snake_case name of the cause.
func (c Cause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "unknown"
}

func gapCause(c GapCause) Cause {
	switch c {
	case GapCompacted:
		return CauseGapCompacted
	case GapSegmentBoundary:
		return CauseGapSegmentBoundary
	case GapEmptiedBatch:
		return CauseGapEmptiedBatch
	case GapBeforeFirstBatch:
		return CauseGapBeforeFirstBatch
	case GapOverlap:
		return CauseGapOverlap
	case GapDamaged:
		return CauseGapDamaged
	}
	return CauseNone
}

// Decision is the verdict for the offsets [From, To] of one batch (or one gap),
// with the parts of its reason. Decisions point into the Log; they are
// values, cheap to copy, and building one allocates nothing.
type Decision struct {
	From, To    int64
	Verdict     Verdict
	Cause       Cause
	Uncommitted Verdict // what read_uncommitted does with the same offsets
	// Variant is the client whose decision this is when it is one of the
	// clients that depart from Kafka's rule (Variant.Client), for Reason;
	// zero (java) otherwise. It takes the padding before BatchIndex.
	Variant    Variant
	BatchIndex int32 // index of Batch in the Log, or -1

	Batch *Batch // nil for a gap between batches; Batch.Segment indexes Log.Segments
	Txn   *Txn   // the transaction the batch belongs to, if known

	// Abort is the aborted-list element that put the producer in the
	// aborted set (Aborted, CauseNonTxnFromAbortedProducer), and AbortInfo
	// the broker's full entry for it when known.
	Abort     AbortedTransaction
	AbortInfo *AbortInfo

	FetchOffset int64 // offset of the fetch that returned the batch; -1 if none did
	Bound       int64 // Pending: the LSO or HWM; BeforePosition: the position
}

// Offsets is the number of offsets the decision covers.
func (d *Decision) Offsets() int64 { return d.To - d.From + 1 }

// reason is Reason for a decision made by Kafka's rule.
func (d *Decision) reason() string {
	var sb strings.Builder
	b := d.Batch
	who := ""
	if b != nil && b.HasProducerID() {
		who = fmt.Sprintf("producer %d epoch %d", b.ProducerID, b.ProducerEpoch)
	}
	switch d.Cause {
	case CauseNonTransactional:
		if who != "" {
			fmt.Fprintf(&sb, "delivered: non-transactional batch of %s", who)
		} else {
			sb.WriteString("delivered: non-transactional batch without a producer id")
		}
	case CauseLegacy:
		fmt.Fprintf(&sb, "delivered: magic %d message set, which has no producer id and is never filtered", b.Magic())
	case CauseNotAborted:
		fmt.Fprintf(&sb, "delivered: transactional batch of %s, producer not in the aborted set", who)
		switch t := d.Txn; {
		case t == nil:
		case t.State == TxnCommitted:
			fmt.Fprintf(&sb, " (transaction [%d,%d] committed by marker at %d)", t.FirstOffset, t.LastDataOffset, t.MarkerOffset)
		case t.State == TxnAborted && t.Entry == nil:
			fmt.Fprintf(&sb, " (transaction [%d,%d] aborted by marker at %d, but no .txnindex entry lists it, so the broker's aborted list leaves it out)", t.FirstOffset, t.LastDataOffset, t.MarkerOffset)
		case t.State == TxnAborted && t.Entry.FromDisk && b != nil && t.Entry.Entry.FirstOffset > b.LastOffset():
			fmt.Fprintf(&sb, " (transaction [%d,%d] aborted by marker at %d, but its .txnindex entry, first offset %d, put the producer in the aborted set only from there)", t.FirstOffset, t.LastDataOffset, t.MarkerOffset, t.Entry.Entry.FirstOffset)
		case t.State == TxnAborted:
			// A captured response whose broker left the transaction
			// out of its list, or a list cut short: the consumer
			// filters with what the response says.
			fmt.Fprintf(&sb, " (transaction [%d,%d] aborted by marker at %d, but the fetch response's aborted list did not list it)", t.FirstOffset, t.LastDataOffset, t.MarkerOffset)
		}
	case CauseNonTxnFromAbortedProducer:
		fmt.Fprintf(&sb, "delivered: non-transactional batch of %s; the aborted set (entry first offset %d) filters transactional batches only", who, d.Abort.FirstOffset)
	case CauseReadUncommitted:
		sb.WriteString("delivered: read_uncommitted returns every data record below the high watermark")
		if t := d.Txn; t != nil && t.State != TxnCommitted {
			fmt.Fprintf(&sb, " (its transaction is %s)", t.State)
		}
	case CauseAbortedTxn:
		fmt.Fprintf(&sb, "aborted: %s", who)
		if a := d.AbortInfo; a != nil {
			last := a.Entry.LastOffset - 1
			if a.Txn != nil && a.Txn.LastDataOffset >= 0 {
				last = a.Txn.LastDataOffset
			}
			fmt.Fprintf(&sb, ", transaction [%d,%d] aborted by marker at %d, entry in segment %s", a.Entry.FirstOffset, last, a.Entry.LastOffset, a.IndexName)
		} else {
			fmt.Fprintf(&sb, ", aborted transaction starting at %d listed in the fetch response", d.Abort.FirstOffset)
		}
	case CauseCommitMarker:
		fmt.Fprintf(&sb, "control: COMMIT marker of %s", who)
		if b.CoordinatorEpoch() >= 0 {
			fmt.Fprintf(&sb, " (coordinator epoch %d)", b.CoordinatorEpoch())
		}
		sb.WriteString(", never delivered")
	case CauseAbortMarker:
		fmt.Fprintf(&sb, "control: ABORT marker of %s", who)
		if b.CoordinatorEpoch() >= 0 {
			fmt.Fprintf(&sb, " (coordinator epoch %d)", b.CoordinatorEpoch())
		}
		sb.WriteString(", removes the producer from the aborted set; never delivered")
	case CauseOtherControl:
		fmt.Fprintf(&sb, "control: %s control record, never delivered", b.Control())
	case CauseAtOrAboveLSO:
		fmt.Fprintf(&sb, "pending: at or above the last stable offset %d", d.Bound)
		if t := d.Txn; t != nil && t.State == TxnOpen {
			fmt.Fprintf(&sb, "; its transaction (from %d) is still open", t.FirstOffset)
		}
	case CauseAtOrAboveHWM:
		fmt.Fprintf(&sb, "pending: at or above the high watermark %d", d.Bound)
	case CauseUnreachable:
		fmt.Fprintf(&sb, "pending: the consumer cannot pass offset %d", d.Bound)
	case CauseBelowPosition:
		fmt.Fprintf(&sb, "before_position: below the fetch position %d", d.Bound)
	case CauseBelowLogStart:
		fmt.Fprintf(&sb, "before_position: below the log start offset %d", d.Bound)
	case CauseGapCompacted:
		sb.WriteString("gap: offsets removed by the log cleaner (compaction, or markers past their delete horizon)")
	case CauseGapSegmentBoundary:
		sb.WriteString("gap: the next segment starts after the previous one ends")
	case CauseGapEmptiedBatch:
		sb.WriteString("gap: batch emptied by the cleaner (recordsCount 0)")
	case CauseGapBeforeFirstBatch:
		sb.WriteString("gap: no batch between the log start offset and the first batch")
	case CauseGapOverlap:
		sb.WriteString("gap: batch overlaps the previous one")
	case CauseGapDamaged:
		sb.WriteString("gap: in the damaged bytes of the segment before, past its last batch read: a consumer that reaches them fails there until it seeks past them (the decisions after are those of one that did), and the broker's recovery after an unclean shutdown truncates the log there")
	default:
		sb.WriteString(d.Verdict.String())
	}
	return sb.String()
}
