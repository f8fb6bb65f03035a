package diagnosis_test

import (
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnoseClassification: the rules that make an open transaction open,
// expired or hanging, as literal cases. The builder's clock starts at
// 1_700_000_000_000 ms and advances 10 ms per batch.
func TestDiagnoseClassification(t *testing.T) {
	const t0 = 1_700_000_000_000
	at := func(ms int64) time.Time { return time.UnixMilli(t0 + ms) }
	cases := []struct {
		name     string
		log      func() *testfixture.LogBuilder
		now      time.Time
		want     []diagnosis.OpenTxnState // per open transaction
		pinnedBy txnindex.ProducerID      // 0: nothing pinned
		skew     bool
	}{
		{"Open", func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(p1, 2).Plain(-1, 1) }, at(1_000), []diagnosis.OpenTxnState{diagnosis.StateOpen}, p1, false},
		{"ExpiredPastTxnTimeout", func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(p1, 2).Plain(-1, 1) }, at(2 * 60_000), []diagnosis.OpenTxnState{diagnosis.StateExpired}, p1, false},
		// Past transaction.max.timeout.ms but within the broker's buffer:
		// not late yet (ProducerStateManager.hasLateTransaction).
		{"ExpiredPastMaxTimeoutWithinTheBuffer", func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(p1, 2).Plain(-1, 1) }, at(16 * 60_000), []diagnosis.OpenTxnState{diagnosis.StateExpired}, p1, false},
		// The broker's rule is strictly longer than max timeout + buffer.
		{"ExpiredAtExactlyMaxTimeoutPlusBuffer", func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(p1, 2).Plain(-1, 1) }, at(20 * 60_000), []diagnosis.OpenTxnState{diagnosis.StateExpired}, p1, false},
		// Without coordinator evidence an old transaction is late, never
		// hanging: that is the coordinator's word.
		{"LatePastMaxTimeoutPlusBuffer", func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(p1, 2).Plain(-1, 1) }, at(20*60_000 + 1), []diagnosis.OpenTxnState{diagnosis.StateLate}, p1, false},
		// Nothing was written after it: the broker's rule does not ask.
		{"LateThoughThePartitionIsIdle", func() *testfixture.LogBuilder { return testfixture.NewLog().Plain(-1, 1).Txn(p1, 2) }, at(21 * 60_000), []diagnosis.OpenTxnState{diagnosis.StateLate}, p1, false},
		// Timestamps ahead of now: skew, age 0, not hanging.
		{"ClockSkew", func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(p1, 2).Plain(-1, 1) }, at(-60_000), []diagnosis.OpenTxnState{diagnosis.StateOpen}, p1, true},
		{"SeveralOpenTransactions", func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(p1, 1).Txn(p2, 1).Plain(-1, 1) }, at(21 * 60_000),
			[]diagnosis.OpenTxnState{diagnosis.StateLate, diagnosis.StateLate}, p1, false},
		{"OpenAcrossSegmentRoll", func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(p1, 1).Roll().Txn(p1, 1).Plain(-1, 1) }, at(1_000), []diagnosis.OpenTxnState{diagnosis.StateOpen}, p1, false},
		{"ClearAfterCommit", func() *testfixture.LogBuilder { return testfixture.NewLog().Txn(p1, 1).Commit(p1) }, at(16 * 60_000), nil, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.log().Build()
			d := present.Diagnose(l, diagnosis.Options{Now: tc.now, Position: -1, Bootstrap: "b:9092"})
			if len(d.OpenTransactions) != len(tc.want) {
				t.Fatalf("%d open transactions, want %d", len(d.OpenTransactions), len(tc.want))
			}
			for i, w := range tc.want {
				if got := d.OpenTransactions[i].State; got != w {
					t.Errorf("txn %d: %s (%s), want %s", i, got, d.OpenTransactions[i].Reason, w)
				}
				if d.OpenTransactions[i].ClockSkew != tc.skew {
					t.Errorf("txn %d: clock skew %v", i, d.OpenTransactions[i].ClockSkew)
				}
			}
			switch {
			case tc.pinnedBy == 0 && d.PinnedBy != nil:
				t.Errorf("pinned by %+v", d.PinnedBy)
			case tc.pinnedBy != 0 && (d.PinnedBy == nil || d.PinnedBy.ProducerID != tc.pinnedBy):
				t.Errorf("pinned by %+v, want producer %d", d.PinnedBy, tc.pinnedBy)
			}
			late := len(tc.want) > 0 && tc.want[0] == diagnosis.StateLate
			if d.Hanging() || d.Alert() != late {
				t.Errorf("Hanging() = %v, Alert() = %v", d.Hanging(), d.Alert())
			}
			if p := d.PinnedBy; late && (p.ConfirmCommand != "kafka-transactions.sh --bootstrap-server b:9092 find-hanging --topic t --partition 0" ||
				!p.Late || !strings.Contains(p.Reason, "hasLateTransaction") || !strings.Contains(p.Reason, "not confirmed")) {
				t.Errorf("late: confirm %q, late %v, reason %q", p.ConfirmCommand, p.Late, p.Reason)
			}
		})
	}
}

