package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnoseLateAgainstHanging: an open transaction whose last write is
// 422 days old is late by the broker's rule whatever the coordinator
// says; hanging only by the coordinator's word (KIP-664); without that
// word, late with hanging unconfirmed, exit 3 and the command that asks;
// a transaction prepared for a two-phase commit (KIP-939) is prepared,
// never hanging, and its abort says what it breaks.
func TestDiagnoseLateAgainstHanging(t *testing.T) {
	orders0 := txnindex.TopicPartition{Topic: "orders", Partition: 0}
	orders1 := txnindex.TopicPartition{Topic: "orders", Partition: 1}
	const confirm = `kafka-transactions.sh --bootstrap-server "$BOOTSTRAP" find-hanging --topic orders --partition 0`
	cases := []struct {
		name    string
		states  []scenario.InternalRecord
		args    []string
		code    int
		state   string
		rule    string
		confirm string // the confirm_command
		breaks  bool   // abort_breaks is set
		text    []string
		never   []string
	}{
		{
			name: "NoCoordinatorEvidence", code: exitHanging, state: "late", confirm: confirm,
			text: []string{"(late; hanging not confirmed)", "late: producer 6 wrote nothing for 422d", "hasLateTransaction",
				"PartitionsWithLateTransactionsCount", "is not confirmed", "to confirm it hangs: " + confirm},
			never: []string{"expired", "does not call it hanging", "decided by rule"},
		},
		{
			name: "AnotherMaxTimeoutInTheConfirmCommand", args: []string{"--max-transaction-timeout", "1h"}, code: exitHanging, state: "late",
			confirm: confirm + " --max-transaction-timeout 60",
			text:    []string{"longer than transaction.max.timeout.ms (1h) plus the broker's 5m"},
		},
		{
			name: "CoordinatorStillHasItOnThisPartition", states: []scenario.InternalRecord{testfixture.ZombieState(txnindex.TxnStatusOngoing, 60000, orders0)},
			code: 0, state: "late", rule: txnindex.RulePartitionListed,
			text:  []string{"(late, not hanging)", "but not hanging (KIP-664)", "stuck on the coordinator"},
			never: []string{"to confirm it hangs"},
		},
		{
			name: "CoordinatorCompletedIt", states: []scenario.InternalRecord{testfixture.ZombieState(txnindex.TxnStatusCompleteCommit, 60000)},
			code: exitHanging, state: "hanging", rule: txnindex.RuleCoordinatorComplete,
			text:  []string{"(hanging)", "hanging whatever its age (KIP-664)", "late by the broker's rule too"},
			never: []string{"to confirm it hangs"},
		},
		{
			name: "CoordinatorOnAnotherPartition", states: []scenario.InternalRecord{testfixture.ZombieState(txnindex.TxnStatusOngoing, 60000, orders1)},
			code: exitHanging, state: "hanging", rule: txnindex.RulePartitionNotListed,
		},
		{
			name: "PreparedForTwoPhaseCommit", states: []scenario.InternalRecord{testfixture.ZombieState(txnindex.TxnStatusOngoing, math.MaxInt32, orders0)},
			code: 0, state: "prepared", rule: txnindex.RulePreparedTwoPhase, breaks: true,
			text: []string{"(prepared, waiting for its external transaction manager)", "KIP-939", "before aborting: aborting it breaks the two-phase commit of \"zombie-tx\"",
				"find-hanging does not list it"},
			never: []string{"to confirm it hangs", "(hanging)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, last := testfixture.WriteLateLogDir(t, tc.states...)
			at := last.Add(422 * 24 * time.Hour).Format(time.RFC3339Nano)
			code, out, errOut := runArgs(t, append(append([]string{"diagnose", "--format", "json", "--now", at, "--topic", "orders"}, tc.args...), dir)...)
			if code != tc.code {
				t.Errorf("json: exit %d, want %d; %s", code, tc.code, errOut)
			}
			var v struct {
				Partitions []struct {
					Topic    string `json:"topic"`
					PinnedBy *struct {
						ProducerID     int64  `json:"producer_id"`
						State          string `json:"state"`
						Late           bool   `json:"late"`
						HangingRule    string `json:"hanging_rule"`
						ConfirmCommand string `json:"confirm_command"`
						AbortBreaks    string `json:"abort_breaks"`
						AgeMs          int64  `json:"age_ms"`
					} `json:"pinned_by"`
				} `json:"partitions"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Partitions) != 1 {
				t.Fatalf("json %v:\n%s", err, out)
			}
			p := v.Partitions[0].PinnedBy
			if p == nil || p.ProducerID != 6 || p.State != tc.state || !p.Late || p.HangingRule != tc.rule || p.ConfirmCommand != tc.confirm ||
				(p.AbortBreaks != "") != tc.breaks || p.AgeMs != 422*24*3600*1000 {
				t.Errorf("pinned by %+v", p)
			}
			code, text, _ := runArgs(t, append(append([]string{"diagnose", "--now", at, "--topic", "orders"}, tc.args...), dir)...)
			if code != tc.code {
				t.Errorf("text: exit %d, want %d", code, tc.code)
			}
			for _, s := range tc.text {
				if !strings.Contains(text, s) {
					t.Errorf("runbook lacks %q:\n%s", s, text)
				}
			}
			for _, s := range tc.never {
				if strings.Contains(text, s) {
					t.Errorf("runbook has %q:\n%s", s, text)
				}
			}
		})
	}
}
