package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/scenario/gen"
)

// TestDecideCounts: decide --counts of every demo, over the whole log and a
// range, equals the per-offset NDJSON of decide counted line by line
// (records fill their batches' offsets in the demos), and --range without
// --counts or a bad range is a usage error.
func TestDecideCounts(t *testing.T) {
	for _, d := range gen.Demos() {
		for _, rng := range []string{"", "3-9"} {
			args := []string{"decide", "--demo", d.Name, "--format", "ndjson"}
			code, perOffset, errOut := runArgs(t, args...)
			if code != 0 {
				t.Fatalf("%s: code %d: %s", d.Name, code, errOut)
			}
			cargs := append(args, "--counts")
			if rng != "" {
				cargs = append(cargs, "--range", rng)
			}
			code, out, errOut := runArgs(t, cargs...)
			if code != 0 {
				t.Fatalf("%v: code %d: %s", cargs, code, errOut)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %v: %q", cargs, err, out)
			}
			from, to := int64(got["from"].(float64)), int64(got["to"].(float64))
			if rng == "" && from != 0 {
				t.Errorf("%s: whole-log counts start at %d", d.Name, from)
			}
			want := lineCounts(t, perOffset, from, to)
			for _, k := range countKeys {
				if got[k] != want[k] {
					t.Errorf("%s range %q: %s %v, the per-offset output has %v", d.Name, rng, k, got[k], want[k])
				}
			}
		}
	}
	code, out, _ := runArgs(t, "decide", "--demo", "interleaved", "--counts")
	if code != 0 || !strings.Contains(out, "17 records in 9 batches") || !strings.Contains(out, "aborted                          5") {
		t.Errorf("text counts: code %d\n%s", code, out)
	}
	// A range the consumer passes none of (all pending behind the LSO)
	// says so in words, not with the -1 of the JSON.
	code, out, _ = runArgs(t, "decide", "--demo", "stuck-lso", "--counts", "--range", "5-7")
	if code != 0 || !strings.Contains(out, "pending                          3") || !strings.Contains(out, "last offset the consumer passes  none\n") {
		t.Errorf("counts of a pending range: code %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"--range", "3-9"}, {"--counts", "--range", "9-3"}, {"--counts", "--range", "x"}} {
		if code, _, _ := runArgs(t, append([]string{"decide", "--demo", "interleaved"}, bad...)...); code != 2 {
			t.Errorf("%v: code %d, want 2", bad, code)
		}
	}
}

// countKeys are the keys of decide --counts --format ndjson that count
// records or offsets.
var countKeys = []string{"delivered_records", "aborted_records", "control_markers", "pending_records", "before_position_records", "missing_offsets"}

// lineCounts counts the lines of decide --format ndjson inside [from, to]
// under the keys of --counts: a per-offset line is one record, a gap line
// its offsets, a range line with "records" (a batch with holes whose
// records were not read) that many records.
func lineCounts(t *testing.T, ndjson string, from, to int64) map[string]float64 {
	t.Helper()
	want := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(ndjson), "\n") {
		var m struct {
			Offset   *int64 `json:"offset"`
			From, To int64
			Records  *int64 `json:"records"`
			Decision string `json:"decision"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		lo, hi := m.From, m.To
		if m.Offset != nil {
			lo, hi = *m.Offset, *m.Offset
		}
		lo, hi = max(lo, from), min(hi, to)
		if lo > hi {
			continue
		}
		key := map[string]string{"delivered": "delivered_records", "aborted": "aborted_records", "control": "control_markers",
			"pending": "pending_records", "before_position": "before_position_records", "gap": "missing_offsets"}[m.Decision]
		n := hi - lo + 1
		if m.Records != nil {
			n = min(n, *m.Records)
		}
		want[key] += float64(n)
	}
	return want
}
