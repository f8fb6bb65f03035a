package present

import (
	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// The words a person reads for the machine names of verdicts, causes,
// transaction states and KIP-664 rules. The snake_case names stay the
// contract of the NDJSON and JSON outputs; pages and tooltips show these
// words instead. internal/gencontract copies the verdict and cause words
// into static/js/contract.js, so that the Go pages and the scripts say the
// same thing.

var verdictWords = [...]string{
	txnindex.Delivered:      "delivered",
	txnindex.Aborted:        "aborted",
	txnindex.Control:        "control marker",
	txnindex.Pending:        "pending",
	txnindex.BeforePosition: "before the position",
	txnindex.Missing:        "gap",
	txnindex.Unpredictable:  "cannot be predicted",
}

// VerdictWords is the verdict as a reader says it ("before the position").
func VerdictWords(v txnindex.Verdict) string {
	if int(v) < len(verdictWords) {
		return verdictWords[v]
	}
	return "unknown"
}

var causeWords = [...]string{
	txnindex.CauseNone:                      "",
	txnindex.CauseNonTransactional:          "not in a transaction",
	txnindex.CauseNotAborted:                "its transaction was not aborted",
	txnindex.CauseNonTxnFromAbortedProducer: "not in a transaction (its producer has an aborted one)",
	txnindex.CauseReadUncommitted:           "read uncommitted delivers it",
	txnindex.CauseLegacy:                    "old message format, no producer",
	txnindex.CauseAbortedTxn:                "its transaction was aborted",
	txnindex.CauseCommitMarker:              "COMMIT marker",
	txnindex.CauseAbortMarker:               "ABORT marker",
	txnindex.CauseOtherControl:              "other control record",
	txnindex.CauseAtOrAboveLSO:              "at or above the last stable offset",
	txnindex.CauseAtOrAboveHWM:              "at or above the high watermark",
	txnindex.CauseUnreachable:               "behind a batch the consumer cannot get past",
	txnindex.CauseBelowPosition:             "below the consumer position",
	txnindex.CauseBelowLogStart:             "below the log start",
	txnindex.CauseGapCompacted:              "removed by compaction",
	txnindex.CauseGapSegmentBoundary:        "no offsets between segments",
	txnindex.CauseGapEmptiedBatch:           "batch emptied by the cleaner",
	txnindex.CauseGapBeforeFirstBatch:       "no offsets before the first batch",
	txnindex.CauseGapOverlap:                "overlapping batches",
	txnindex.CauseAbortedDelivered:          "aborted, but this client delivers it",
	txnindex.CauseControlDelivered:          "marker handed to the application",
	txnindex.CauseClientCannotDecode:        "the client cannot decompress this fetch",
	txnindex.CauseClientUnpredictable:       "depends on offsets the log does not hold",
	txnindex.CauseClientNoRecord:            "the client fetches the same offset again and again",
	txnindex.CauseGapDamaged:                "in damaged bytes of the segment before",
}

// CauseWords is the cause as a reader says it ("its transaction was aborted").
func CauseWords(c txnindex.Cause) string {
	if int(c) < len(causeWords) {
		return causeWords[c]
	}
	return "unknown"
}

var stateWords = map[diagnosis.OpenTxnState]string{
	diagnosis.StateOpen:                "open",
	diagnosis.StateExpired:             "expired",
	diagnosis.StateLate:                "late",
	diagnosis.StateHanging:             "hanging",
	diagnosis.StatePrepared:            "prepared, waiting for its external transaction manager",
	diagnosis.StateDecidedUnreplicated: "decided, marker not replicated",
	diagnosis.StateMarkerRemoved:       "decided, marker removed by the cleaner",
}

// StateWords is the state as a reader says it ("decided, marker not replicated").
func StateWords(s diagnosis.OpenTxnState) string {
	if w, ok := stateWords[s]; ok {
		return w
	}
	return string(s)
}

var ruleWords = map[string]string{
	txnindex.RuleAge:                    "no write for longer than transaction.max.timeout.ms while the partition moved on",
	txnindex.RuleNoTransactionalID:      "no transactional id uses its producer id",
	txnindex.RuleTransactionalIDUnknown: "its transactional id is in a __transaction_state partition not read",
	txnindex.RuleProducerIDMovedOn:      "its transactional id moved on to a new producer id",
	txnindex.RuleCoordinatorDead:        "its transactional id expired (Dead)",
	txnindex.RuleCoordinatorComplete:    "the coordinator completed its transaction",
	txnindex.RuleCoordinatorEmpty:       "the coordinator has no transaction in progress (Empty)",
	txnindex.RulePartitionNotListed:     "the coordinator's transaction does not include this partition",
	txnindex.RulePartitionListed:        "the coordinator's transaction includes this partition",
	txnindex.RulePreparedTwoPhase:       "the coordinator holds it prepared for a two-phase commit",
}

// RuleWords is a KIP-664 rule name (RuleAge, RuleCoordinatorEmpty, …) as a
// reader says it; an unknown name is returned as it is.
func RuleWords(rule string) string {
	if w, ok := ruleWords[rule]; ok {
		return w
	}
	return rule
}
