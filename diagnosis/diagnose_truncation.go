package diagnosis

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// TruncationReport is what the broker's next start after an unclean
// shutdown takes from the partition when a segment it recovers is damaged
// (txnindex.Truncation): the log ends at the damage, the later segments
// are deleted, and the transactions whose markers they held are open
// again with nothing to end them. The diagnosis reports the log as read,
// which is what the running broker serves; this says what such a start
// changes. Nil when it takes no batch.
type TruncationReport struct {
	Segment string `json:"segment"` // the segment truncated
	Byte    int64  `json:"byte"`    // where
	Reason  string `json:"reason"`  // why its read stopped there
	// Offset is the log end after the truncation: the first offset lost.
	Offset          int64    `json:"offset"`
	DeletedSegments []string `json:"deleted_segments"`
	Batches         int      `json:"batches"`
	Records         int64    `json:"records"`
	// Reopened are the transactions whose markers are lost, the first
	// ListCap of ReopenedTotal.
	Reopened      []ReopenedTxn `json:"reopened"`
	ReopenedTotal int           `json:"reopened_total"`
	// HighWatermark and LastStableOffset are what the broker reports
	// after such a start.
	HighWatermark    int64 `json:"high_watermark"`
	LastStableOffset int64 `json:"last_stable_offset"`
	// Text says it in words.
	Text string `json:"text"`
}

// ReopenedTxn is a transaction whose marker the truncation deletes.
type ReopenedTxn struct {
	ProducerID    txnindex.ProducerID `json:"producer_id"`
	ProducerEpoch int16               `json:"producer_epoch"`
	FirstOffset   int64               `json:"first_offset"`
	MarkerOffset  int64               `json:"marker_offset"`
	MarkerType    string              `json:"marker_type"` // COMMIT or ABORT
}

// truncationReport is the TruncationReport of the log, nil when the next
// start after an unclean shutdown takes no batch from it.
func (l plog) truncationReport() *TruncationReport {
	t := l.RecoveryTruncation()
	if t == nil {
		return nil
	}
	r := &TruncationReport{
		Segment: l.Segments[t.Segment].Name, Byte: t.Position, Reason: t.Reason, Offset: t.Offset,
		DeletedSegments: []string{}, Batches: t.Batches, Records: t.Records, Reopened: []ReopenedTxn{},
		HighWatermark: t.HighWatermark, LastStableOffset: t.LastStableOffset,
	}
	for _, si := range t.Deleted {
		r.DeletedSegments = append(r.DeletedSegments, l.Segments[si].Name)
	}
	for _, x := range t.Reopened {
		marker := "COMMIT"
		if x.State == txnindex.TxnAborted {
			marker = "ABORT"
		}
		r.Reopened = append(r.Reopened, ReopenedTxn{ProducerID: x.ProducerID, ProducerEpoch: x.ProducerEpoch, FirstOffset: x.FirstOffset, MarkerOffset: x.MarkerOffset, MarkerType: marker})
	}
	r.Reopened, r.ReopenedTotal = txnindex.CapList(r.Reopened, txnindex.ListCap)
	r.Text = r.words(l.RecoveryPoint, l.LastStableOffset)
	return r
}

func (r *TruncationReport) words(recoveryPoint, lso int64) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "The read of %s stops at byte %#x (%s), in a segment that holds the recovery point %d or lies after it, and the log directory holds no clean shutdown marker: the broker is running, or it stopped uncleanly. Its next start after an unclean shutdown recovers the segment (LogLoader.recoverLog) and truncates the log there, at offset %d",
		r.Segment, r.Byte, r.Reason, recoveryPoint, r.Offset)
	if n := len(r.DeletedSegments); n > 0 {
		fmt.Fprintf(&sb, "; it deletes %s", strings.Join(r.DeletedSegments, ", "))
	}
	fmt.Fprintf(&sb, ". What the damaged bytes held and %s (%s) read after them leave this replica: it fetches them again if another replica leads the partition when it returns, and they are lost if it leads (the only replica, or an unclean election).",
		txnindex.Plural(r.Batches, "batch", "batches"), txnindex.Plural(r.Records, "record", "records"))
	if len(r.Reopened) > 0 {
		var who []string
		for _, x := range r.Reopened {
			who = append(who, fmt.Sprintf("producer %d's transaction from offset %d (its %s marker at %d)", x.ProducerID, x.FirstOffset, x.MarkerType, x.MarkerOffset))
		}
		if n := txnindex.More(r.Reopened, r.ReopenedTotal); n > 0 {
			who = append(who, txnindex.Plural(n, "more transaction", "more transactions"))
		}
		them := "it"
		if r.ReopenedTotal > 1 {
			them = "them"
		}
		fmt.Fprintf(&sb, " Among them is the marker of %s: the producer state rebuilt from the surviving log holds %s open again, and nothing ends %s (the coordinator wrote the marker and completed the transaction) but kafka-transactions.sh abort.", strings.Join(who, " and "), them, them)
	}
	fmt.Fprintf(&sb, " The broker's LSO then becomes %d (now %d), its high watermark %d.", r.LastStableOffset, lso, r.HighWatermark)
	return sb.String()
}
