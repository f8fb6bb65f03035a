package cli

import (
	"encoding/json"
	"github.com/txnscope/txnscope/internal/testfixture"
	"strings"
	"testing"
	"time"
)

// TestDiagnoseTieredStorage: a partition that keeps its older segments in
// remote storage (KIP-405) is recognised from the disk (the checkpoint
// below the first local segment and one more sign: remote-log-index-cache/
// or a leader epoch starting below it); the broker's log start is the
// checkpoint's, the snapshot at the first local offset is kept, and the
// transaction it lists pins the LSO at 7,930, below the first local
// offset: nothing local is delivered, and the transaction "began in remote
// storage", not deleted. The checkpoint alone (one written before
// retention's deletion reached it) is not enough.
func TestDiagnoseTieredStorage(t *testing.T) {
	type tiered struct {
		LogStart   int64    `json:"log_start_offset"`
		LocalStart int64    `json:"local_log_start_offset"`
		Evidence   []string `json:"evidence"`
	}
	cases := []struct {
		name     string
		cache    bool
		epochs   [][2]int64
		tiered   bool
		evidence string // in the evidence
		logStart int64
		lso      int64
	}{
		{"RemoteIndexCacheInTheLogDir", true, [][2]int64{{7, 8000}}, true, "remote-log-index-cache/", 5000, 7930},
		{"LeaderEpochBelowTheFirstLocalSegment", false, [][2]int64{{5, 7500}, {7, 8000}}, true, "leader-epoch-checkpoint lists epoch 5 from offset 7,500", 5000, 7930},
		{"CheckpointAloneIsNotTiered", false, [][2]int64{{7, 8000}}, false, "", 8000, 8000},
	}
	at := testfixture.BrokerNow.Format(time.RFC3339)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := testfixture.TieredDir(t, tc.cache, tc.epochs)
			code, out, errOut := runArgs(t, "diagnose", "--format", "json", "--now", at, "--position", "8000", dir)
			if code != 0 || errOut != "" {
				t.Errorf("exit %d: %s", code, errOut)
			}
			var v struct {
				Partitions []struct {
					LogStart int64   `json:"log_start_offset"`
					LSO      int64   `json:"last_stable_offset"`
					HWM      int64   `json:"high_watermark"`
					Tiered   *tiered `json:"tiered_storage"`
					PinnedBy *struct {
						ProducerID   int64  `json:"producer_id"`
						FirstOffset  int64  `json:"first_offset"`
						Remote       bool   `json:"began_in_remote_storage"`
						BeforeStart  bool   `json:"began_before_log_start"`
						FromSnapshot bool   `json:"from_snapshot"`
						AbortCommand string `json:"abort_command"`
					} `json:"pinned_by"`
					Lag *struct {
						ToDeliver int64 `json:"records_to_deliver"`
					} `json:"lag"`
					AfterRestart *struct{} `json:"after_restart"`
				} `json:"partitions"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Partitions) != 1 {
				t.Fatalf("json %v: %s", err, out)
			}
			p := v.Partitions[0]
			if p.LogStart != tc.logStart || p.LSO != tc.lso || p.HWM != 8020 || p.PinnedBy == nil || p.PinnedBy.ProducerID != 6101 || p.PinnedBy.FirstOffset != 7930 {
				t.Fatalf("log start %d LSO %d HWM %d pinned %+v", p.LogStart, p.LSO, p.HWM, p.PinnedBy)
			}
			if !strings.HasSuffix(p.PinnedBy.AbortCommand, "--start-offset 7930") {
				t.Errorf("abort %q", p.PinnedBy.AbortCommand)
			}
			_, text, _ := runArgs(t, "diagnose", "--now", at, "--position", "8000", dir)
			if !tc.tiered {
				// The item of the running broker: the snapshot at the
				// log start it keeps.
				if p.Tiered != nil || p.AfterRestart == nil || !p.PinnedBy.BeforeStart || p.PinnedBy.Remote {
					t.Errorf("tiered %+v, after restart %v, pinned %+v", p.Tiered, p.AfterRestart, p.PinnedBy)
				}
				if strings.Contains(text, "remote storage") {
					t.Errorf("runbook speaks of remote storage:\n%s", text)
				}
				return
			}
			if p.Tiered == nil || p.Tiered.LogStart != 5000 || p.Tiered.LocalStart != 8000 || !strings.Contains(strings.Join(p.Tiered.Evidence, "\n"), tc.evidence) ||
				!strings.Contains(p.Tiered.Evidence[0], "log-start-offset-checkpoint says 5,000, below the first local segment, 8,000") {
				t.Errorf("tiered %+v", p.Tiered)
			}
			if !p.PinnedBy.Remote || p.PinnedBy.BeforeStart || !p.PinnedBy.FromSnapshot || p.AfterRestart != nil {
				t.Errorf("pinned %+v, after restart %v", p.PinnedBy, p.AfterRestart)
			}
			// Nothing local is delivered: the LSO is below it all.
			if p.Lag == nil || p.Lag.ToDeliver != 0 {
				t.Errorf("lag %+v", p.Lag)
			}
			for _, s := range []string{"tiered storage (KIP-405): offsets 5000-7999 are in remote storage, the first local segment begins at 8000",
				"began at offset 7930, in remote storage", "log start 5000", "a read_committed consumer receives nothing from there", tc.evidence} {
				if !strings.Contains(text, s) {
					t.Errorf("runbook lacks %q:\n%s", s, text)
				}
			}
			for _, s := range []string{"deleted by retention", "retention deleted", "-1"} {
				if strings.Contains(text, s) {
					t.Errorf("runbook has %q:\n%s", s, text)
				}
			}
		})
	}
}
