package txnindex

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTxnStatusNames: ids and names are TransactionState.java's, and JSON
// carries the name.
func TestTxnStatusNames(t *testing.T) {
	want := []string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}
	for id, name := range want {
		s := TxnStatus(id)
		if s.String() != name || !s.Valid() {
			t.Errorf("id %d: %q valid=%v, want %q", id, s, s.Valid(), name)
		}
		if p, ok := ParseTxnStatus(name); !ok || p != s {
			t.Errorf("ParseTxnStatus(%q) = %d %v", name, p, ok)
		}
		b, _ := json.Marshal(s)
		var back TxnStatus
		if string(b) != `"`+name+`"` || json.Unmarshal(b, &back) != nil || back != s {
			t.Errorf("JSON %s round-trips to %v", b, back)
		}
	}
	for _, bad := range []TxnStatus{8, -1, 127} {
		if bad.Valid() || !strings.HasPrefix(bad.String(), "Unknown(") {
			t.Errorf("%d: valid=%v %q", bad, bad.Valid(), bad)
		}
	}
	if _, ok := ParseTxnStatus("Completecommit"); ok {
		t.Error("names are case-sensitive, as TransactionState.fromName is")
	}
}

func coordState(id string, pid ProducerID, epoch int16, st TxnStatus, parts ...TopicPartition) TxnCoordinatorState {
	s := TxnCoordinatorState{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, State: st, Partitions: parts,
		PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, TimeoutMs: 60000, StartTimestamp: -1,
		LastUpdateTimestamp: 1_700_000_000_000, Source: "__transaction_state-0", Offset: 0}
	s.SortPartitions()
	return s
}

// TestMatchCoordinator: one row per rule of find-hanging, and the cases
// around them that must not be called hanging.
func TestMatchCoordinator(t *testing.T) {
	orders3 := TopicPartition{"orders", 3}
	orders4 := TopicPartition{"orders", 4}
	moved := coordState("rotated", 9000, 0, TxnStatusOngoing, orders3)
	moved.PreviousProducerID = 7
	tests := []struct {
		name     string
		states   []TxnCoordinatorState
		complete bool
		pid      ProducerID
		epoch    int16
		id       string
		known    bool
		hanging  bool
		rule     string
		behind   bool
	}{
		{"ongoing transaction listing the partition is not hanging",
			[]TxnCoordinatorState{coordState("tx-a", 7, 2, TxnStatusOngoing, orders4, orders3)}, true, 7, 2, "tx-a", true, false, RulePartitionListed, false},
		{"prepare commit listing the partition: the marker is being written",
			[]TxnCoordinatorState{coordState("tx-a", 7, 2, TxnStatusPrepareCommit, orders3)}, true, 7, 2, "tx-a", true, false, RulePartitionListed, false},
		{"complete commit means the coordinator wrote every marker: hanging",
			[]TxnCoordinatorState{coordState("tx-a", 7, 2, TxnStatusCompleteCommit)}, true, 7, 2, "tx-a", true, true, RuleCoordinatorComplete, false},
		{"complete abort: hanging",
			[]TxnCoordinatorState{coordState("tx-a", 7, 2, TxnStatusCompleteAbort)}, false, 7, 2, "tx-a", true, true, RuleCoordinatorComplete, false},
		{"empty: no transaction in progress, hanging",
			[]TxnCoordinatorState{coordState("tx-a", 7, 2, TxnStatusEmpty)}, true, 7, 2, "tx-a", true, true, RuleCoordinatorEmpty, false},
		{"dead: TransactionalIdNotFound, hanging",
			[]TxnCoordinatorState{coordState("tx-a", 7, 2, TxnStatusDead)}, true, 7, 2, "tx-a", true, true, RuleCoordinatorDead, false},
		{"ongoing on other partitions only: hanging",
			[]TxnCoordinatorState{coordState("tx-a", 7, 2, TxnStatusOngoing, orders4, TopicPartition{"payments", 3})}, true, 7, 2, "tx-a", true, true, RulePartitionNotListed, false},
		{"no transactional id for the producer id with every partition read: hanging",
			[]TxnCoordinatorState{coordState("tx-b", 8, 0, TxnStatusOngoing, orders3)}, true, 7, 2, "", true, true, RuleNoTransactionalID, false},
		{"no transactional id but partitions missing: undecided",
			[]TxnCoordinatorState{coordState("tx-b", 8, 0, TxnStatusOngoing, orders3)}, false, 7, 2, "", false, false, RuleTransactionalIDUnknown, false},
		{"producer id moved on after an epoch overflow: hanging, id named",
			[]TxnCoordinatorState{moved}, false, 7, 32767, "rotated", true, true, RuleProducerIDMovedOn, false},
		{"older epoch listed in a fencing abort is closed by the bumped marker: not hanging",
			[]TxnCoordinatorState{coordState("tx-a", 7, 3, TxnStatusPrepareAbort, orders3)}, true, 7, 2, "tx-a", true, false, RulePartitionListed, true},
		{"older epoch and complete: hanging, epoch behind reported",
			[]TxnCoordinatorState{coordState("tx-a", 7, 5, TxnStatusCompleteAbort)}, true, 7, 2, "tx-a", true, true, RuleCoordinatorComplete, true},
		{"an unknown state id listing the partition decides nothing",
			[]TxnCoordinatorState{coordState("tx-a", 7, 2, TxnStatus(9), orders3)}, true, 7, 2, "tx-a", false, false, RulePartitionListed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewTxnCoordinators(tt.states, tt.complete)
			m := c.Match("orders", 3, tt.pid, tt.epoch)
			if m.TransactionalID != tt.id || m.Known != tt.known || m.Hanging != tt.hanging || m.Rule != tt.rule || m.EpochBehind != tt.behind {
				t.Fatalf("got id=%q known=%v hanging=%v rule=%s behind=%v, want id=%q known=%v hanging=%v rule=%s behind=%v\nreason: %s",
					m.TransactionalID, m.Known, m.Hanging, m.Rule, m.EpochBehind, tt.id, tt.known, tt.hanging, tt.rule, tt.behind, m.Reason)
			}
			if (m.Coordinator == nil) != (tt.id == "") || m.Reason == "" {
				t.Fatalf("coordinator %v reason %q", m.Coordinator, m.Reason)
			}
			if m.Coordinator != nil && !strings.Contains(m.Reason, tt.id) {
				t.Errorf("reason %q does not name %q", m.Reason, tt.id)
			}
		})
	}
}

