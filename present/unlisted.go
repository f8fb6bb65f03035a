package present

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// UnlistedLine says what read_committed consumers receive of aborted
// transactions no .txnindex entry lists, for the runbook and the panel:
// "" when there is none.
func UnlistedLine(d *diagnosis.Diagnosis) string {
	u := d.UnlistedAborted
	if u == nil {
		return ""
	}
	if u.FromCapture {
		return fmt.Sprintf("the captured read_committed responses carried %s of %s, from offset %d on, without listing them in their aborted lists, so a consumer that filters by the list (the Java consumer, librdkafka, franz-go) received them as if committed: the leader's .txnindex lacks their entries, which `txnscope diagnose` of its partition directory shows",
			txnindex.Plural(u.Records, "record", "records"), txnindex.Plural(u.Transactions, "aborted transaction", "aborted transactions"), u.FirstOffset)
	}
	var where string
	switch {
	case len(u.Missing) == len(u.Indexes) && len(u.Missing) == 1:
		where = u.Missing[0] + " does not exist"
	case len(u.Missing) == len(u.Indexes):
		where = strings.Join(u.Missing, ", ") + " do not exist"
	case len(u.Indexes) == 1:
		where = u.Indexes[0] + " lacks their entries"
	default:
		where = strings.Join(u.Indexes, ", ") + " lack their entries"
	}
	return fmt.Sprintf("read_committed consumers receive %s of %s, from offset %d on: no .txnindex entry lists them, so the broker leaves them out of the aborted lists it sends (%s)",
		txnindex.Plural(u.Records, "record", "records"), txnindex.Plural(u.Transactions, "aborted transaction", "aborted transactions"), u.FirstOffset, where)
}

// UnlistedRemedy says how the broker comes to list those transactions
// again, "" when there is none to list: only a recovery of the segment
// rebuilds its .txnindex, and LogLoader recovers at startup a segment
// whose .index is missing (LogSegment.sanityCheck), replaying the producer
// state up to it first (UnifiedLog.rebuildProducerState, LogSegment.recover).
// txnscope writes nothing; the operator moves the file.
func UnlistedRemedy(d *diagnosis.Diagnosis) string {
	u := d.UnlistedAborted
	if u == nil || u.FromCapture {
		return "" // the capture does not show which files lack the entries
	}
	idx := make([]string, len(u.Indexes))
	for i, n := range u.Indexes {
		idx[i] = strings.TrimSuffix(n, ".txnindex") + ".index"
	}
	return fmt.Sprintf("to have this broker list them again, stop it, move %s out of the partition directory and start it: at startup it recovers a segment without its .index and rebuilds the segment's .txnindex from the log. Each replica keeps its own .txnindex: a leader whose files list them serves the aborted lists; what consumers already received stays received",
		strings.Join(idx, ", "))
}
