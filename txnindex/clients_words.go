package txnindex

import "fmt"

// Reason renders the decision as a sentence a person can read. A client
// variant's decision says which client decides so, and, where the client
// departs from Kafka's rule, what it does and why.
func (d *Decision) Reason() string {
	if !d.Variant.Client() {
		return d.reason()
	}
	if s := d.clientReason(); s != "" {
		return s
	}
	return d.Variant.String() + ": " + d.reason()
}

// clientReason is the sentence for the causes only client variants give,
// and for kafkajs's own skips; "" for the others.
func (d *Decision) clientReason() string {
	b := d.Batch
	c := d.Variant.String()
	who := "a producer"
	if b != nil {
		who = fmt.Sprintf("producer %d", b.ProducerID)
	}
	txn := "its transaction"
	if t := d.Txn; t != nil {
		txn = fmt.Sprintf("transaction [%d,%d] of %s", t.FirstOffset, t.LastDataOffset, who)
		if t.MarkerOffset >= 0 {
			txn += fmt.Sprintf(" (ABORT marker at %d)", t.MarkerOffset)
		}
	}
	switch d.Cause {
	case CauseAbortedDelivered:
		switch d.Variant {
		case VariantKafkaGo:
			return fmt.Sprintf("kafka-go delivers this aborted record: %s was aborted, but kafka-go reads the fetch response's aborted-transactions list and never uses it (read.go), so read_committed only stops it at the LSO", txn)
		case VariantKafkaPython:
			return fmt.Sprintf("kafka-python delivers this aborted record: %s was aborted, but kafka-python 2.0 has no read_committed and always fetches read_uncommitted (fetcher.py)", txn)
		}
		if d.Bound > 0 {
			var ahead string
			switch d.Bound {
			case 1:
				ahead = "at the head of the list"
			case 2:
				ahead = fmt.Sprintf("behind one entry, producer %d's (first offset %d)", d.Abort.ProducerID, d.Abort.FirstOffset)
			default:
				ahead = fmt.Sprintf("behind %d entries, the first producer %d's (first offset %d)", d.Bound-1, d.Abort.ProducerID, d.Abort.FirstOffset)
			}
			first := int64(-1)
			if d.Txn != nil {
				first = d.Txn.FirstOffset
			}
			return fmt.Sprintf("kafkajs delivers this aborted record: %s was aborted, but kafkajs consumes the aborted list of the fetch from offset %d one entry per record, in the list's order (marker order), and when this record came %s's entry (first offset %d) was still waiting %s",
				txn, d.FetchOffset, who, first, ahead)
		}
		return fmt.Sprintf("kafkajs delivers this aborted record: %s was aborted, but %s is neither in kafkajs's skip set nor still waiting in the aborted list of the fetch from offset %d", txn, who, d.FetchOffset)
	case CauseControlDelivered:
		marker := "control record"
		switch {
		case b != nil && b.IsCommitMarker():
			marker = "COMMIT marker (key 00000001)"
		case b != nil && b.IsAbortMarker():
			marker = "ABORT marker (key 00000000)"
		}
		why := "kafka-go never tests a batch's control bit (message_reader.go)"
		if d.Variant == VariantKafkaPython {
			why = "kafka-python 2.0.0 to 2.0.5 yield every record of a control batch (fetcher.py _unpack_message_set; 2.0.6 skips them)"
		}
		return fmt.Sprintf("%s hands this %s of %s to the application as a record: %s", c, marker, who, why)
	case CauseClientCannotDecode:
		return fmt.Sprintf("pending: kafkajs cannot decompress the batch at %d without a codec package registered (KafkaJSNotImplemented): every fetch that returns it fails whole, so it never gets past it", d.Bound)
	case CauseClientUnpredictable:
		return fmt.Sprintf("unpredictable: kafkajs moves at most one aborted-list entry per record, and the compacted batch at %d holds fewer records than offsets: which offsets kept a record decides what kafkajs skips and where it fetches from there on, and the log does not say", d.Bound)
	case CauseClientNoRecord:
		return fmt.Sprintf("pending: kafkajs never gets past offset %d: the fetch from there returns only batches the cleaner emptied, no record, and kafkajs resolves no offset for a response without records (runner.js handleBatch, batch.isEmpty), so it sends the same fetch again and again", d.Bound)
	case CauseAbortedTxn:
		if d.Variant == VariantKafkaJS {
			return fmt.Sprintf("aborted: kafkajs skips it: %s's entry (first offset %d) entered its skip set from the aborted list of the fetch from offset %d", who, d.Abort.FirstOffset, d.FetchOffset)
		}
	}
	return ""
}
