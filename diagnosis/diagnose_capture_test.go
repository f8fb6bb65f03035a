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

// resp is one captured exchange: at ms after t0, the consumer fetched from
// offset and the broker answered with lso and hwm; aborted nil means a null
// list (read_uncommitted).
type resp struct {
	ms, offset, lso, hwm int64
	aborted              []txnindex.AbortedTransaction
}

// TestDiagnoseCaptureEvidence: the diagnosis of a log assembled from
// captured fetches takes the broker's LSO from the responses, names an
// unseen pinner at that LSO when the captured consumer (read_committed)
// never received it, and ages it by how long the broker kept reporting the
// LSO. The captured batches are offsets 0-3 (a committed transaction and a
// plain batch), so the batches alone would say "clear at 4".
func TestDiagnoseCaptureEvidence(t *testing.T) {
	const t0 = 1_700_000_000_000 // the builder's clock
	rc := []txnindex.AbortedTransaction{}
	cases := []struct {
		name      string
		extra     func(*testfixture.LogBuilder) // batches captured beyond offset 3
		fetches   []resp
		position  int64
		wantLSO   int64
		wantState diagnosis.OpenTxnState // "" for clear
		unseen    bool
		pinner    txnindex.ProducerID
		passed    *bool
	}{
		{name: "UnseenPinnerOpen", fetches: []resp{{0, 0, 4, 6, rc}, {5_000, 4, 4, 9, rc}},
			position: -1, wantLSO: 4, wantState: diagnosis.StateOpen, unseen: true},
		{name: "UnseenPinnerExpiredPastTxnTimeout", fetches: []resp{{0, 0, 4, 6, rc}, {2 * 60_000, 4, 4, 9, rc}},
			position: -1, wantLSO: 4, wantState: diagnosis.StateExpired, unseen: true},
		{name: "UnseenPinnerHangingPastMaxTimeoutWhileHWMMoved", fetches: []resp{{0, 0, 4, 6, rc}, {16 * 60_000, 4, 4, 9, rc}},
			position: -1, wantLSO: 4, wantState: diagnosis.StateHanging, unseen: true},
		// The LSO was stuck past the max timeout, but nothing was written
		// after it: the partition did not move on.
		{name: "UnseenPinnerIdlePartitionNotHanging", fetches: []resp{{0, 0, 4, 9, rc}, {16 * 60_000, 4, 4, 9, rc}},
			position: -1, wantLSO: 4, wantState: diagnosis.StateExpired, unseen: true},
		// The age counts from when the broker started reporting this LSO,
		// not from the first response.
		{name: "UnseenPinnerAgedFromWhenLSOStopped", fetches: []resp{{0, 0, 2, 3, rc}, {15 * 60_000, 2, 4, 6, rc}, {16 * 60_000, 4, 4, 9, rc}},
			position: -1, wantLSO: 4, wantState: diagnosis.StateOpen, unseen: true},
		{name: "NoTimestampsAgeUnknown", fetches: []resp{{-t0, 0, 4, 6, rc}, {-t0, 4, 4, 9, rc}},
			position: -1, wantLSO: 4, wantState: diagnosis.StateOpen, unseen: true},
		// A read_uncommitted consumer receives the open transaction: the
		// pinner is named from its batches, the LSO is still the broker's.
		{name: "ReadUncommittedCaptureNamesThePinner", extra: func(b *testfixture.LogBuilder) { b.Txn(p2, 3).Plain(-1, 2) },
			fetches: []resp{{0, 0, 4, 9, nil}, {1_000, 9, 4, 9, nil}}, position: -1, wantLSO: 4, wantState: diagnosis.StateOpen, pinner: p2},
		{name: "ClearWhenBrokerLSOReachesHWM", fetches: []resp{{0, 0, 4, 4, rc}, {1_000, 4, 4, 4, rc}}, position: -1, wantLSO: 4},
		{name: "PositionPassed", fetches: []resp{{0, 0, 4, 6, rc}, {1_000, 4, 4, 9, rc}}, position: 3, wantLSO: 4, wantState: diagnosis.StateOpen,
			unseen: true, passed: ptr(true)},
		{name: "PositionNeverPassed", fetches: []resp{{0, 0, 4, 6, rc}, {1_000, 4, 4, 9, rc}}, position: 4, wantLSO: 4, wantState: diagnosis.StateOpen,
			unseen: true, passed: ptr(false)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := testfixture.NewLog().Txn(p1, 2).Commit(p1).Plain(-1, 1)
			if tc.extra != nil {
				tc.extra(b)
			}
			l := b.Build()
			for _, f := range tc.fetches {
				l.HighWatermark = max(l.HighWatermark, f.hwm)
				l.Fetches = append(l.Fetches, txnindex.CapturedFetch{Offset: f.offset, Time: t0 + f.ms,
					Response: txnindex.FetchResponse{HighWatermark: f.hwm, LastStableOffset: f.lso, AbortedTransactions: f.aborted}})
			}
			d := present.Diagnose(l, diagnosis.Options{Now: time.UnixMilli(t0 + 99*60_000), Position: tc.position, Bootstrap: "b:9092"})
			if d.LastStableOffset != tc.wantLSO || d.LastStableOffsetSource != "capture" {
				t.Fatalf("LSO %d from %s, want %d from the capture", d.LastStableOffset, d.LastStableOffsetSource, tc.wantLSO)
			}
			if d.Capture == nil || d.Capture.BrokerLSO != tc.wantLSO || d.Capture.Fetches != len(tc.fetches) {
				t.Fatalf("capture report %+v", d.Capture)
			}
			if tc.wantState == "" {
				if d.PinnedBy != nil {
					t.Fatalf("pinned by %+v", d.PinnedBy)
				}
				if !strings.Contains(present.Runbook(d), "clear") {
					t.Errorf("runbook:\n%s", present.Runbook(d))
				}
				return
			}
			p := d.PinnedBy
			if p == nil {
				t.Fatalf("not pinned: %+v", d)
			}
			if p.State != tc.wantState || p.Unseen != tc.unseen || p.FirstOffset != tc.wantLSO {
				t.Errorf("pinned by %s unseen=%v at %d (%s), want %s unseen=%v at %d", p.State, p.Unseen, p.FirstOffset, p.Reason, tc.wantState, tc.unseen, tc.wantLSO)
			}
			if !tc.unseen && p.ProducerID != tc.pinner {
				t.Errorf("pinned by producer %d, want %d", p.ProducerID, tc.pinner)
			}
			want := "kafka-transactions.sh --bootstrap-server b:9092 abort --topic t --partition 0 --start-offset 4"
			if p.AbortCommand != want {
				t.Errorf("abort command %q", p.AbortCommand)
			}
			if d.Hanging() != (tc.wantState == diagnosis.StateHanging) {
				t.Errorf("Hanging() = %v", d.Hanging())
			}
			// Ages are measured at the end of the capture, not at Now.
			if d.Now != t0+tc.fetches[len(tc.fetches)-1].ms && tc.fetches[0].ms >= 0 {
				t.Errorf("now %d, want the capture's end", d.Now)
			}
			if tc.passed != nil && (d.Capture.Position == nil || d.Capture.Position.Passed != *tc.passed) {
				t.Errorf("position check %+v, want passed=%v", d.Capture.Position, *tc.passed)
			}
			rb := present.Runbook(d)
			if tc.unseen && !strings.Contains(rb, "did not see, from offset 4") {
				t.Errorf("runbook:\n%s", rb)
			}
		})
	}
}

