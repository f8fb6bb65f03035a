package diagnosis_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnoseJoin: a young open transaction is hanging when its
// coordinator will write no marker for the partition (each KIP-664 rule),
// an old one is not when the coordinator lists the partition, and the
// groups at or below the LSO are named in the JSON and the runbook.
func TestDiagnoseJoin(t *testing.T) {
	t3 := txnindex.TopicPartition{Topic: "t", Partition: 0}
	other := txnindex.TopicPartition{Topic: "t", Partition: 1}
	tests := []struct {
		name    string
		state   *txnindex.TxnCoordinatorState // nil: no __transaction_state read
		now     time.Duration                 // age of the open transaction's last write
		id      string
		want    diagnosis.OpenTxnState
		rule    string
		hanging bool
		alert   bool // exit 3: hanging, or late with no coordinator's word
	}{
		{"no coordinator state, young: open by age", nil, time.Second, "", diagnosis.StateOpen, "", false, false},
		{"no coordinator state, old: late, hanging not confirmed", nil, 21 * time.Minute, "", diagnosis.StateLate, "", false, true},
		{"complete commit, young: hanging whatever its age", ptr(testfixture.CoordState("zombie", 1, 0, txnindex.TxnStatusCompleteCommit)), time.Second, "zombie", diagnosis.StateHanging, txnindex.RuleCoordinatorComplete, true, true},
		{"empty, young: hanging", ptr(testfixture.CoordState("zombie", 1, 0, txnindex.TxnStatusEmpty)), time.Second, "zombie", diagnosis.StateHanging, txnindex.RuleCoordinatorEmpty, true, true},
		{"dead: hanging", ptr(testfixture.CoordState("zombie", 1, 0, txnindex.TxnStatusDead)), time.Second, "zombie", diagnosis.StateHanging, txnindex.RuleCoordinatorDead, true, true},
		{"ongoing on another partition: hanging", ptr(testfixture.CoordState("zombie", 1, 0, txnindex.TxnStatusOngoing, other)), time.Second, "zombie", diagnosis.StateHanging, txnindex.RulePartitionNotListed, true, true},
		{"ongoing listing it, old: late, not hanging", ptr(testfixture.CoordState("zombie", 1, 0, txnindex.TxnStatusOngoing, t3)), 21 * time.Minute, "zombie", diagnosis.StateLate, txnindex.RulePartitionListed, false, false},
		{"ongoing listing it, young: open", ptr(testfixture.CoordState("zombie", 1, 0, txnindex.TxnStatusOngoing, t3)), time.Second, "zombie", diagnosis.StateOpen, txnindex.RulePartitionListed, false, false},
		{"prepared for two-phase commit, old: prepared, never hanging", ptr(prepared(testfixture.CoordState("zombie", 1, 0, txnindex.TxnStatusOngoing, t3))), 400 * 24 * time.Hour, "zombie", diagnosis.StatePrepared, txnindex.RulePreparedTwoPhase, false, false},
		{"prepared but not listing it: hanging", ptr(prepared(testfixture.CoordState("zombie", 1, 0, txnindex.TxnStatusOngoing, other))), 400 * 24 * time.Hour, "zombie", diagnosis.StateHanging, txnindex.RulePartitionNotListed, true, true},
		// A transaction timeout of Integer.MAX_VALUE - 1 is an ordinary
		// (if absurd) one: only MAX_VALUE marks a prepared transaction.
		{"timeout just below the two-phase mark: late, not hanging", ptr(withTimeout(testfixture.CoordState("zombie", 1, 0, txnindex.TxnStatusOngoing, t3), math.MaxInt32-1)), 21 * time.Minute, "zombie", diagnosis.StateLate, txnindex.RulePartitionListed, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// 0-1 plain, 2-4 pid 1 open (pins LSO 2), 5-9 plain.
			l := testfixture.NewLog().Plain(-1, 2).Txn(1, 3).Plain(-1, 5).Build()
			last := l.Batches[1].MaxTimestamp
			d := present.Diagnose(l, diagnosis.Options{Now: time.UnixMilli(last).Add(tt.now), Position: -1})
			ev := txnindex.InternalEvidence{HaveOffsets: true, GroupsSource: "__consumer_offsets",
				Offsets: []txnindex.GroupOffset{testfixture.GroupAt("at-lso", 2), testfixture.GroupAt("reading", 0), testfixture.GroupAt("uncommitted", 8)}}
			if tt.state != nil {
				ev.Coordinators = txnindex.NewTxnCoordinators([]txnindex.TxnCoordinatorState{*tt.state}, true)
			}
			diagnosis.Join(l, d, ev)
			p := d.PinnedBy
			if p == nil || p.TransactionalID != tt.id || p.State != tt.want || p.HangingRule != tt.rule || d.Hanging() != tt.hanging || d.Alert() != tt.alert {
				t.Fatalf("pinned by %+v, want id %q state %s rule %q, alert %v", p, tt.id, tt.want, tt.rule, tt.alert)
			}
			// Only a late transaction no coordinator evidence decided
			// carries the command that asks; only a prepared one says
			// what aborting it breaks.
			if (p.ConfirmCommand != "") != (tt.want == diagnosis.StateLate && tt.rule == "") || (p.AbortBreaks != "") != (tt.want == diagnosis.StatePrepared) {
				t.Errorf("confirm %q, abort breaks %q", p.ConfirmCommand, p.AbortBreaks)
			}
			if tt.state != nil && (p.CoordinatorState != tt.state.State.String() ||
				!strings.Contains(p.Reason, "KIP-664") || !strings.Contains(p.Reason, tt.state.State.String()) || strings.Contains(p.Reason, tt.rule)) {
				t.Errorf("coordinator state %q reason %q", p.CoordinatorState, p.Reason)
			}
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				PinnedBy map[string]any `json:"pinned_by"`
				Groups   []struct {
					Group   string `json:"group"`
					Behind  bool   `json:"behind_lso"`
					Blocked bool   `json:"blocked"`
					Records int64  `json:"records_to_lso"`
				} `json:"consumer_groups"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if tt.id != "" && (m.PinnedBy["transactional_id"] != tt.id || m.PinnedBy["coordinator_state"] != tt.state.State.String()) {
				t.Errorf("JSON pinned_by %v", m.PinnedBy)
			}
			if tt.rule != "" && m.PinnedBy["hanging_rule"] != tt.rule {
				t.Errorf("JSON hanging_rule %v", m.PinnedBy["hanging_rule"])
			}
			if len(m.Groups) != 3 || m.Groups[0].Group != "at-lso" || !m.Groups[0].Blocked ||
				m.Groups[1].Group != "reading" || !m.Groups[1].Behind || m.Groups[1].Blocked || m.Groups[1].Records != 2 ||
				m.Groups[2].Group != "uncommitted" || m.Groups[2].Behind {
				t.Errorf("consumer_groups %+v", m.Groups)
			}
			text := present.Runbook(d)
			for _, want := range []string{`group "at-lso" committed 2: BLOCKED`, `group "reading" committed 0: 2 records`, `group "uncommitted" committed 8: past the LSO`} {
				if !strings.Contains(text, want) {
					t.Errorf("runbook lacks %q:\n%s", want, text)
				}
			}
			if tt.id != "" && !strings.Contains(text, `pinned by transactional id "`+tt.id+`" (coordinator state `+tt.state.State.String()) {
				t.Errorf("runbook does not name the id:\n%s", text)
			}
			if tt.rule != "" && !strings.Contains(text, "rule "+tt.rule) {
				t.Errorf("runbook does not name the rule:\n%s", text)
			}
		})
	}
}

// prepared marks the state as a transaction prepared for a two-phase
// commit (KIP-939): its timeout is Integer.MAX_VALUE.
func prepared(s txnindex.TxnCoordinatorState) txnindex.TxnCoordinatorState {
	return withTimeout(s, math.MaxInt32)
}

func withTimeout(s txnindex.TxnCoordinatorState, ms int32) txnindex.TxnCoordinatorState {
	s.TimeoutMs = ms
	return s
}
