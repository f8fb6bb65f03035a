package txnindex

// The words a person reads for the machine names of verdicts, causes,
// transaction states and KIP-664 rules. The snake_case names stay the
// contract of the NDJSON and JSON outputs; pages and tooltips show these
// words instead. internal/gencontract copies the verdict and cause words
// into static/js/contract.js, so that the Go pages and the scripts say the
// same thing.

var verdictWords = [...]string{
	Delivered:      "delivered",
	Aborted:        "aborted",
	Control:        "control marker",
	Pending:        "pending",
	BeforePosition: "before the position",
	Missing:        "gap",
	Unpredictable:  "cannot be predicted",
}

// Words is the verdict as a reader says it ("before the position").
func (v Verdict) Words() string {
	if int(v) < len(verdictWords) {
		return verdictWords[v]
	}
	return "unknown"
}

var causeWords = [...]string{
	CauseNone:                      "",
	CauseNonTransactional:          "not in a transaction",
	CauseNotAborted:                "its transaction was not aborted",
	CauseNonTxnFromAbortedProducer: "not in a transaction (its producer has an aborted one)",
	CauseReadUncommitted:           "read uncommitted delivers it",
	CauseLegacy:                    "old message format, no producer",
	CauseAbortedTxn:                "its transaction was aborted",
	CauseCommitMarker:              "COMMIT marker",
	CauseAbortMarker:               "ABORT marker",
	CauseOtherControl:              "other control record",
	CauseAtOrAboveLSO:              "at or above the last stable offset",
	CauseAtOrAboveHWM:              "at or above the high watermark",
	CauseUnreachable:               "behind a batch the consumer cannot get past",
	CauseBelowPosition:             "below the consumer position",
	CauseBelowLogStart:             "below the log start",
	CauseGapCompacted:              "removed by compaction",
	CauseGapSegmentBoundary:        "no offsets between segments",
	CauseGapEmptiedBatch:           "batch emptied by the cleaner",
	CauseGapBeforeFirstBatch:       "no offsets before the first batch",
	CauseGapOverlap:                "overlapping batches",
	CauseAbortedDelivered:          "aborted, but this client delivers it",
	CauseControlDelivered:          "marker handed to the application",
	CauseClientCannotDecode:        "the client cannot decompress this fetch",
	CauseClientUnpredictable:       "depends on offsets the log does not hold",
	CauseClientNoRecord:            "the client fetches the same offset again and again",
}

// Words is the cause as a reader says it ("its transaction was aborted").
func (c Cause) Words() string {
	if int(c) < len(causeWords) {
		return causeWords[c]
	}
	return "unknown"
}

var ruleWords = map[string]string{
	RuleAge:                    "no write for longer than transaction.max.timeout.ms while the partition moved on",
	RuleNoTransactionalID:      "no transactional id uses its producer id",
	RuleTransactionalIDUnknown: "its transactional id is in a __transaction_state partition not read",
	RuleProducerIDMovedOn:      "its transactional id moved on to a new producer id",
	RuleCoordinatorDead:        "its transactional id expired (Dead)",
	RuleCoordinatorComplete:    "the coordinator completed its transaction",
	RuleCoordinatorEmpty:       "the coordinator has no transaction in progress (Empty)",
	RulePartitionNotListed:     "the coordinator's transaction does not include this partition",
	RulePartitionListed:        "the coordinator's transaction includes this partition",
	RulePreparedTwoPhase:       "the coordinator holds it prepared for a two-phase commit",
}

// RuleWords is a KIP-664 rule name (RuleAge, RuleCoordinatorEmpty, …) as a
// reader says it; an unknown name is returned as it is.
func RuleWords(rule string) string {
	if w, ok := ruleWords[rule]; ok {
		return w
	}
	return rule
}

// ClusterMetadataTopic is the KRaft metadata log's topic: the controllers'
// Raft log (KafkaRaftServer's MetadataTopic), in every KRaft node's
// metadata.log.dir as __cluster_metadata-0.
const ClusterMetadataTopic = "__cluster_metadata"

// MetadataLogNote says what a partition of topic is when it is not a data
// partition a consumer reads: for __cluster_metadata, the KRaft metadata
// log, whose batches are metadata records and Raft control records
// (LeaderChange, SnapshotHeader/Footer, KRaftVersion, Voters), never a
// producer transaction, and whose snapshots are the .checkpoint files
// beside it. "" for any other topic.
func MetadataLogNote(topic string) string {
	if topic != ClusterMetadataTopic {
		return ""
	}
	return "KRaft cluster metadata log (__cluster_metadata): the controllers' Raft log of metadata records, " +
		"with its snapshots in .checkpoint files; it holds no producer transactions and no consumer reads it, " +
		"so it has no last stable offset to be held"
}
