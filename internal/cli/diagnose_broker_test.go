package cli

import (
	"encoding/json"
	"fmt"
	"github.com/txnscope/txnscope/internal/testfixture"
	"strings"
	"testing"
	"time"
)

// The running broker against what a restart of it changes, and late
// against hanging: log dirs written as the broker writes them, diagnosed
// by the CLI in both formats.

// brokerJSON is the part of `diagnose --format json` these shapes check.
type brokerJSON struct {
	Partitions []struct {
		LogStartOffset   int64 `json:"log_start_offset"`
		HighWatermark    int64 `json:"high_watermark"`
		LastStableOffset int64 `json:"last_stable_offset"`
		PinnedBy         *struct {
			ProducerID          int64  `json:"producer_id"`
			FirstOffset         int64  `json:"first_offset"`
			AgeMs               int64  `json:"age_ms"`
			LastTimestamp       int64  `json:"last_timestamp"`
			State               string `json:"state"`
			Reason              string `json:"reason"`
			FromSnapshot        bool   `json:"from_snapshot"`
			BeganBeforeLogStart bool   `json:"began_before_log_start"`
			AbortCommand        string `json:"abort_command"`
		} `json:"pinned_by"`
		AfterRestart *struct {
			Snapshot         string `json:"snapshot"`
			SnapshotOffset   int64  `json:"snapshot_offset"`
			LastStableOffset int64  `json:"last_stable_offset"`
			Transactions     []struct {
				ProducerID  int64 `json:"producer_id"`
				FirstOffset int64 `json:"first_offset"`
				ReopensAt   int64 `json:"reopens_at"`
			} `json:"transactions"`
			Text string `json:"text"`
		} `json:"after_restart"`
	} `json:"partitions"`
}

// brokerCase is one shape: the log dir, the exit status, the JSON checks
// and what the runbook says and never says.
type brokerCase struct {
	name  string
	dir   func(t *testing.T) string
	args  []string
	code  int
	check func(t *testing.T, d brokerJSON)
	text  []string
	never []string
}

func runBrokerCases(t *testing.T, cases []brokerCase) {
	t.Helper()
	at := testfixture.BrokerNow.Format(time.RFC3339)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.dir(t)
			code, out, errOut := runArgs(t, append(append([]string{"diagnose", "--format", "json", "--now", at}, tc.args...), path)...)
			if code != tc.code || errOut != "" {
				t.Errorf("json: exit %d, want %d; stderr %s", code, tc.code, errOut)
			}
			var d brokerJSON
			if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Partitions) != 1 {
				t.Fatalf("json %v:\n%s", err, out)
			}
			tc.check(t, d)
			code, text, _ := runArgs(t, append(append([]string{"diagnose", "--now", at}, tc.args...), path)...)
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

