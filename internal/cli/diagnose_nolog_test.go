package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// TestDiagnoseNoSegmentOffsetsUnknown: a partition directory with no .log
// segment has unknown offsets, never 0: -1 in the JSON with the reason,
// "unknown" in the text, and what its snapshots show (the KRaft snapshot
// up to 60,500, the producer snapshot written at 66,046, the index files
// whose .log is missing).
func TestDiagnoseNoSegmentOffsetsUnknown(t *testing.T) {
	dir := testfixture.WriteMetadataOnlyDir(t)
	code, out, errOut := runArgs(t, "diagnose", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Partitions []struct {
			Topic          string `json:"topic"`
			LogStart       int64  `json:"log_start_offset"`
			LogEnd         int64  `json:"log_end_offset"`
			HWM            int64  `json:"high_watermark"`
			HWMSource      string `json:"high_watermark_source"`
			LSO            int64  `json:"last_stable_offset"`
			OffsetsUnknown *struct {
				Reason   string   `json:"reason"`
				Evidence []string `json:"evidence"`
			} `json:"offsets_unknown"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Partitions) != 1 {
		t.Fatalf("json %v: %s", err, out)
	}
	p := v.Partitions[0]
	if p.Topic != "__cluster_metadata" || p.LogStart != -1 || p.LogEnd != -1 || p.HWM != -1 || p.LSO != -1 || p.HWMSource != "unknown" || p.OffsetsUnknown == nil {
		t.Fatalf("%+v", p)
	}
	ev := strings.Join(p.OffsetsUnknown.Evidence, "\n")
	for _, want := range []string{"00000000000000060500-0000000025.checkpoint, holds the cluster metadata up to offset 60,500 (epoch 25)",
		"00000000000000066046.snapshot, was written when the log end was 66,046", "00000000000000000000.index, 00000000000000000000.timeindex"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	_, text, _ := runArgs(t, "diagnose", dir)
	for _, want := range []string{"offsets unknown: no .log segment", "up to offset 60,500", "66,046", "not a data partition"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, never := range []string{"log end 0", "high watermark 0", "log start 0"} {
		if strings.Contains(text, never) {
			t.Errorf("text says %q:\n%s", never, text)
		}
	}
}
