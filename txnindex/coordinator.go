package txnindex

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// TxnStatus is a transaction's state as its transaction coordinator records
// it: the TransactionStatus byte of a __transaction_state value
// (TransactionLogValue), whose ids are TransactionState.java's. The names
// are the ones DescribeTransactions and ListTransactions return.
type TxnStatus int8

// Coordinator transaction states (TransactionState.java).
const (
	TxnStatusEmpty             TxnStatus = 0 // no transaction yet, or the last one's markers are written and nothing began since
	TxnStatusOngoing           TxnStatus = 1 // partitions added (AddPartitionsToTxn/AddOffsetsToTxn), no EndTxn yet
	TxnStatusPrepareCommit     TxnStatus = 2 // EndTxn(commit) accepted; COMMIT markers being written
	TxnStatusPrepareAbort      TxnStatus = 3 // EndTxn(abort) or a timeout; ABORT markers being written
	TxnStatusCompleteCommit    TxnStatus = 4 // every COMMIT marker written
	TxnStatusCompleteAbort     TxnStatus = 5 // every ABORT marker written
	TxnStatusDead              TxnStatus = 6 // transactional id expired (transactional.id.expiration.ms), about to be removed
	TxnStatusPrepareEpochFence TxnStatus = 7 // InitProducerId is bumping the epoch to fence the old producer
)

var txnStatusNames = [...]string{
	TxnStatusEmpty:             "Empty",
	TxnStatusOngoing:           "Ongoing",
	TxnStatusPrepareCommit:     "PrepareCommit",
	TxnStatusPrepareAbort:      "PrepareAbort",
	TxnStatusCompleteCommit:    "CompleteCommit",
	TxnStatusCompleteAbort:     "CompleteAbort",
	TxnStatusDead:              "Dead",
	TxnStatusPrepareEpochFence: "PrepareEpochFence",
}

// Valid reports whether s is one of the eight states Kafka defines
// (TransactionState.fromId throws for any other id).
func (s TxnStatus) Valid() bool { return s >= 0 && int(s) < len(txnStatusNames) }

// String returns Kafka's name of the state, or "Unknown(id)".
func (s TxnStatus) String() string {
	if s.Valid() {
		return txnStatusNames[s]
	}
	return fmt.Sprintf("Unknown(%d)", int8(s))
}

