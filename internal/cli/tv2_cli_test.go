package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiagnoseTV2 builds a transactions v2 scenario (markers one epoch
// above their data, an epoch overflow to a new producer id whose
// transaction is left open) into a log dir and checks what diagnose says
// of it: the JSON names the new producer id at epoch 0 and its first
// offset, the text runbook says the same, the exit status is 0 while the
// transaction is young and 3 once it hangs; decide aborts exactly the data
// of the two aborted transactions.
func TestDiagnoseTV2(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tv2.txn")
	scen := strings.Join([]string{
		"topic tv2", "producer a transactional tv2 epoch 32765", "producer b transactional tv2",
		"begin a", "send a 2", "begin b", "send b", "abort a", // a: data 32765, ABORT 32766 at 3
		"commit b",                     // b: COMMIT at epoch 1
		"begin a", "send a", "abort a", // a: data 32766 at 5, ABORT 32767 at 6: producer id exhausted
		"begin a", "send a 3", // producer 1002 at epoch 0, offsets 7-9, open
		"plain 2",
	}, "\n")
	if err := os.WriteFile(src, []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "logs")
	if code, _, errOut := runArgs(t, "scenario", "build", src, "--out", out); code != 0 {
		t.Fatalf("scenario build: %d %s", code, errOut)
	}
	part := filepath.Join(out, "tv2-0")

	// The scenario's clock starts at 2026-01-01T00:00:00Z, 10 ms a batch.
	code, js, errOut := runArgs(t, "diagnose", "--format", "json", "--now", "2026-01-01T00:00:01Z", part)
	if code != 0 {
		t.Fatalf("diagnose: code %d %s", code, errOut)
	}
	var v struct {
		Partitions []struct {
			LastStableOffset int64 `json:"last_stable_offset"`
			HighWatermark    int64 `json:"high_watermark"`
			PinnedBy         *struct {
				ProducerID    int64  `json:"producer_id"`
				ProducerEpoch int16  `json:"producer_epoch"`
				FirstOffset   int64  `json:"first_offset"`
				State         string `json:"state"`
				AbortCommand  string `json:"abort_command"`
			} `json:"pinned_by"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil || len(v.Partitions) != 1 {
		t.Fatalf("json %v: %s", err, js)
	}
	p := v.Partitions[0]
	if p.LastStableOffset != 7 || p.HighWatermark != 12 || p.PinnedBy == nil || p.PinnedBy.ProducerID != 1002 ||
		p.PinnedBy.ProducerEpoch != 0 || p.PinnedBy.FirstOffset != 7 || p.PinnedBy.State != "open" ||
		!strings.HasSuffix(p.PinnedBy.AbortCommand, "--start-offset 7") {
		t.Errorf("diagnosis %+v pinned by %+v", p, p.PinnedBy)
	}
	code, text, _ := runArgs(t, "diagnose", "--now", "2027-01-01T00:00:00Z", part)
	if code != 3 || !strings.Contains(text, "pinned by producer 1002 epoch 0's transaction from offset 7 (late; hanging not confirmed)") {
		t.Errorf("a year later: code %d\n%s", code, text)
	}

	code, nd, _ := runArgs(t, "decide", "--format", "ndjson", part)
	if code != 0 {
		t.Fatalf("decide: code %d", code)
	}
	var aborted []float64
	for _, line := range strings.Split(strings.TrimSpace(nd), "\n") {
		var d map[string]any
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		if d["decision"] == "aborted" {
			aborted = append(aborted, d["offset"].(float64))
		}
	}
	if len(aborted) != 3 || aborted[0] != 0 || aborted[1] != 1 || aborted[2] != 5 {
		t.Errorf("aborted offsets %v, want 0 1 5", aborted)
	}
}