// TestDiagnoseEmptySeededTransaction: a snapshot says a transaction is open
// from an offset retention deleted; it has no data here. --start-offset is
// that first offset (DescribeProducers reports it after retention); the
// explicit producer form is offered too.
func TestDiagnoseEmptySeededTransaction(t *testing.T) {
	b := testfixture.NewLog().StartAt(10)
	b.Plain(-1, 2)
	b.Partition.Ongoing = []txnindex.OngoingTxn{{ProducerID: p3, ProducerEpoch: 4, FirstOffset: 5}}
	b.Partition.Snapshot = &txnindex.SnapshotInfo{Name: "00000000000000000012.snapshot", Offset: 12}
	d := present.Diagnose(b.Build(), diagnosis.Options{Position: -1})
	if len(d.OpenTransactions) != 1 || d.PinnedBy == nil || d.LastStableOffset != 10 {
		t.Fatalf("%+v", d)
	}
	r := d.OpenTransactions[0]
	if !strings.HasSuffix(r.AbortCommand, "--start-offset 5") || !r.BeganBeforeLogStart {
		t.Errorf("command %q, before log start %v", r.AbortCommand, r.BeganBeforeLogStart)
	}
	if !strings.Contains(r.AbortByProducerCommand, "--producer-id 3 --producer-epoch 4 --coordinator-epoch 0") || !strings.HasPrefix(r.CoordinatorEpochSource, "none") {
		t.Errorf("command %q (%s)", r.AbortByProducerCommand, r.CoordinatorEpochSource)
	}
	if rb := present.Runbook(d); strings.Contains(rb, "-1") || !strings.Contains(rb, "began at offset 5, before the log start 10 (deleted by retention)") {
		t.Errorf("runbook:\n%s", rb)
	}
}

// TestDiagnoseCommandAndDiscards: the runbook names the start offset and
// what an abort throws away.
func TestDiagnoseCommandAndDiscards(t *testing.T) {
	l := testfixture.NewLog().Txn(p1, 1).Commit(p1).Txn(p2, 3).Txn(p1, 1).Commit(p1).Txn(p2, 2).Plain(-1, 1).Build()
	d := present.Diagnose(l, diagnosis.Options{Position: 0, Bootstrap: "kafka:9092"})
	p := d.PinnedBy
	if p == nil || p.ProducerID != p2 || p.FirstOffset != 2 {
		t.Fatalf("pinned by %+v", p)
	}
	if want := "kafka-transactions.sh --bootstrap-server kafka:9092 abort --topic t --partition 0 --start-offset 2"; p.AbortCommand != want {
		t.Errorf("command %q", p.AbortCommand)
	}
	if p.Discards.Records != 5 || len(p.Discards.Ranges) != 2 || p.Discards.Ranges[0] != (txnindex.OffsetRange{From: 2, To: 4}) || p.Discards.Ranges[1] != (txnindex.OffsetRange{From: 7, To: 8}) {
		t.Errorf("discards %+v", p.Discards)
	}
	lag := d.Lag
	if lag.ToDeliver != 1 || lag.ControlMarkers != 1 || lag.BehindOpenTxns != 8 || lag.LastReachable != 1 || lag.PositionAfterAll != 2 {
		t.Errorf("lag %+v", lag)
	}
	rb := present.Runbook(d)
	for _, s := range []string{"STUCK", "--start-offset 2", "discards 5 records at offsets 2-4, 7-8"} {
		if !strings.Contains(rb, s) {
			t.Errorf("runbook lacks %q:\n%s", s, rb)
		}
	}
}
