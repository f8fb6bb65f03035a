package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnoseFromSnapshot: `server diagnose` of a partition directory with
// a producer snapshot at each roll reads only the segments after the
// newest one (and the span of the hanging transaction open in it), says so
// in both formats, and reports what --full-replay reports; without
// snapshots it says it read everything.
func TestDiagnoseFromSnapshot(t *testing.T) {
	const seg = 64 << 10
	run := func(args ...string) (string, *diagnosis.Diagnosis) {
		t.Helper()
		code, out, errOut := runArgs(t, append([]string{"diagnose", "--now", "2026-01-02T00:00:00Z"}, args...)...)
		if code != exitHanging {
			t.Fatalf("diagnose %v: exit %d, want %d (hanging)\n%s%s", args, code, exitHanging, out, errOut)
		}
		var d struct{ Partitions []*diagnosis.Diagnosis }
		if len(args) > 1 && args[1] == "json" {
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatal(err)
			}
			return out, d.Partitions[0]
		}
		return out, nil
	}
	for _, noSnap := range []bool{false, true} {
		st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: seg, TotalBytes: 8 * seg, NoSnapshots: noSnap})
		if err != nil {
			t.Fatal(err)
		}
		text, _ := run(st.Dir)
		_, got := run("--format", "json", st.Dir)
		_, want := run("--format", "json", "--full-replay", st.Dir)
		r := got.Replay
		switch {
		case r == nil:
			t.Fatalf("no replay report:\n%s", text)
		case !noSnap && (r.Mode != txnindex.ReplaySnapshot || r.SegmentsRead > 3 || !strings.Contains(text, "  read: segments from offset")):
			t.Errorf("with snapshots: replay %+v\n%s", r, text)
		case noSnap && (r.Mode != txnindex.ReplayFull || !strings.Contains(text, "full replay: no producer snapshot")):
			t.Errorf("without snapshots: replay %+v\n%s", r, text)
		}
		if want.Replay != nil {
			t.Errorf("--full-replay reports a replay: %+v", want.Replay)
		}
		// What the clients deliver covers the batches read, as the
		// replay report says.
		got.Replay, got.ClientDepartures, want.ClientDepartures = nil, nil, nil
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("snapshots %v: the diagnosis differs from --full-replay:\n%s\n%s", !noSnap, a, b)
		}
		if got.PinnedBy == nil || got.PinnedBy.ProducerID != 9000 {
			t.Errorf("pinned by %+v, want the hanging producer 9000", got.PinnedBy)
		}
	}
}
