package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/capture"
)

// The production shapes, each written as a real log dir (v2
// batches encoded with kmsg, a hand-written producer .snapshot, the log
// dir's checkpoints) or a raw capture, and diagnosed through `server
// diagnose` in both formats.

// diagJSON is the part of `diagnose --format json` the shapes check.
type diagJSON struct {
	Partitions []struct {
		LogStartOffset      int64  `json:"log_start_offset"`
		HighWatermark       int64  `json:"high_watermark"`
		HighWatermarkSource string `json:"high_watermark_source"`
		LastStableOffset    int64  `json:"last_stable_offset"`
		LSOLagAtLeast       bool   `json:"lso_lag_at_least"`
		PinnedBy            *struct {
			ProducerID                 int64  `json:"producer_id"`
			ProducerEpoch              int16  `json:"producer_epoch"`
			FirstOffset                int64  `json:"first_offset"`
			AgeMs                      int64  `json:"age_ms"`
			State                      string `json:"state"`
			LastTimestamp              int64  `json:"last_timestamp"`
			FromSnapshot               bool   `json:"from_snapshot"`
			BeganBeforeLogStart        bool   `json:"began_before_log_start"`
			MayHaveBegunBeforeLogStart bool   `json:"may_have_begun_before_log_start"`
			StartEvidence              string `json:"start_evidence"`
			CoordinatorEpoch           int32  `json:"coordinator_epoch"`
			CoordinatorEpochSource     string `json:"coordinator_epoch_source"`
			AbortCommand               string `json:"abort_command"`
			AbortByProducerCommand     string `json:"abort_command_by_producer_id"`
			MarkerOffset               *int64 `json:"marker_offset"`
			MarkerType                 string `json:"marker_type"`
			HighWatermarkSource        string `json:"high_watermark_source"`
			Unseen                     bool   `json:"unseen"`
			EndsWhen                   string `json:"ends_when"`
			CheckCommand               string `json:"check_command"`
		} `json:"pinned_by"`
		OpenTransactions []struct {
			State string `json:"state"`
		} `json:"open_transactions"`
		Compacted []struct {
			ProducerID  int64  `json:"producer_id"`
			FirstOffset int64  `json:"first_offset"`
			State       string `json:"state"`
			Reason      string `json:"reason"`
			PinsLSO     bool   `json:"pins_lso"`
		} `json:"compacted_transactions"`
		Compaction *struct {
			Compacted         bool     `json:"compacted"`
			CleanerCheckpoint *int64   `json:"cleaner_checkpoint"`
			CleanedBelow      int64    `json:"cleaned_below"`
			Evidence          []string `json:"evidence"`
		} `json:"compaction"`
		Mismatches []struct {
			Segment     string `json:"segment"`
			Kind        string `json:"kind"`
			Explanation string `json:"explanation"`
			Note        string `json:"note"`
		} `json:"txnindex_mismatches"`
	} `json:"partitions"`
}

// shapeCase is one production shape: the input it writes, the exit status
// diagnose gives (exitOK, exitHanging, exitFailure), the JSON it checks
// (nil for a failure, which prints no JSON) and what the runbook says.
type shapeCase struct {
	name   string
	dir    func(t *testing.T) string
	args   []string // more diagnose flags
	code   int
	stderr bool // stderr may have warnings (damage found while reading)
	check  func(t *testing.T, d diagJSON)
	text   []string // the runbook contains each
	never  []string // and none of these
}

// TestDiagnoseProductionShapes: each shape is diagnosed by the CLI; the
// JSON fields, the text runbook and the exit status say what the broker
// would do.
func TestDiagnoseProductionShapes(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range productionShapes(now) {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, now) })
	}
}

