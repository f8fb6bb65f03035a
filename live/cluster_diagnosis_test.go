package live

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// TestClusterDiagnosis: a scanned partition in diagnose's shape. The
// coordinator's DescribeTransactions answer (structured partitions) is
// judged by txnindex's Match, as a log dir's __transaction_state is: listed
// partition not hanging, Complete*/Empty/another partition hanging whatever
// the age; an id only listed, not described, leaves the scan's judgement.
// DescribeProducers' coordinator epoch goes into the producer-id abort
// command with its evidence, and the groups keep committed, behind and
// blocked.
func TestClusterDiagnosis(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	here := txnindex.TopicPartition{Topic: "orders", Partition: 3}
	other := txnindex.TopicPartition{Topic: "orders", Partition: 4}
	tests := []struct {
		name      string
		state     string
		described bool
		parts     []txnindex.TopicPartition
		scanState diagnosis.OpenTxnState
		ce        int32
		ageMin    int64 // minutes since the last write; transaction.max.timeout.ms is 15

		wantState diagnosis.OpenTxnState
		wantRule  string
		wantCE    string // the abort's --coordinator-epoch and its evidence
	}{
		{name: "listed", state: "Ongoing", described: true, parts: []txnindex.TopicPartition{here, other}, scanState: diagnosis.StateOpen, ce: 3, ageMin: 1,
			wantState: diagnosis.StateOpen, wantRule: txnindex.RulePartitionListed, wantCE: "--coordinator-epoch 3|DescribeProducers on broker 2"},
		{name: "complete", state: "CompleteCommit", described: true, scanState: diagnosis.StateHanging, ce: 3, ageMin: 20,
			wantState: diagnosis.StateHanging, wantRule: txnindex.RuleCoordinatorComplete, wantCE: "--coordinator-epoch 3|DescribeProducers on broker 2"},
		{name: "complete but young", state: "CompleteCommit", described: true, scanState: diagnosis.StateOpen, ce: 3, ageMin: 1,
			wantState: diagnosis.StateOpen, wantRule: "", wantCE: "--coordinator-epoch 3|DescribeProducers on broker 2"},
		{name: "empty", state: "Empty", described: true, scanState: diagnosis.StateHanging, ce: -1, ageMin: 20,
			wantState: diagnosis.StateHanging, wantRule: txnindex.RuleCoordinatorEmpty, wantCE: "--coordinator-epoch 0|none: DescribeProducers on broker 2"},
		{name: "other partition", state: "Ongoing", described: true, parts: []txnindex.TopicPartition{other}, scanState: diagnosis.StateHanging, ageMin: 20,
			wantState: diagnosis.StateHanging, wantRule: txnindex.RulePartitionNotListed, wantCE: "--coordinator-epoch 0|DescribeProducers on broker 2"},
		{name: "listed only, old", state: "Ongoing", scanState: diagnosis.StateHanging, ce: 1, ageMin: 20,
			wantState: diagnosis.StateHanging, wantRule: txnindex.RuleAge, wantCE: "--coordinator-epoch 1|DescribeProducers on broker 2"},
		{name: "listed only, young", state: "CompleteAbort", scanState: diagnosis.StateOpen, ageMin: 1,
			wantState: diagnosis.StateOpen, wantRule: "", wantCE: "--coordinator-epoch 0|DescribeProducers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			txn := ClusterTxn{ProducerID: 9007199254740993, ProducerEpoch: 4, CoordinatorEpoch: tt.ce, FirstOffset: 120,
				LastTimestamp: now.UnixMilli() - tt.ageMin*60_000, AgeMs: tt.ageMin * 60_000, TransactionalID: "orders-tx", CoordinatorState: tt.state,
				Coordinator: 1, StartTimestamp: now.UnixMilli() - 6000, TimeoutMs: 60000, CoordinatorPartitions: tt.parts,
				State: tt.scanState, Hanging: tt.scanState == diagnosis.StateHanging, Reason: "scan's reason", AbortCommand: "abort --start-offset 120",
				PinsLSO: true}
			if tt.described {
				d := kmsg.NewDescribeTransactionsResponseTransactionState()
				d.TransactionalID, d.State, d.ProducerID, d.ProducerEpoch, d.TimeoutMillis, d.StartTimestamp = "orders-tx", tt.state, txn.ProducerID, txn.ProducerEpoch, 60000, txn.StartTimestamp
				for _, tp := range tt.parts {
					dt := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					dt.Topic, dt.Partitions = tp.Topic, []int32{tp.Partition}
					d.Topics = append(d.Topics, dt)
				}
				cs, ok := describedState(&d, "DescribeTransactions on broker 1")
				if !ok {
					t.Fatalf("state %q not parsed", tt.state)
				}
				txn.coord = &cs
			}
			p := PartitionLag{Topic: "orders", Partition: 3, Leader: 2, HighWatermark: 200, LastStableOffset: 120, LSOLagOffsets: 80, LSOLagMs: 6000,
				Open: []ClusterTxn{txn}, Groups: []GroupBehind{
					{Group: "app", Coordinator: 1, Committed: 120, LagOffsets: 80, BehindLSO: true, Blocked: true},
					{Group: "audit", Coordinator: 0, Committed: 100, LagOffsets: 100, BehindLSO: true},
				}}
			s := &ClusterScan{Time: now, Bootstrap: "kafka:9092", MaxTxnTimeoutMs: 15 * 60_000}
			d := s.Diagnosis(&p)
			if d.PinnedBy == nil || d.PinnedBy != &d.OpenTransactions[0] {
				t.Fatalf("pinned by %+v", d.PinnedBy)
			}
			r := d.OpenTransactions[0]
			if r.State != tt.wantState || r.HangingRule != tt.wantRule || d.Hanging() != (tt.wantState == diagnosis.StateHanging) {
				t.Errorf("state %s rule %q hanging %v; want %s %q (%s)", r.State, r.HangingRule, d.Hanging(), tt.wantState, tt.wantRule, r.Reason)
			}
			if r.TransactionalID != "orders-tx" || r.CoordinatorState != tt.state || r.FirstOffset != 120 || r.LastTimestamp != txn.LastTimestamp || r.AgeMs != tt.ageMin*60_000 {
				t.Errorf("report %+v", r)
			}
			if tt.described && r.CoordinatorSource != "DescribeTransactions on broker 1" || !tt.described && r.CoordinatorSource != "" {
				t.Errorf("coordinator source %q", r.CoordinatorSource)
			}
			if got, want := strings.Join(r.CoordinatorPartitions, " "), partsText(tt.parts); got != want {
				t.Errorf("coordinator partitions %q, want %q", got, want)
			}
			ce, src, _ := strings.Cut(tt.wantCE, "|")
			want := "kafka-transactions.sh --bootstrap-server kafka:9092 abort --topic orders --partition 3 --producer-id 9007199254740993 --producer-epoch 4 " + ce
			if r.AbortByProducerCommand != want || !strings.HasPrefix(r.CoordinatorEpochSource, src) {
				t.Errorf("abort by producer %q (evidence %q), want %q (%q...)", r.AbortByProducerCommand, r.CoordinatorEpochSource, want, src)
			}
			var gs []string
			for _, g := range d.ConsumerGroups {
				gs = append(gs, strings.Join([]string{g.Group, g.Source, itoa(g.Offset), itoa(g.OffsetsToLSO), itoa(g.RecordsToLSO)}, " "))
			}
			if got, want := strings.Join(gs, "|"), "app OffsetFetch on broker 1 120 0 0|audit OffsetFetch on broker 0 100 20 -1"; got != want || d.GroupsSource != "OffsetFetch" {
				t.Errorf("groups %q from %q, want %q", got, d.GroupsSource, want)
			}
		})
	}
}

func partsText(ps []txnindex.TopicPartition) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Topic+"-"+itoa(int64(p.Partition)))
	}
	return strings.Join(out, " ")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
