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

// TestDiagnoseRetainedLog: a partition whose segments below offset 10 were
// deleted by retention, seeded (or not) from a producer snapshot the way
// broker recovery loads one. Each case names the rule it checks.
func TestDiagnoseRetainedLog(t *testing.T) {
	const t0 = 1_700_000_000_000 // the builder's clock
	const day = int64(24 * time.Hour / time.Millisecond)
	snap := func(ps map[txnindex.ProducerID]txnindex.SnapshotProducer) *txnindex.SnapshotInfo {
		return &txnindex.SnapshotInfo{Name: "00000000000000000012.snapshot", Offset: 12, Producers: ps}
	}
	cases := []struct {
		name   string
		seeds  []txnindex.OngoingTxn
		snap   *txnindex.SnapshotInfo
		more   func(*testfixture.LogBuilder)
		check  func(t *testing.T, d *diagnosis.Diagnosis)
		inText []string
	}{
		{
			name:  "SeededLastWriteIsTheSnapshotTimestamp",
			seeds: []txnindex.OngoingTxn{{ProducerID: p3, ProducerEpoch: 4, FirstOffset: 5, LastTimestamp: t0 - 30*day, CoordinatorEpoch: 3}},
			snap:  snap(map[txnindex.ProducerID]txnindex.SnapshotProducer{p3: {Epoch: 4, LastOffset: 6, Timestamp: t0 - 30*day, CoordinatorEpoch: 3, CurrentTxnFirstOffset: 5}}),
			check: func(t *testing.T, d *diagnosis.Diagnosis) {
				p := d.PinnedBy
				if p == nil || p.State != diagnosis.StateLate || p.AgeMs != 30*day+1_000 || p.LastTimestamp != t0-30*day || !p.BeganBeforeLogStart {
					t.Fatalf("pinned by %+v", p)
				}
				if p.CoordinatorEpoch != 3 || p.CoordinatorEpochSource != "producer snapshot 00000000000000000012.snapshot" || !strings.HasSuffix(p.AbortCommand, "--start-offset 5") {
					t.Errorf("coordinator epoch %d (%s), command %q", p.CoordinatorEpoch, p.CoordinatorEpochSource, p.AbortCommand)
				}
			},
			inText: []string{"began at offset 5, before the log start 10 (deleted by retention), none of its data survives", "nothing for 30d, longer"},
		},
		{
			// ProducerStateEntry.update: a later batch of the transaction
			// is the last write, not the snapshot's older timestamp.
			name:  "LaterSurvivingBatchIsTheLastWrite",
			seeds: []txnindex.OngoingTxn{{ProducerID: p3, ProducerEpoch: 4, FirstOffset: 5, LastTimestamp: t0 - 30*day, CoordinatorEpoch: 3}},
			snap:  snap(map[txnindex.ProducerID]txnindex.SnapshotProducer{p3: {Epoch: 4, LastOffset: 6, Timestamp: t0 - 30*day, CoordinatorEpoch: 3, CurrentTxnFirstOffset: 5}}),
			more:  func(b *testfixture.LogBuilder) { b.Txn(p3, 2).Plain(-1, 1) },
			check: func(t *testing.T, d *diagnosis.Diagnosis) {
				p := d.PinnedBy
				if p == nil || p.State != diagnosis.StateOpen || p.LastTimestamp != t0+10 || !d.LSOLagAtLeast || p.FirstOffset != 5 || p.Records != 2 {
					t.Fatalf("pinned by %+v", p)
				}
			},
			inText: []string{"began at offset 5, before the log start 10 (deleted by retention), its data survives up to offset 13"},
		},
		{
			name:  "SnapshotWithoutTimestampLeavesTheAgeUnknown",
			seeds: []txnindex.OngoingTxn{{ProducerID: p3, ProducerEpoch: 4, FirstOffset: 5, LastTimestamp: -1, CoordinatorEpoch: -1}},
			check: func(t *testing.T, d *diagnosis.Diagnosis) {
				p := d.PinnedBy
				if p == nil || !p.AgeUnknown || p.State != diagnosis.StateOpen || d.Hanging() {
					t.Fatalf("pinned by %+v", p)
				}
			},
			inText: []string{"last write time is unknown"},
		},
		{
			// Two transactions began before the log start: both clamp to
			// it, and the earlier one is the holder.
			name: "EarliestOfTwoClampedTransactionsHolds",
			seeds: []txnindex.OngoingTxn{{ProducerID: p2, ProducerEpoch: 1, FirstOffset: 8, LastTimestamp: t0, CoordinatorEpoch: 0},
				{ProducerID: p3, ProducerEpoch: 4, FirstOffset: 5, LastTimestamp: t0, CoordinatorEpoch: 2}},
			check: func(t *testing.T, d *diagnosis.Diagnosis) {
				if d.LastStableOffset != 10 || d.PinnedBy == nil || d.PinnedBy.ProducerID != p3 || len(d.OpenTransactions) != 2 {
					t.Fatalf("LSO %d pinned by %+v", d.LastStableOffset, d.PinnedBy)
				}
			},
		},
		{
			// Without a snapshot, a producer whose first surviving batch is
			// transactional data may have begun before the log start.
			name: "WithoutSnapshotFirstSurvivingTransactionMayHaveBegunEarlier",
			more: func(b *testfixture.LogBuilder) { b.Txn(p1, 2).Plain(-1, 1) },
			check: func(t *testing.T, d *diagnosis.Diagnosis) {
				if p := d.PinnedBy; p == nil || !p.MayHaveBegunBeforeLogStart || p.BeganBeforeLogStart || !strings.Contains(p.StartEvidence, "describe-producers") {
					t.Fatalf("pinned by %+v", p)
				}
			},
			inText: []string{"may have begun before the log start 10"},
		},
		{
			// A snapshot that does not list the producer as open settles it.
			name: "SnapshotSettlesWhereTheTransactionBegan",
			snap: snap(map[txnindex.ProducerID]txnindex.SnapshotProducer{}),
			more: func(b *testfixture.LogBuilder) { b.Txn(p1, 2).Plain(-1, 1) },
			check: func(t *testing.T, d *diagnosis.Diagnosis) {
				if p := d.PinnedBy; p == nil || p.MayHaveBegunBeforeLogStart || p.StartEvidence != "" {
					t.Fatalf("pinned by %+v", p)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := testfixture.NewLog().StartAt(10)
			b.Partition.LogStartOffset = 10
			b.Plain(-1, 2)
			if tc.more != nil {
				tc.more(b)
			}
			b.Partition.Ongoing, b.Partition.Snapshot = tc.seeds, tc.snap
			d := present.Diagnose(b.Build(), diagnosis.Options{Now: time.UnixMilli(t0 + 1_000), Position: -1})
			tc.check(t, d)
			rb := present.Runbook(d)
			if strings.Contains(rb, "--1") {
				t.Errorf("runbook prints -1:\n%s", rb)
			}
			for _, s := range tc.inText {
				if !strings.Contains(rb, s) {
					t.Errorf("runbook lacks %q:\n%s", s, rb)
				}
			}
		})
	}
}

// TestDiagnoseCaptureLSOAtLogStart: the broker raises a first unstable
// offset below the log start to the log start, so a captured LSO equal to
// the reported log start may belong to a transaction that began earlier:
// no `--start-offset <LSO>` then. An LSO above the log start is exactly a
// transaction's first offset, and keeps it.
func TestDiagnoseCaptureLSOAtLogStart(t *testing.T) {
	const t0 = 1_700_000_000_000
	for _, tc := range []struct {
		name     string
		logStart int64
		clamped  bool
	}{
		{"LSOEqualsLogStartMayBeClamped", 4, true},
		{"LSOAboveLogStartIsAFirstOffset", 2, false},
		{"LogStartUnknown", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := testfixture.NewLog().Txn(p1, 2).Commit(p1).Plain(-1, 1).Build()
			l.HighWatermark = 9
			for i, hwm := range []int64{6, 9} {
				l.Fetches = append(l.Fetches, txnindex.CapturedFetch{Offset: 4, Time: t0 + int64(i)*1_000,
					Response: txnindex.FetchResponse{HighWatermark: hwm, LastStableOffset: 4, LogStartOffset: tc.logStart, AbortedTransactions: []txnindex.AbortedTransaction{}}})
			}
			p := present.Diagnose(l, diagnosis.Options{Position: -1}).PinnedBy
			if p == nil || !p.Unseen {
				t.Fatalf("pinned by %+v", p)
			}
			if got := strings.Contains(p.AbortCommand, "--start-offset 4"); got == tc.clamped || p.MayHaveBegunBeforeLogStart != tc.clamped {
				t.Errorf("command %q, may have begun before the log start %v", p.AbortCommand, p.MayHaveBegunBeforeLogStart)
			}
		})
	}
}

// TestDiagnoseSeedWithoutSnapshotIsNotRetention: a live window seeded from
// DescribeProducers starts where reading began, not at a log start
// retention left: the runbook does not blame retention.
func TestDiagnoseSeedWithoutSnapshotIsNotRetention(t *testing.T) {
	b := testfixture.NewLog().StartAt(10)
	b.Partition.Segments[0].Name = "live window"
	b.Partition.LogStartOffset = 10
	b.Plain(-1, 2)
	b.Partition.Ongoing = []txnindex.OngoingTxn{{ProducerID: p3, ProducerEpoch: 4, FirstOffset: 5}}
	rb := present.Runbook(present.Diagnose(b.Build(), diagnosis.Options{Position: -1}))
	if strings.Contains(rb, "retention") || !strings.Contains(rb, "began at offset 5, before offset 10, where the data read here starts") {
		t.Errorf("runbook:\n%s", rb)
	}
}