// productionShapes are the shapes, aged at now.
func productionShapes(now time.Time) []shapeCase {
	nowMs := now.UnixMilli()
	elevenMonths := int64(335 * 24 * time.Hour / time.Millisecond)
	old := nowMs - elevenMonths // the zombie's last write
	recent := nowMs - 60_000    // the partition still moves on

	// retained is the log left after retention deleted everything below
	// offset 500: producer 8 commits at coordinator epoch 1, plain
	// producers write on.
	retained := []testfixture.Batch{
		{Base: 500, PID: -1, Ctrl: -1, N: 5, TS: recent},
		{Base: 505, PID: 8, Epoch: 2, Txn: true, Ctrl: -1, N: 3, TS: recent},
		{Base: 508, PID: 8, Epoch: 2, Txn: true, Ctrl: 1, TS: recent, Coord: 1},
		{Base: 509, PID: -1, Ctrl: -1, N: 11, TS: recent},
	}
	cases := []shapeCase{
		{
			// Retention deleted the start of producer 42's transaction
			// (offset 120); only the snapshot remembers it: first offset,
			// last write eleven months ago, epoch 5, coordinator epoch 3.
			name: "SnapshotSeededHangingTransactionBeganBeforeLogStart",
			dir: func(t *testing.T) string {
				return testfixture.WriteShapeDir(t, "orders", 500, 520, retained, 520, []testfixture.Snap{
					{PID: 8, Epoch: 2, LastSeq: 2, LastOffset: 508, TS: recent, CoordEpoch: 1, CurrentTxnFirstOffset: -1},
					{PID: 42, Epoch: 5, LastSeq: 9, LastOffset: 129, OffsetDelta: 9, TS: old, CoordEpoch: 3, CurrentTxnFirstOffset: 120},
				})
			},
			code: exitHanging,
			check: func(t *testing.T, d diagJSON) {
				p := d.Partitions[0]
				// UnifiedLog clamps the first unstable offset to the log start.
				if p.LastStableOffset != 500 || p.LogStartOffset != 500 || p.HighWatermark != 520 || p.PinnedBy == nil {
					t.Fatalf("LSO %d log start %d HWM %d pinned %+v", p.LastStableOffset, p.LogStartOffset, p.HighWatermark, p.PinnedBy)
				}
				b := p.PinnedBy
				if b.ProducerID != 42 || b.ProducerEpoch != 5 || b.FirstOffset != 120 || b.State != "late" || !b.FromSnapshot || !b.BeganBeforeLogStart {
					t.Errorf("pinned by %+v", b)
				}
				if b.LastTimestamp != old || b.AgeMs != elevenMonths || !p.LSOLagAtLeast {
					t.Errorf("last write %d age %d (want %d, %d), lag at least %v", b.LastTimestamp, b.AgeMs, old, elevenMonths, p.LSOLagAtLeast)
				}
				if b.CoordinatorEpoch != 3 || b.CoordinatorEpochSource != "producer snapshot 00000000000000000520.snapshot" {
					t.Errorf("coordinator epoch %d from %q", b.CoordinatorEpoch, b.CoordinatorEpochSource)
				}
				if !strings.HasSuffix(b.AbortCommand, "abort --topic orders --partition 0 --start-offset 120") ||
					!strings.HasSuffix(b.AbortByProducerCommand, "--producer-id 42 --producer-epoch 5 --coordinator-epoch 3") {
					t.Errorf("commands %q / %q", b.AbortCommand, b.AbortByProducerCommand)
				}
			},
			text: []string{"STUCK", "pinned by producer 42 epoch 5's transaction from offset 120 (late; hanging not confirmed)",
				"began at offset 120, before the log start 500 (deleted by retention)", "335d,", "--start-offset 120",
				"--coordinator-epoch 3", "(coordinator epoch 3, the largest known; evidence: producer snapshot 00000000000000000520.snapshot)"},
			never: []string{"--1", "0s ago", "--coordinator-epoch 0", "--start-offset 500"},
		},
		{
			// The producer's last marker in the log has a higher
			// coordinator epoch than its snapshot entry: the command
			// takes the larger, and says it came from the marker.
			name: "CoordinatorEpochFromTheLogsMarkerWhenHigherThanTheSnapshots",
			dir: func(t *testing.T) string {
				bs := append([]testfixture.Batch{}, retained...)
				bs = append(bs,
					testfixture.Batch{Base: 520, PID: 42, Epoch: 5, Txn: true, Ctrl: 1, TS: old, Coord: 4},
					testfixture.Batch{Base: 521, PID: 42, Epoch: 5, Txn: true, Ctrl: -1, N: 2, TS: old},
					testfixture.Batch{Base: 523, PID: -1, Ctrl: -1, N: 2, TS: recent})
				return testfixture.WriteShapeDir(t, "orders", 500, 525, bs, 520, []testfixture.Snap{
					{PID: 42, Epoch: 5, LastSeq: 9, LastOffset: 129, OffsetDelta: 9, TS: old, CoordEpoch: 3, CurrentTxnFirstOffset: 120},
				})
			},
			code: exitHanging,
			check: func(t *testing.T, d diagJSON) {
				b := d.Partitions[0].PinnedBy
				if b == nil || b.FirstOffset != 521 || b.CoordinatorEpoch != 4 || b.CoordinatorEpochSource != "COMMIT marker at offset 520" || b.BeganBeforeLogStart {
					t.Errorf("pinned by %+v", b)
				}
			},
			text:  []string{"--producer-id 42 --producer-epoch 5 --coordinator-epoch 4", "evidence: COMMIT marker at offset 520"},
			never: []string{"--coordinator-epoch 3"},
		},
		{
			// No snapshot: producer 42's first surviving batch is
			// transactional data with no marker before it, at the log
			// start. It may have begun before; say what would settle it.
			name: "RetentionWithoutSnapshotMayHaveBegunBeforeLogStart",
			dir: func(t *testing.T) string {
				bs := []testfixture.Batch{
					{Base: 500, PID: 42, Epoch: 5, Txn: true, Ctrl: -1, N: 4, TS: old},
					{Base: 504, PID: -1, Ctrl: -1, N: 16, TS: recent},
				}
				return testfixture.WriteShapeDir(t, "orders", 500, 520, bs, 0, nil)
			},
			code: exitHanging,
			check: func(t *testing.T, d diagJSON) {
				b := d.Partitions[0].PinnedBy
				if b == nil || b.FirstOffset != 500 || !b.MayHaveBegunBeforeLogStart || b.BeganBeforeLogStart || b.State != "late" {
					t.Fatalf("pinned by %+v", b)
				}
				for _, s := range []string{".snapshot", "describe-producers", "CurrentTransactionStartOffset"} {
					if !strings.Contains(b.StartEvidence, s) {
						t.Errorf("start evidence lacks %q: %s", s, b.StartEvidence)
					}
				}
			},
			text: []string{"may have begun before the log start 500", "would settle it"},
		},
		{
			// A copied log dir whose HWM checkpoint (7) lags the log end
			// (10): producer 8's COMMIT at offset 7 is not replicated, so
			// its transaction from offset 4 still holds the LSO.
			name: "UnreplicatedMarkerHoldsTheLSO",
			dir: func(t *testing.T) string {
				bs := []testfixture.Batch{
					{Base: 0, PID: -1, Ctrl: -1, N: 4, TS: recent},
					{Base: 4, PID: 8, Epoch: 1, Txn: true, Ctrl: -1, N: 2, TS: recent},
					{Base: 6, PID: -1, Ctrl: -1, N: 1, TS: recent},
					{Base: 7, PID: 8, Epoch: 1, Txn: true, Ctrl: 1, TS: recent, Coord: 2},
					{Base: 8, PID: -1, Ctrl: -1, N: 2, TS: recent},
				}
				return testfixture.WriteShapeDir(t, "orders", 0, 7, bs, 0, nil)
			},
			code: 0,
			check: func(t *testing.T, d diagJSON) {
				p := d.Partitions[0]
				b := p.PinnedBy
				if p.LastStableOffset != 4 || p.HighWatermark != 7 || b == nil {
					t.Fatalf("LSO %d HWM %d pinned %+v", p.LastStableOffset, p.HighWatermark, b)
				}
				if b.State != "decided_unreplicated" || b.ProducerID != 8 || b.FirstOffset != 4 || b.MarkerOffset == nil || *b.MarkerOffset != 7 ||
					b.MarkerType != "COMMIT" || b.HighWatermarkSource != "replication-offset-checkpoint" {
					t.Errorf("pinned by %+v", b)
				}
				// What ends it is the high watermark passing the
				// marker, said in words; no abort command.
				if !strings.HasPrefix(b.EndsWhen, "nothing to abort") || !strings.Contains(b.EndsWhen, "high watermark passes the marker at 7") ||
					b.AbortCommand != "" || b.CheckCommand != "kafka-topics.sh --bootstrap-server \"$BOOTSTRAP\" --describe --topic orders" {
					t.Errorf("ends when %q, check %q, abort %q", b.EndsWhen, b.CheckCommand, b.AbortCommand)
				}
			},
			text: []string{"STUCK: the LSO is 3 offsets behind the high watermark, held by producer 8 epoch 1's transaction from offset 4, decided (COMMIT marker at offset 7) but not yet replicated",
				"high watermark 7 (replication-offset-checkpoint)",
				"to end it: nothing to abort: the COMMIT marker is written; the LSO moves past offset 4 when the high watermark passes the marker at 7",
				"check the replicas (Isr against Replicas of partition 0): kafka-topics.sh --bootstrap-server \"$BOOTSTRAP\" --describe --topic orders\n"},
			never: []string{"clear", "abort --topic"},
		},
		{
			// Transactions v2 (KIP-890): producer 5's data at epoch E,
			// its marker at E+1, the next transaction at E+1; at epoch
			// 32766 its ABORT takes the last epoch and the producer
			// continues as producer 6 at epoch 0, whose transaction is
			// left open for eleven months. Only that one is open.
			name: "TransactionsV2EpochsAndOverflow",
			dir: func(t *testing.T) string {
				return testfixture.WriteShapeDir(t, "orders", 0, 14, []testfixture.Batch{
					{Base: 0, PID: 5, Epoch: 10, Txn: true, Ctrl: -1, N: 2, TS: old},
					{Base: 2, PID: 5, Epoch: 11, Txn: true, Ctrl: 1, TS: old, Coord: 2},
					{Base: 3, PID: 5, Epoch: 11, Txn: true, Ctrl: -1, N: 1, TS: old},
					{Base: 4, PID: 5, Epoch: 12, Txn: true, Ctrl: 0, TS: old, Coord: 2},
					{Base: 5, PID: 5, Epoch: 32766, Txn: true, Ctrl: -1, N: 1, TS: old},
					{Base: 6, PID: 5, Epoch: 32767, Txn: true, Ctrl: 0, TS: old, Coord: 2},
					{Base: 7, PID: 6, Epoch: 0, Txn: true, Ctrl: -1, N: 3, TS: old},
					{Base: 10, PID: -1, Ctrl: -1, N: 4, TS: recent},
				}, 0, nil)
			},
			code: exitHanging,
			check: func(t *testing.T, d diagJSON) {
				p := d.Partitions[0]
				b := p.PinnedBy
				if p.LastStableOffset != 7 || len(p.OpenTransactions) != 1 || b == nil || b.ProducerID != 6 || b.ProducerEpoch != 0 ||
					b.FirstOffset != 7 || b.State != "late" || !strings.HasSuffix(b.AbortCommand, "--start-offset 7") {
					t.Errorf("LSO %d open %+v pinned by %+v", p.LastStableOffset, p.OpenTransactions, b)
				}
			},
			text:  []string{"pinned by producer 6 epoch 0's transaction from offset 7 (late; hanging not confirmed)", "--start-offset 7"},
			never: []string{"producer 5 epoch", "open transaction 2"},
		},
		{
			// A read_committed capture: the broker reported LSO 500, equal
			// to its log start: the LSO may be clamped, so no transaction
			// need start at 500 and --start-offset 500 is not offered.
			name: "CaptureWithLSOClampedToLogStart",
			dir:  writeClampedCapture,
			// The broker reported that LSO for 40 minutes while the high
			// watermark moved on: past transaction.max.timeout.ms.
			code: exitHanging,
			check: func(t *testing.T, d diagJSON) {
				b := d.Partitions[0].PinnedBy
				if b == nil || !b.Unseen || b.FirstOffset != 500 || !b.MayHaveBegunBeforeLogStart {
					t.Fatalf("pinned by %+v", b)
				}
				if strings.Contains(b.AbortCommand, "--start-offset 500") || !strings.Contains(b.AbortCommand, "describe-producers") {
					t.Errorf("abort command %q", b.AbortCommand)
				}
			},
			text:  []string{"may have begun before it", "START=  # its CurrentTransactionStartOffset", `--start-offset "${START:?set START first}"`},
			never: []string{"--start-offset 500"},
		},
	}
	cases = append(cases, compactedShapes(nowMs)...)
	cases = append(cases, exitStatusShapes(recent)...)
	return cases
}

