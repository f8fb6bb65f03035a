package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiagnoseRecoveryTruncation: the spanning demo's middle segment with
// a bad CRC in its first batch. A restart after an unclean shutdown
// recovers it when the recovery point lies at or below it: it truncates
// the log at its base, deletes the last segment, and with it the ABORT
// marker of the transaction that began in the first segment, which is
// then open again and pins the LSO at 0. diagnose says so from the tail
// (which then reads every segment) as from the full replay, in text and
// JSON. With the recovery point past the segment, or the clean shutdown
// marker in the log directory, no restart recovers it.
func TestDiagnoseRecoveryTruncation(t *testing.T) {
	cases := []struct {
		name     string
		rp       string
		clean    bool
		truncate bool
	}{
		{name: "recovery point below the damage", rp: "0", truncate: true},
		{name: "recovery point in the damaged segment", rp: "8", truncate: true},
		{name: "recovery point past the damaged segment", rp: "13"},
		{name: "clean shutdown", rp: "0", clean: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := damagedSpanning(t, c.rp)
			root := filepath.Dir(dir)
			if c.clean {
				if err := os.WriteFile(filepath.Join(root, ".kafka_cleanshutdown"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{{dir}, {"--full-replay", dir}} {
				code, out, errOut := runArgs(t, append([]string{"diagnose"}, args...)...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
				const head = "AN UNCLEAN RESTART TRUNCATES THIS LOG at offset 6: LSO 16 now, 0 after it"
				if got := strings.Contains(out, head); got != c.truncate {
					t.Errorf("%v: %q in the runbook: %v, want %v:\n%s", args, head, got, c.truncate, out)
				}
				if c.truncate {
					for _, want := range []string{
						"; it deletes 00000000000000000013.log", "producer 3's transaction from offset 0 (its ABORT marker at 13)",
						"The broker's LSO then becomes 0 (now 16), its high watermark 6.",
					} {
						if !strings.Contains(out, want) {
							t.Errorf("%v: no %q in:\n%s", args, want, out)
						}
					}
				}
				if len(args) == 1 && c.truncate && !strings.Contains(out, "full replay: 00000000000000000006.log, which a restart after an unclean shutdown recovers") {
					t.Errorf("the tail does not say why it read every segment:\n%s", out)
				}
				_, js, _ := runArgs(t, append([]string{"diagnose", "--format", "json"}, args...)...)
				var doc struct {
					Partitions []struct {
						RecoveryTruncates *struct {
							Segment         string   `json:"segment"`
							Offset          int64    `json:"offset"`
							DeletedSegments []string `json:"deleted_segments"`
							Reopened        []struct {
								ProducerID   int64  `json:"producer_id"`
								MarkerOffset int64  `json:"marker_offset"`
								MarkerType   string `json:"marker_type"`
							} `json:"reopened"`
							LastStableOffset int64 `json:"last_stable_offset"`
						} `json:"recovery_truncates"`
					} `json:"partitions"`
				}
				if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Partitions) != 1 {
					t.Fatalf("%v: json: %v\n%s", args, err, js)
				}
				r := doc.Partitions[0].RecoveryTruncates
				switch {
				case !c.truncate && r != nil:
					t.Errorf("%v: recovery_truncates %+v, want none", args, *r)
				case c.truncate && (r == nil || r.Segment != "00000000000000000006.log" || r.Offset != 6 || len(r.DeletedSegments) != 1 ||
					len(r.Reopened) != 1 || r.Reopened[0].ProducerID != 3 || r.Reopened[0].MarkerOffset != 13 || r.Reopened[0].MarkerType != "ABORT" || r.LastStableOffset != 0):
					t.Errorf("%v: recovery_truncates %+v", args, r)
				}
			}
		})
	}
}