// TestMatchCoordinatorAmbiguous: two ids with one producer id (log dirs
// of two clusters mixed) pick the one updated last and list the other.
func TestMatchCoordinatorAmbiguous(t *testing.T) {
	a := coordState("a", 7, 0, TxnStatusCompleteCommit)
	b := coordState("b", 7, 0, TxnStatusOngoing, TopicPartition{"orders", 3})
	b.LastUpdateTimestamp++
	c := NewTxnCoordinators([]TxnCoordinatorState{a, b}, true)
	m := c.Match("orders", 3, 7, 0)
	if m.TransactionalID != "b" || m.Hanging || len(m.Ambiguous) != 1 || m.Ambiguous[0] != "a" {
		t.Fatalf("%+v", m)
	}
	if s := c.ByTransactionalID("a"); s == nil || s.State != TxnStatusCompleteCommit {
		t.Fatalf("ByTransactionalID(a) = %+v", s)
	}
	if c.ByTransactionalID("zz") != nil {
		t.Fatal("unknown id found")
	}
}

// TestTxnCoordinatorStateLists: partitions are matched by topic and
// number after sorting, duplicates collapse.
func TestTxnCoordinatorStateLists(t *testing.T) {
	s := TxnCoordinatorState{Partitions: []TopicPartition{{"b", 1}, {"a", 2}, {"b", 1}, {"a", 10}}}
	s.SortPartitions()
	if len(s.Partitions) != 3 {
		t.Fatalf("%v", s.Partitions)
	}
	for _, tp := range []TopicPartition{{"a", 2}, {"a", 10}, {"b", 1}} {
		if !s.Lists(tp.Topic, tp.Partition) {
			t.Errorf("%v not listed", tp)
		}
	}
	for _, tp := range []TopicPartition{{"a", 1}, {"b", 2}, {"c", 1}, {"", 0}} {
		if s.Lists(tp.Topic, tp.Partition) {
			t.Errorf("%v listed", tp)
		}
	}
}