// TestDiagnoseCaptureHistory: consecutive responses with the same LSO and
// HWM fold into one run, with the union of their aborted entries.
func TestDiagnoseCaptureHistory(t *testing.T) {
	l := testfixture.NewLog().Txn(p1, 2).Abort(p1).Plain(-1, 1).Build()
	ab := []txnindex.AbortedTransaction{{ProducerID: p1, FirstOffset: 0}}
	for i, r := range []resp{{0, 0, 4, 4, ab}, {10, 0, 4, 4, ab}, {20, 4, 4, 4, []txnindex.AbortedTransaction{}}, {30, 4, 4, 6, []txnindex.AbortedTransaction{}}} {
		l.Fetches = append(l.Fetches, txnindex.CapturedFetch{Offset: r.offset, Time: int64(1000 + i*10),
			Response: txnindex.FetchResponse{HighWatermark: r.hwm, LastStableOffset: r.lso, AbortedTransactions: r.aborted}})
	}
	l.HighWatermark = 6
	d := present.Diagnose(l, diagnosis.Options{Position: -1})
	h := d.Capture.History
	if len(h) != 2 || h[0].Fetches != 3 || h[1].Fetches != 1 || len(h[0].Aborted) != 1 || h[0].FetchOffsets != (txnindex.OffsetRange{From: 0, To: 4}) ||
		h[1].Aborted == nil || d.Capture.Isolation != "read_committed" {
		t.Fatalf("history %+v", h)
	}
}

func ptr[T any](v T) *T { return &v }

// TestLagSplitPositionInsideBatch: a batch that straddles the consumer
// position is fetched whole, but only its offsets from the position on are
// lag (the consumer skips the records below its position).
func TestLagSplitPositionInsideBatch(t *testing.T) {
	cases := []struct {
		name                     string
		log                      *txnindex.Log
		pos                      int64
		deliver, behind, offsets int64
	}{
		// 0-3 plain, 4-5 open txn of p1: from 2, two plain records and two behind the open txn.
		{"PlainThenOpen", testfixture.NewLog().Plain(-1, 4).Txn(p1, 2).Build(), 2, 2, 2, 4},
		// 0-3 open txn, then 4-6 plain: from 1, everything waits.
		{"InsideOpenTxn", testfixture.NewLog().Txn(p1, 4).Plain(-1, 3).Build(), 1, 0, 6, 6},
		{"AtBatchStart", testfixture.NewLog().Plain(-1, 4).Txn(p1, 2).Build(), 0, 4, 2, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.log.HighWatermark = tc.log.LogEndOffset
			l := present.Diagnose(tc.log, diagnosis.Options{Position: tc.pos}).Lag
			if l.ToDeliver != tc.deliver || l.BehindOpenTxns != tc.behind || l.Offsets != tc.offsets {
				t.Errorf("lag %+v, want %d to deliver, %d behind open transactions, %d offsets", l, tc.deliver, tc.behind, tc.offsets)
			}
			if sum := l.ToDeliver + l.BehindOpenTxns + l.ControlMarkers + l.Aborted + l.Missing; sum > l.Offsets {
				t.Errorf("the split counts %d records in %d offsets", sum, l.Offsets)
			}
		})
	}
}
