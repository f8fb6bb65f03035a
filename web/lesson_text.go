package web

// The sentences a lesson step shows: what the broker did with the batch and
// why each consumer delivers or skips it (lesson.go builds the steps).

import (
	"fmt"
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

// span is the offsets from to to for people: "5" for one, "5–7" for a
// range (the open-transactions table, a discard range, a capture run).
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
		} else if s := cur.Segments[b.Segment]; b.IsAbortMarker() && s.TxnIndexAbsent {
			fmt.Fprintf(&sb, " Its entry belongs in %s, which is lost: the broker lists no entry for it, so read_committed consumers receive its records.", s.TxnIndexName())
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

// consumerSentence says what the consumer did at the step: what its
// fetches returned, or that it waits at the LSO.
func consumerSentence(c LessonConsumer, br LessonBroker) string {
	var sb strings.Builder
	for _, d := range c.Decided {
		if d.Fetch < 0 {
			fmt.Fprintf(&sb, "The consumer starts at offset %d, past %s: it never fetches them. ", c.Position, offsets(d.From, d.To))
		}
	}
	for _, f := range c.Fetches {
		fmt.Fprintf(&sb, "The consumer fetches from offset %d and receives %s", f.Offset, offsets(f.From, f.To))
		if len(f.Listed) == 0 {
			sb.WriteString(" with an empty aborted list. ")
		} else {
			parts := make([]string, len(f.Listed))
			for i, a := range f.Listed {
				parts[i] = fmt.Sprintf("(producer %d, first offset %d)", a.Producer, a.First)
			}
			fmt.Fprintf(&sb, " with the aborted list %s. ", strings.Join(parts, ", "))
		}
	}
	var kept, dropped []string
	for _, d := range c.Decided {
		if d.Fetch < 0 {
			continue
		}
		switch d.Verdict {
		case "delivered":
			kept = append(kept, span(d.From, d.To))
		case "aborted":
			dropped = append(dropped, span(d.From, d.To))
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(&sb, "It delivers %s. ", strings.Join(kept, ", "))
	}
	// What a client that departs from Kafka's rule delivers where the
	// Java consumer would not, in the client's own reason.
	for _, k := range []struct{ cause, what string }{
		{txnindex.CauseAbortedDelivered.String(), "aborted records a Java consumer skips"},
		{txnindex.CauseControlDelivered.String(), "markers a Java consumer never returns"},
	} {
		var at []string
		reason := ""
		for _, d := range c.Decided {
			if d.Fetch >= 0 && d.Cause == k.cause {
				at = append(at, span(d.From, d.To))
				if reason == "" {
					reason = d.Reason
				}
			}
		}
		if len(at) > 0 {
			fmt.Fprintf(&sb, "Among them %s, %s: %s. ", andList(at), k.what, reason)
		}
	}
	if len(dropped) > 0 {
		fmt.Fprintf(&sb, "It skips %s as aborted. ", strings.Join(dropped, ", "))
	}
	switch {
	case c.Waiting && len(c.Fetches) == 0:
		fmt.Fprintf(&sb, "The consumer fetches from offset %d and receives nothing: read_committed reads only below the LSO, %d.", c.Position, br.LSO)
	case c.Waiting:
		fmt.Fprintf(&sb, "It now waits at offset %d, the LSO.", c.Position)
	case len(c.Fetches) == 0 && len(c.Decided) == 0:
		fmt.Fprintf(&sb, "The consumer, at offset %d, has nothing new to read.", c.Position)
	default:
		fmt.Fprintf(&sb, "Its position is %d.", c.Position)
	}
	return strings.TrimSpace(sb.String())
}

// remedySentence introduces a remedy step: who writes the marker, and how.
func remedySentence(cmd string, b *txnindex.Batch) string {
	return fmt.Sprintf("The remedy: an operator runs %s. The tool finds producer %d with DescribeProducers and sends WriteTxnMarkers (ABORT, producer epoch %d, coordinator epoch %d), so the partition leader writes the marker itself.",
		cmd, b.ProducerID, b.ProducerEpoch, b.CoordinatorEpoch())
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
	case txnindex.CauseCommitMarker:
		return "A COMMIT marker is a control batch: the consumer reads past it and never returns it to the application. It ends its producer's transaction, whose batches were delivered."
	case txnindex.CauseAbortMarker:
		return "An ABORT marker is a control batch: the consumer reads past it and never returns it to the application. It ends its producer's aborted transaction and takes the producer out of the aborted set, so the producer's later batches are delivered."
	case txnindex.CauseOtherControl:
		return "A control batch that is neither a COMMIT nor an ABORT marker: the consumer reads past it and never returns it to the application."
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

// variantNote is what the first step says of a client that departs from
// Kafka's rule: "" for the others.
func variantNote(v txnindex.Variant) string {
	switch v {
	case txnindex.VariantKafkaGo:
		return " This consumer is kafka-go 0.4 (segmentio): it asks for read_committed, so the broker stops its fetches at the LSO, but it reads the response's aborted list and never uses it, and never tests the control bit: aborted records and markers reach the application. Watch where it departs from what a Java consumer delivers."
	case txnindex.VariantKafkaPython:
		return " This consumer is kafka-python 2.0: it cannot ask for read_committed (2.2 added it), so it reads to the high watermark, and hands aborted records, records of open transactions and markers to the application. Watch where it departs from what a Java consumer delivers."
	}
	return ""
}

// LessonVariant parses a lesson's ?variant=: the rules its consumer plays.
// kafkajs is refused: it filters record by record in a fetch loop of its
// own, which the lesson's steps do not play.
func LessonVariant(s string) (txnindex.Variant, error) {
	if s == "" {
		return txnindex.VariantJava, nil
	}
	v, err := txnindex.ParseVariant(s)
	if err != nil {
		return 0, err
	}
	if v == txnindex.VariantKafkaJS {
		return 0, fmt.Errorf("a lesson cannot play kafkajs, which filters record by record in a fetch loop of its own: its decisions are on the timeline (rules kafkajs) and the clients page")
	}
	return v, nil
}

// andList joins words as a sentence lists them: "a", "a and b", "a, b and c".
func andList(ws []string) string {
	if n := len(ws); n > 1 {
		return strings.Join(ws[:n-1], ", ") + " and " + ws[n-1]
	}
	return strings.Join(ws, "")
}