// TestDiagnoseRunningBrokerAgainstRestart: a producer snapshot at the log
// start is the running broker's state (a restart deletes it,
// ProducerStateManager.truncateAndReload): the answer is the running
// broker's LSO, pinned by the transaction the snapshot lists, with its
// age and the abort at its first offset; beside it, what the next restart
// changes.
func TestDiagnoseRunningBrokerAgainstRestart(t *testing.T) {
	elevenMonths := int64(335 * 24 * time.Hour / time.Millisecond)
	runBrokerCases(t, []brokerCase{
		{
			name: "SnapshotAtTheLogStartIsTheRunningBrokersState",
			dir:  func(t *testing.T) string { return testfixture.AtLogStartDir(t, false) },
			code: exitHanging,
			check: func(t *testing.T, d brokerJSON) {
				p := d.Partitions[0]
				if p.LogStartOffset != 500 || p.HighWatermark != 620 || p.LastStableOffset != 500 || p.PinnedBy == nil {
					t.Fatalf("log start %d HWM %d LSO %d pinned %+v", p.LogStartOffset, p.HighWatermark, p.LastStableOffset, p.PinnedBy)
				}
				b := p.PinnedBy
				if b.ProducerID != 8001 || b.FirstOffset != 120 || !b.FromSnapshot || !b.BeganBeforeLogStart || b.AgeMs != elevenMonths {
					t.Errorf("pinned by %+v", b)
				}
				if !strings.HasSuffix(b.AbortCommand, "abort --topic orders --partition 0 --start-offset 120") {
					t.Errorf("abort command %q", b.AbortCommand)
				}
				r := p.AfterRestart
				if r == nil || r.Snapshot != "00000000000000000500.snapshot" || r.SnapshotOffset != 500 || r.LastStableOffset != 620 ||
					len(r.Transactions) != 1 || r.Transactions[0].ProducerID != 8001 || r.Transactions[0].FirstOffset != 120 || r.Transactions[0].ReopensAt != -1 {
					t.Fatalf("after restart %+v", r)
				}
				for _, s := range []string{"truncateAndReload", "forgets the transaction without writing a marker: the LSO becomes 620",
					"unclean shutdown", "clean shutdown first writes a snapshot at the log end", "replica"} {
					if !strings.Contains(r.Text, s) {
						t.Errorf("after restart text lacks %q: %s", s, r.Text)
					}
				}
			},
			text: []string{"STUCK: the LSO has been held for", "120 offsets behind", "pinned by producer 8001 epoch 3's transaction from offset 120",
				"335d", "--start-offset 120",
				"the running broker against its next restart: LSO 500 now, 620 after a restart that follows an unclean shutdown",
				"00000000000000000500.snapshot lies at the log start 500"},
			never: []string{"clear", "--start-offset 500"},
		},
		{
			// The producer wrote again at 600 (the same transaction: no
			// marker since): the restart's replay opens it there.
			name: "RestartReopensTheTransactionAtItsFirstSurvivingBatch",
			dir:  func(t *testing.T) string { return testfixture.AtLogStartDir(t, true) },
			code: exitHanging,
			check: func(t *testing.T, d brokerJSON) {
				p := d.Partitions[0]
				r := p.AfterRestart
				if p.LastStableOffset != 500 || r == nil || r.LastStableOffset != 600 || len(r.Transactions) != 1 || r.Transactions[0].ReopensAt != 600 {
					t.Fatalf("LSO %d, after restart %+v", p.LastStableOffset, r)
				}
				if !strings.Contains(r.Text, "opens it again at offset 600") || !strings.Contains(r.Text, "the LSO becomes 600") {
					t.Errorf("after restart text: %s", r.Text)
				}
			},
			text: []string{"LSO 500 now, 600 after a restart"},
		},
		{
			// DeleteRecords moved the log start to 540, inside the
			// segment that begins at 500, and deleted no file: the
			// snapshot at 500 is below the log start yet still the
			// running broker's (a restart deletes it). Producer 77's
			// transaction began at 520, below the log start too.
			name: "DeleteRecordsLeftTheSnapshotBelowTheLogStart",
			dir:  deleteRecordsDir,
			code: exitHanging,
			check: func(t *testing.T, d brokerJSON) {
				p := d.Partitions[0]
				if p.LogStartOffset != 540 || p.LastStableOffset != 540 || p.PinnedBy == nil || p.PinnedBy.ProducerID != 8001 || p.PinnedBy.FirstOffset != 120 || !p.PinnedBy.FromSnapshot {
					t.Fatalf("log start %d LSO %d pinned %+v", p.LogStartOffset, p.LastStableOffset, p.PinnedBy)
				}
				r := p.AfterRestart
				if r == nil || r.Snapshot != "00000000000000000500.snapshot" || r.SnapshotOffset != 500 || r.LastStableOffset != 620 || len(r.Transactions) != 2 {
					t.Fatalf("after restart %+v", r)
				}
				var got []string
				for _, x := range r.Transactions {
					got = append(got, fmt.Sprintf("%d@%d>%d", x.ProducerID, x.FirstOffset, x.ReopensAt))
				}
				if strings.Join(got, " ") != "8001@120>-1 77@520>-1" {
					t.Errorf("after restart transactions %v", got)
				}
				if !strings.Contains(r.Text, "lies below the log start 540, inside its segment: DeleteRecords moved the log start there") {
					t.Errorf("after restart text: %s", r.Text)
				}
			},
			text:  []string{"LSO 540 now, 620 after a restart that follows an unclean shutdown", "pinned by producer 8001 epoch 3's transaction from offset 120"},
			never: []string{"clear:"},
		},
	})
}

// deleteRecordsDir is testfixture.AtLogStartDir's partition after DeleteRecords moved
// its log start to 540, inside the segment beginning at 500: the snapshot
// at 500 lists producer 8001's transaction open since 120, and producer
// 77 began one at 520, both left open.
func deleteRecordsDir(t *testing.T) string {
	old := testfixture.BrokerNow.Add(-335 * 24 * time.Hour).UnixMilli()
	recent := testfixture.BrokerNow.Add(-time.Minute).UnixMilli()
	return testfixture.WriteShapeDir(t, "orders", 540, 620, []testfixture.Batch{
		{Base: 500, PID: -1, Ctrl: -1, N: 20, TS: recent},
		{Base: 520, PID: 77, Epoch: 0, Txn: true, Ctrl: -1, N: 5, TS: recent},
		{Base: 525, PID: -1, Ctrl: -1, N: 25, TS: recent},
		{Base: 550, PID: 9, Epoch: 1, Txn: true, Ctrl: -1, N: 9, TS: recent},
		{Base: 559, PID: 9, Epoch: 1, Txn: true, Ctrl: 1, TS: recent, Coord: 2},
		{Base: 560, PID: -1, Ctrl: -1, N: 60, TS: recent},
	}, 500, []testfixture.Snap{
		{PID: 8001, Epoch: 3, LastSeq: 19, LastOffset: 139, OffsetDelta: 19, TS: old, CoordEpoch: 4, CurrentTxnFirstOffset: 120},
	})
}