// MarshalText writes the state's name, so JSON carries "Ongoing", not 1.
func (s TxnStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a name MarshalText wrote.
func (s *TxnStatus) UnmarshalText(b []byte) error {
	v, ok := ParseTxnStatus(string(b))
	if !ok {
		return fmt.Errorf("unknown transaction state %q", b)
	}
	*s = v
	return nil
}

// ParseTxnStatus maps a state name DescribeTransactions or
// ListTransactions returned (TransactionState.getName) to its id.
func ParseTxnStatus(name string) (TxnStatus, bool) {
	for i, n := range txnStatusNames {
		if n == name {
			return TxnStatus(i), true
		}
	}
	return 0, false
}

// Complete reports whether the coordinator has finished the transaction:
// CompleteCommit or CompleteAbort, written only after every marker was
// (TransactionMarkerChannelManager moves to Complete* once all partitions
// acknowledged their marker).
func (s TxnStatus) Complete() bool {
	return s == TxnStatusCompleteCommit || s == TxnStatusCompleteAbort
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// TxnCoordinatorState is what a transaction coordinator holds for one
// transactional id: the last __transaction_state value of its key
// (TransactionStateManager.loadTransactionMetadata keeps the last value of
// each key and drops a key at its tombstone), or the answer of
// DescribeTransactions in live mode.
type TxnCoordinatorState struct {
	TransactionalID string     `json:"transactional_id"`
	ProducerID      ProducerID `json:"producer_id"`
	ProducerEpoch   int16      `json:"producer_epoch"`
	// PreviousProducerID, NextProducerID and NextProducerEpoch are the
	// tagged fields of TransactionLogValue v1 (KIP-890, KIP-939): the
	// producer id of the last committed transaction and the one handed to
	// the producer after an epoch overflow. -1 when absent (value v0).
	PreviousProducerID       ProducerID `json:"previous_producer_id"`
	NextProducerID           ProducerID `json:"next_producer_id"`
	NextProducerEpoch        int16      `json:"next_producer_epoch"`
	ClientTransactionVersion int16      `json:"client_transaction_version"` // 2 for transactions v2 (KIP-890), 0 or 1 before
	State                    TxnStatus  `json:"state"`
	// Partitions are the partitions of the current transaction, sorted.
	// Empty in Empty (TransactionLog.read ignores them there) and in the
	// Complete* states, whose values are written with no partitions.
	Partitions          []TopicPartition `json:"partitions"`
	TimeoutMs           int32            `json:"transaction_timeout_ms"`
	StartTimestamp      int64            `json:"transaction_start_timestamp"` // -1 when no transaction began
	LastUpdateTimestamp int64            `json:"last_update_timestamp"`

	// Source says where the state was read: "__transaction_state-44"
	// with Offset the offset of its record there, or "DescribeTransactions"
	// with Offset -1.
	Source string `json:"source"`
	Offset int64  `json:"source_offset"`
}

// Lists reports whether the coordinator's current transaction includes
// the partition (DescribeTransactions' topicPartitions).
func (s *TxnCoordinatorState) Lists(topic string, partition int32) bool {
	_, ok := slices.BinarySearchFunc(s.Partitions, TopicPartition{topic, partition}, compareTopicPartition)
	return ok
}

// SortPartitions sorts and deduplicates Partitions, which Lists needs.
func (s *TxnCoordinatorState) SortPartitions() {
	slices.SortFunc(s.Partitions, compareTopicPartition)
	s.Partitions = slices.Compact(s.Partitions)
}

func compareTopicPartition(a, b TopicPartition) int {
	return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// The rules MatchCoordinator decides by. They are the steps of
// kafka-transactions.sh find-hanging (TransactionsCommand
// FindHangingTransactionsCommand, KIP-664), which asks, for an open
// transaction of producer P on partition tp:
//
//  1. ListTransactions filtered by producer id P: no transactional id
//     whose current producer id is P means hanging;
//  2. DescribeTransactions of that id: TransactionalIdNotFound means
//     hanging;
//  3. the described transaction's topicPartitions does not contain tp
//     means hanging ("If the topic partition that we found is among these,
//     then we can still expect the coordinator to write the marker.
//     Otherwise, it is a hanging transaction.").
//
// Empty, CompleteCommit and CompleteAbort list no partition, so rule 3
// decides them; they get rule names of their own because they say more
// (the coordinator finished, or never began, a transaction the partition
// still has open).
const (
	// RuleNoTransactionalID: no transactional id's current producer id is
	// the open transaction's (step 1), and every __transaction_state
	// partition was read, so the absence is evidence.
	RuleNoTransactionalID = "no_transactional_id"
	// RuleTransactionalIDUnknown: as above, but some __transaction_state
	// partitions were not read (they live on other brokers): undecided.
	RuleTransactionalIDUnknown = "transactional_id_not_loaded"
	// RuleProducerIDMovedOn: no id's current producer id matches, but one
	// id's previous or next producer id does (KIP-890 epoch overflow gave
	// it a new producer id): ListTransactions finds no id for the open
	// transaction's producer id, so find-hanging reports it (step 1).
	RuleProducerIDMovedOn = "producer_id_moved_on"
	// RuleCoordinatorDead: the id expired (state Dead); DescribeTransactions
	// answers TransactionalIdNotFound (step 2).
	RuleCoordinatorDead = "coordinator_dead"
	// RuleCoordinatorComplete: the coordinator's last transaction is
	// CompleteCommit or CompleteAbort: every marker it meant to write is
	// written, and it will write none to this partition (step 3).
	RuleCoordinatorComplete = "coordinator_complete"
	// RuleCoordinatorEmpty: the coordinator is in Empty: no transaction
	// in progress, none of whose markers could still come (step 3).
	RuleCoordinatorEmpty = "coordinator_empty"
	// RulePartitionNotListed: the coordinator has a transaction in
	// progress (Ongoing, Prepare*, PrepareEpochFence) that does not
	// include this partition (step 3).
	RulePartitionNotListed = "partition_not_in_transaction"
	// RulePartitionListed: the coordinator's transaction in progress
	// includes the partition: its marker is still to come. Not hanging.
	RulePartitionListed = "partition_in_transaction"
	// RulePreparedTwoPhase: the coordinator's transaction includes the
	// partition and is prepared for a two-phase commit (KIP-939: Ongoing
	// with a transaction timeout of Integer.MAX_VALUE,
	// TransactionMetadata.isDistributedTwoPhaseCommitTxn): the
	// coordinator never times it out, and find-hanging does not list it.
	// Not hanging: its external transaction manager ends it.
	RulePreparedTwoPhase = "prepared_two_phase_commit"
)

// RuleAge names the classification by age alone: no coordinator state was
// read, so an open transaction idle for longer than
// transaction.max.timeout.ms while the partition moved on is hanging, the
// threshold kafka-transactions.sh find-hanging applies before it asks the
// coordinator (KIP-664).
const RuleAge = "idle_past_max_transaction_timeout"

// twoPhaseTimeoutMs is the transaction timeout a producer prepared for a
// two-phase commit registers (KIP-939): Integer.MAX_VALUE.
const twoPhaseTimeoutMs = math.MaxInt32

// CoordinatorMatch is the coordinator's view of one open transaction.
type CoordinatorMatch struct {
	// TransactionalID is the id the open transaction's producer id maps
	// to ("" when none does).
	TransactionalID string
	// Coordinator is that id's state; nil when no id matched.
	Coordinator *TxnCoordinatorState
	// Known is false when the evidence read cannot decide (rule
	// RuleTransactionalIDUnknown); Hanging is then false.
	Known   bool
	Hanging bool
	// Prepared: the transaction is prepared for a two-phase commit
	// (RulePreparedTwoPhase); Hanging is then false.
	Prepared bool
	// Rule names the rule that decided (the Rule* constants); Reason says
	// it in a sentence.
	Rule   string
	Reason string
	// EpochBehind: the coordinator's producer epoch for this id is newer
	// than the open transaction's. It is not by itself a hanging rule:
	// the coordinator writes markers at its own epoch, and the broker
	// accepts a marker whose epoch is at least the producer's (above it
	// for transactions v2; ProducerAppendInfo.appendEndTxnMarker's
	// checkProducerEpoch) and ends the producer's open transaction with
	// it, so a marker still to come closes the older-epoch transaction too.
	// That is how a fencing InitProducerId aborts it: PrepareEpochFence,
	// then PrepareAbort at the bumped epoch, listing the partition.
	EpochBehind bool
	// Ambiguous lists the other transactional ids whose current producer
	// id is the same (a broker never assigns one producer id to two ids;
	// seen only when log dirs of different clusters are mixed).
	Ambiguous []string
}

// TxnCoordinators indexes coordinator states by producer id for
// MatchCoordinator.
type TxnCoordinators struct {
	// States are the coordinator states, sorted by transactional id.
	States []TxnCoordinatorState
	// Complete is true when the states cover every transactional id: every
	// __transaction_state partition was read (or the states came from
	// ListTransactions, which asks every coordinator). Only then is "no
	// transactional id has this producer id" evidence.
	Complete bool

	byPID   map[ProducerID][]int
	byOther map[ProducerID][]int
}

// NewTxnCoordinators indexes states (it keeps and sorts the slice).
func NewTxnCoordinators(states []TxnCoordinatorState, complete bool) *TxnCoordinators {
	slices.SortFunc(states, func(a, b TxnCoordinatorState) int {
		return strings.Compare(a.TransactionalID, b.TransactionalID)
	})
	c := &TxnCoordinators{States: states, Complete: complete,
		byPID: map[ProducerID][]int{}, byOther: map[ProducerID][]int{}}
	for i := range states {
		s := &states[i]
		c.byPID[s.ProducerID] = append(c.byPID[s.ProducerID], i)
		for _, p := range []ProducerID{s.PreviousProducerID, s.NextProducerID} {
			if p >= 0 && p != s.ProducerID {
				c.byOther[p] = append(c.byOther[p], i)
			}
		}
	}
	return c
}

// ByTransactionalID returns the state of id, or nil.
func (c *TxnCoordinators) ByTransactionalID(id string) *TxnCoordinatorState {
	i, ok := slices.BinarySearchFunc(c.States, id, func(s TxnCoordinatorState, id string) int {
		return strings.Compare(s.TransactionalID, id)
	})
	if !ok {
		return nil
	}
	return &c.States[i]
}

// Match applies KIP-664's hanging rule (see the Rule* constants) to an
// open transaction of producer pid at epoch on topic/partition: it finds
// the transactional id whose current producer id is pid, as ListTransactions
// filtered by producer id does, and decides from that id's coordinator
// state whether the coordinator will still write this partition's marker.
//
// Age plays no part. find-hanging asks the coordinator only about
// transactions idle for longer than --max-transaction-timeout, because it
// reads the partition and the coordinator at two moments; the files of one
// log dir are one moment, and the coordinator writes Complete* only after
// every marker was written, so its word decides whatever the age. (A log
// dir copied while the broker ran, partition by partition, can still show
// a transaction open whose marker landed after the copy of its partition.)
func (c *TxnCoordinators) Match(topic string, partition int32, pid ProducerID, epoch int16) CoordinatorMatch {
	idx := c.byPID[pid]
	if len(idx) == 0 {
		if other := c.byOther[pid]; len(other) > 0 {
			s := c.pick(other)
			return CoordinatorMatch{TransactionalID: s.TransactionalID, Coordinator: s, Known: true, Hanging: true,
				Rule: RuleProducerIDMovedOn, Ambiguous: c.others(other, s),
				Reason: fmt.Sprintf("transactional id %q now uses producer id %d (epoch %d, %s); no transactional id has producer id %d, so its coordinator will write no marker for it (kafka-transactions.sh find-hanging: no transactional id for the producer id)",
					s.TransactionalID, s.ProducerID, s.ProducerEpoch, s.State, pid)}
		}
		if !c.Complete {
			return CoordinatorMatch{Rule: RuleTransactionalIDUnknown,
				Reason: fmt.Sprintf("no transactional id read has producer id %d, but not every __transaction_state partition was read: its coordinator state lives in one that was not", pid)}
		}
		return CoordinatorMatch{Known: true, Hanging: true, Rule: RuleNoTransactionalID,
			Reason: fmt.Sprintf("no transactional id has producer id %d in any __transaction_state partition: no coordinator will write its marker (kafka-transactions.sh find-hanging: no transactional id for the producer id)", pid)}
	}
	s := c.pick(idx)
	m := CoordinatorMatch{TransactionalID: s.TransactionalID, Coordinator: s, Known: true,
		EpochBehind: s.ProducerEpoch > epoch, Ambiguous: c.others(idx, s)}
	where := PartitionName(topic, partition)
	switch {
	case s.State == TxnStatusDead:
		m.Hanging, m.Rule = true, RuleCoordinatorDead
		m.Reason = fmt.Sprintf("the coordinator of %q has expired it (Dead): DescribeTransactions answers TransactionalIdNotFound and no marker will come", s.TransactionalID)
	case s.State.Complete():
		m.Hanging, m.Rule = true, RuleCoordinatorComplete
		m.Reason = fmt.Sprintf("the coordinator of %q says %s: it wrote every marker of its last transaction, and none is coming for %s", s.TransactionalID, s.State, where)
	case s.State == TxnStatusEmpty:
		m.Hanging, m.Rule = true, RuleCoordinatorEmpty
		m.Reason = fmt.Sprintf("the coordinator of %q says Empty: no transaction is in progress, so no marker is coming for %s", s.TransactionalID, where)
	case !s.Lists(topic, partition):
		m.Hanging, m.Rule = true, RulePartitionNotListed
		m.Reason = fmt.Sprintf("the coordinator of %q is in %s for %s, and %s is not one of them: it will write no marker there", s.TransactionalID, s.State, Plural(len(s.Partitions), "partition", "partitions"), where)
	case s.State == TxnStatusOngoing && s.TimeoutMs == twoPhaseTimeoutMs:
		m.Rule, m.Prepared = RulePreparedTwoPhase, true
		m.Reason = fmt.Sprintf("the coordinator of %q lists %s in a transaction prepared for a two-phase commit (KIP-939: Ongoing, transaction timeout Integer.MAX_VALUE): the coordinator never times it out; its external transaction manager commits or aborts it", s.TransactionalID, where)
	default:
		m.Rule = RulePartitionListed
		m.Reason = fmt.Sprintf("the coordinator of %q is in %s and lists %s: its marker is still to come", s.TransactionalID, s.State, where)
		if !s.State.Valid() {
			// An id TransactionState.fromId rejects: the broker would
			// not load it, so claim nothing.
			m.Known = false
		}
	}
	return m
}

// pick chooses among states sharing a producer id the one updated last.
func (c *TxnCoordinators) pick(idx []int) *TxnCoordinatorState {
	best := &c.States[idx[0]]
	for _, i := range idx[1:] {
		if s := &c.States[i]; s.LastUpdateTimestamp > best.LastUpdateTimestamp {
			best = s
		}
	}
	return best
}

func (c *TxnCoordinators) others(idx []int, chosen *TxnCoordinatorState) []string {
	var out []string
	for _, i := range idx {
		if s := &c.States[i]; s != chosen {
			out = append(out, s.TransactionalID)
		}
	}
	return out
}

// InternalEvidence is what a log dir's internal topics (or a cluster's
// read-only APIs) say, for Join.
type InternalEvidence struct {
	// Coordinators are the transactional ids' states; nil when none was
	// read.
	Coordinators *TxnCoordinators
	// Offsets are committed offsets of any partitions; HaveOffsets says
	// they were read at all (an empty list is then evidence: no group).
	Offsets      []GroupOffset
	HaveOffsets  bool
	GroupsSource string
	// Note says what was not read (Diagnosis.JoinNote); "" when nothing
	// was left out.
	Note string
	GroupEvidence
	TopicEvidence
}

// GroupEvidence is what the internal topics (or a cluster's read-only
// APIs) say of the groups beyond their committed offsets, embedded in
// InternalEvidence: the share groups' state, their isolation level, and
// how many records of types no reader knows were skipped.
type GroupEvidence struct {
	// ShareStates are share groups' start offsets on any partitions;
	// HaveShareStates says they were read at all (__share_group_state,
	// DescribeShareGroupOffsets), ShareSource where.
	ShareStates     []ShareGroupState
	HaveShareStates bool
	ShareSource     string
	// ShareIsolation is each share group's share.isolation.level where
	// set; IsolationKnown says the group configs were read (a group
	// absent then has Kafka's default), IsolationSource where, or why
	// they were not.
	ShareIsolation  map[string]ShareIsolation
	IsolationKnown  bool
	IsolationSource string
	// SkippedRecords counts the internal topics' records of a type no
	// Kafka release writes, skipped as the coordinators skip them
	// (KIP-915); SkippedWhere names the topics.
	SkippedRecords int64
	SkippedWhere   string
}

// TopicEvidence is what the KRaft metadata log says of the topics, embedded
// in InternalEvidence.
type TopicEvidence struct {
	// RemoteStorage is each topic's remote.storage.enable as its
	// ConfigRecord sets it ("true", "false"), by topic; nil when no
	// metadata log was read.
	RemoteStorage map[string]string
}