// run diagnoses the shape at now in both formats and checks them.
func (tc shapeCase) run(t *testing.T, now time.Time) {
	path := tc.dir(t)
	at := now.Format(time.RFC3339)
	args := append([]string{"diagnose", "--format", "json", "--now", at}, tc.args...)
	code, out, errOut := runArgs(t, append(args, path)...)
	if code != tc.code {
		t.Errorf("json: exit %d, want %d; stderr %s", code, tc.code, errOut)
	}
	if errOut != "" && !tc.stderr {
		t.Errorf("json: stderr %s", errOut)
	}
	if tc.check == nil {
		// A failure: the error, on stderr, names the input.
		if out != "" || !strings.Contains(errOut, filepath.Base(path)) {
			t.Errorf("json: stdout %q, stderr %q", out, errOut)
		}
		return
	}
	var d diagJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Partitions) != 1 {
		t.Fatalf("json %v:\n%s", err, out)
	}
	tc.check(t, d)
	args = append([]string{"diagnose", "--now", at}, tc.args...)
	code, text, _ := runArgs(t, append(args, path)...)
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
}

// writeClampedCapture writes a raw capture of a read_committed consumer at
// offset 500 whose broker reports log start 500, LSO 500 and a high
// watermark moving from 510 to 530: nothing below the LSO to return.
func writeClampedCapture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clamped.txncap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := capture.NewRawWriter(f)
	t0 := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	for i, hwm := range []int64{510, 520, 530} {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.IsolationLevel = 11, 1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "orders"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset, rp.PartitionMaxBytes, rp.LogStartOffset = 500, 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.Version = 11
		st := kmsg.NewFetchResponseTopic()
		st.Topic = "orders"
		sp := kmsg.NewFetchResponseTopicPartition()
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = hwm, 500, 500
		sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
		st.Partitions = append(st.Partitions, sp)
		resp.Topics = append(resp.Topics, st)
		if err := w.Write(capture.RawExchange{Time: t0.Add(time.Duration(i) * 20 * time.Minute), APIKey: 1, APIVersion: 11, CorrelationID: int32(i + 1),
			Connection: "c1", Request: req.AppendTo(nil), Response: resp.AppendTo(nil)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
