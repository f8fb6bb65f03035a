package web

// The sentences a lesson step shows: what the broker did with the batch and
// why each consumer delivers or skips it (lesson.go builds the steps).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// offsets is "offset 5" or "offsets 5–7".
func offsets(from, to int64) string {
	if from == to {
		return "offset " + span(from, to)
	}
	return "offsets " + span(from, to)
}

func span(from, to int64) string {
	if from == to {
		return strconv.FormatInt(from, 10)
	}
	return strconv.FormatInt(from, 10) + "–" + strconv.FormatInt(to, 10)
}

func who(b *txnindex.Batch) string {
	if !b.HasProducerID() {
		return "A producer without a producer id"
	}
	return "Producer " + strconv.FormatInt(int64(b.ProducerID), 10)
}

// brokerSentence says what the append did on the broker: which transaction
// it opened, extended or ended, the .txnindex entry it appended, and where
// the LSO went.
func brokerSentence(cur *txnindex.Log, bi int, br LessonBroker, entry *LessonEntry) string {
	var sb strings.Builder
	b := &cur.Batches[bi]
	t := cur.TxnOf(bi)
	switch {
	case b.IsEndTxnMarker() && br.Decided != nil:
		fmt.Fprintf(&sb, "%s's %s lands at offset %d: its transaction from %d is %s.", who(b), markerWord(b), b.BaseOffset, br.Decided.First, br.Decided.State)
		if entry != nil {
			fmt.Fprintf(&sb, " The broker appends the entry (producer %d, first %d, last %d, LSO %d) to %s.", entry.Producer, entry.First, entry.Last, entry.LSO, entry.File)
		}
	case b.IsEndTxnMarker():
		fmt.Fprintf(&sb, "%s's %s lands at offset %d, but the producer had no open transaction here: the broker changes nothing and writes no index entry.", who(b), markerWord(b), b.BaseOffset)
	case b.IsControl():
		fmt.Fprintf(&sb, "A control batch (%s) is appended; it ends no transaction.", offsets(b.BaseOffset, b.LastOffset()))
	case b.IsTransactional() && t != nil && t.FirstOffset == b.BaseOffset:
		fmt.Fprintf(&sb, "%s begins a transaction and writes %s.", who(b), offsets(b.BaseOffset, b.LastOffset()))
	case b.IsTransactional() && t != nil:
		fmt.Fprintf(&sb, "%s writes %s in its transaction from %d.", who(b), offsets(b.BaseOffset, b.LastOffset()), t.FirstOffset)
	default:
		fmt.Fprintf(&sb, "%s writes %s outside any transaction.", who(b), offsets(b.BaseOffset, b.LastOffset()))
	}
	switch {
	case br.LSO != br.PrevLSO:
		fmt.Fprintf(&sb, " The LSO moves from %d to %d", br.PrevLSO, br.LSO)
	default:
		fmt.Fprintf(&sb, " The LSO stays at %d", br.LSO)
	}
	if len(br.Ongoing) > 0 {
		o := br.Ongoing[0]
		fmt.Fprintf(&sb, ", held by producer %d's open transaction from %d.", o.Producer, o.First)
	} else if br.LSO == br.HWM {
		sb.WriteString(", the high watermark: no transaction is open.")
	} else {
		sb.WriteString(".")
	}
	return sb.String()
}

func markerWord(b *txnindex.Batch) string {
	if b.IsAbortMarker() {
		return "ABORT marker"
	}
	return "COMMIT marker"
}

// consumerSentence says what the consumer did with the batch: the aborted
// set's change, then the engine's reason.
func consumerSentence(d txnindex.Decision, c LessonConsumer, before []LessonAbort) string {
	var sb strings.Builder
	if c.Gap != "" {
		fmt.Fprintf(&sb, "Before it, %s. ", c.Gap)
	}
	if !c.Fetched {
		fmt.Fprintf(&sb, "The consumer does not fetch it: %s.", d.Reason())
		return sb.String()
	}
	in := func(list []LessonAbort, a LessonAbort) bool { return slices.Contains(list, a) }
	for _, a := range c.Set {
		if !in(before, a) {
			fmt.Fprintf(&sb, "The consumer reaches the aborted-list element (producer %d, first offset %d): producer %d joins the aborted set. ", a.Producer, a.First, a.Producer)
		}
	}
	for _, a := range before {
		if !in(c.Set, a) {
			fmt.Fprintf(&sb, "Producer %d's ABORT marker takes it out of the aborted set. ", a.Producer)
		}
	}
	fmt.Fprintf(&sb, "Consumer: %s.", d.Reason())
	return sb.String()
}

// whyOf is the rule behind a verdict, for the quiz.
func whyOf(d txnindex.Decision) string {
	switch d.Cause {
	case txnindex.CauseAbortedTxn:
		return "The batch is transactional and its producer is in the aborted set: the fetch response listed its aborted transaction, and the consumer reached that transaction's first offset."
	case txnindex.CauseNotAborted:
		return "The batch is transactional but its producer is not in the aborted set, so read_committed delivers it: its transaction did not abort."
	case txnindex.CauseNonTransactional:
		return "The batch is not transactional: read_committed filters transactional batches only."
	case txnindex.CauseNonTxnFromAbortedProducer:
		return "The producer is in the aborted set, but the batch is not transactional, and the set filters transactional batches only."
	case txnindex.CauseCommitMarker, txnindex.CauseAbortMarker, txnindex.CauseOtherControl:
		return "Control batches (COMMIT and ABORT markers) are never returned to the application; an ABORT marker also takes its producer out of the aborted set."
	case txnindex.CauseAtOrAboveLSO:
		return "read_committed fetches stop at the last stable offset, which an open transaction holds back: the batch is not readable yet."
	case txnindex.CauseAtOrAboveHWM:
		return "Nothing at or above the high watermark is readable."
	case txnindex.CauseUnreachable:
		return "The consumer cannot pass an earlier batch, so it never gets here."
	case txnindex.CauseBelowPosition, txnindex.CauseBelowLogStart:
		return "The consumer starts past this batch, so it never sees it."
	case txnindex.CauseGapEmptiedBatch:
		return "The cleaner emptied this batch: it holds no record."
	}
	return d.Reason()
}
