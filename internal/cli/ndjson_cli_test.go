package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// TestDecideNDJSONHoles, through the CLI: decide
// --format ndjson of a partition directory holding a compacted batch
// (records at deltas 0, 3, 7 of 0-9) and a batch claiming 2^31 offsets
// writes a line per record and a gap line per hole, quickly, and the lines
// add up to decide --counts; the one-segment input does the same.
func TestDecideNDJSONHoles(t *testing.T) {
	data := bytes.Join([][]byte{testfixture.HoledBatch(0, 9, 0, 3, 7), testfixture.HoledBatch(10, math.MaxInt32, 0, 2)}, nil)
	dir := filepath.Join(t.TempDir(), "t-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, seg} {
		start := time.Now()
		code, out, errOut := runArgs(t, "decide", "--format", "ndjson", path)
		if code != 0 {
			t.Fatalf("%s: code %d: %s", path, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		t.Logf("%d-byte segment: %d lines in %v", len(data), len(lines), time.Since(start))
		// 5 records; gaps 1-2, 4-6, 8-9, 11, 13-(10+MaxInt32).
		if len(lines) != 10 || time.Since(start) > 5*time.Second {
			t.Fatalf("%s: %d lines in %v, want 10:\n%s", path, len(lines), time.Since(start), out)
		}
		if !strings.Contains(lines[1], `"from":1,"to":2,"decision":"gap","cause":"gap_compacted"`) ||
			!strings.Contains(lines[9], `"from":13,"to":2147483657,"decision":"gap"`) {
			t.Errorf("%s: lines\n%s", path, out)
		}
		code, cnt, errOut := runArgs(t, "decide", "--format", "ndjson", "--counts", path)
		if code != 0 {
			t.Fatalf("--counts: code %d: %s", code, errOut)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(cnt), &got); err != nil {
			t.Fatal(err)
		}
		want := lineCounts(t, out, 0, math.MaxInt64)
		for _, k := range countKeys {
			if got[k] != want[k] {
				t.Errorf("%s: --counts %s %v, the lines add up to %v", path, k, got[k], want[k])
			}
		}
	}
}
