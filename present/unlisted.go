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
	return fmt.Sprintf("to have this broker list them again, stop it, move %s out of the partition directory and start it: at startup it recovers a segment without its .index and rebuilds the segment's .txnindex from the log. Each replica keeps its own .txnindex: a leader whose files list them serves the aborted lists; what consumers already received stays received",
		offsetIndexes(u.Indexes))
}

// RejectedLine says which .txnindex files a broker fails to start with,
// for the runbook and the panel: "" when there is none.
func RejectedLine(d *diagnosis.Diagnosis) string {
	if len(d.TxnIndexRejected) == 0 {
		return ""
	}
	files := make([]string, len(d.TxnIndexRejected))
	for i, r := range d.TxnIndexRejected {
		files[i] = fmt.Sprintf("%s (version %d at byte %#x)", r.File, r.Version, r.Position)
	}
	what := files[0] + " holds an entry whose version Kafka refuses"
	if len(files) > 1 {
		what = strings.Join(files, ", ") + " hold entries whose version Kafka refuses"
	}
	return what + ": at startup the broker reads every segment's .txnindex (LogSegment.sanityCheck), and TransactionIndex throws a KafkaException that LogLoader does not recover from, so a broker that loads this partition directory fails to start; one already running with it fails the read_committed fetches whose aborted-transaction lookup reaches that entry"
}

// RejectedRemedy says how the broker starts with the partition again, ""
// when nothing stops it: a segment without its .index is recovered at
// startup and its .txnindex rebuilt from the log (what txnscope decides
// with). Moving the .txnindex away instead starts it without the
// segment's entries. txnscope writes nothing; the operator moves the file.
func RejectedRemedy(d *diagnosis.Diagnosis) string {
	if len(d.TxnIndexRejected) == 0 {
		return ""
	}
	files := make([]string, len(d.TxnIndexRejected))
	for i, r := range d.TxnIndexRejected {
		files[i] = r.File
	}
	return fmt.Sprintf("to start it, move %s out of the partition directory first: the broker then recovers the segment and rebuilds its .txnindex from the log, and serves what txnscope decides here. Moving the .txnindex away instead lets it start without the segment's entries, and read_committed consumers would receive the records of the segment's aborted transactions",
		offsetIndexes(files))
}

// offsetIndexes names the .index files of the segments whose .txnindex
// files are given, joined: moving a segment's .index away is what has the
// broker recover it at startup.
func offsetIndexes(txnIndexes []string) string {
	idx := make([]string, len(txnIndexes))
	for i, n := range txnIndexes {
		idx[i] = strings.TrimSuffix(n, ".txnindex") + ".index"
	}
	return strings.Join(idx, ", ")
}
