package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnoseLogDirOneAtATime: `diagnose LOGDIR` reads each partition as
// `diagnose PARTITIONDIR` does (from its newest producer snapshot, one
// partition at a time) and answers, partition by partition, what
// diagnosing it alone answers; with --full-replay, what diagnosing the
// whole directory loaded at once answers (input.OpenContext, the path every
// other command takes). --partition picks one.
func TestDiagnoseLogDirOneAtATime(t *testing.T) {
	const seg = 64 << 10
	dir := t.TempDir()
	sts, err := gen.WriteLogDir(dir, gen.LogOptions{SegmentBytes: seg, TotalBytes: 6 * seg}, 3)
	if err != nil {
		t.Fatal(err)
	}
	const now = "2026-01-02T00:00:00Z"
	diagnose := func(args ...string) []*diagnosis.Diagnosis {
		t.Helper()
		code, out, errOut := runArgs(t, append([]string{"diagnose", "--format", "json", "--now", now}, args...)...)
		if code != exitHanging {
			t.Fatalf("diagnose %v: exit %d, want %d (hanging)\n%s", args, code, exitHanging, errOut)
		}
		var d struct{ Partitions []*diagnosis.Diagnosis }
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d.Partitions
	}
	js := func(d *diagnosis.Diagnosis) string {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	got := diagnose(dir)
	if len(got) != len(sts) {
		t.Fatalf("%d diagnoses for %d partitions", len(got), len(sts))
	}
	for i, st := range sts {
		alone := diagnose(st.Dir)
		if r := got[i].Replay; r == nil || r.Mode != txnindex.ReplaySnapshot {
			t.Errorf("%s: replay %+v, want it read from its snapshot", st.Dir, r)
		}
		if a, b := js(got[i]), js(alone[0]); a != b {
			t.Errorf("%s: in the log dir\n%s\nalone\n%s", st.Dir, a, b)
		}
	}

	// The oracle: the directory loaded whole, every partition in memory at
	// once, diagnosed as before.
	c, err := input.OpenContext(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	full := diagnose("--full-replay", dir)
	if len(full) != len(c.Partitions) {
		t.Fatalf("--full-replay: %d diagnoses, the whole load has %d partitions", len(full), len(c.Partitions))
	}
	o := diagnosis.Options{TxnTimeout: diagnosis.DefaultTxnTimeout, MaxTxnTimeout: diagnosis.DefaultMaxTxnTimeout, Position: -1}
	o.Now, _ = parseTime(now)
	for i, p := range c.Partitions {
		want := present.Diagnose(p.Log, o)
		if a, b := js(full[i]), js(want); a != b {
			t.Errorf("--full-replay, partition %d:\n%s\nwhole load:\n%s", i, a, b)
		}
		// What the clients deliver covers the batches read, as the
		// replay report says (the full replay's count is checked above).
		got[i].Replay, got[i].ClientDepartures, want.ClientDepartures = nil, nil, nil
		if a, b := js(got[i]), js(want); a != b {
			t.Errorf("partition %d from its snapshot:\n%s\nwhole load:\n%s", i, a, b)
		}
	}

	if one := diagnose("--partition", "1", dir); len(one) != 1 || one[0].Partition != 1 {
		t.Errorf("--partition 1: %d diagnoses", len(one))
	}

}

// TestDiagnoseLogDirSummary: the text diagnosis of several partitions
// begins with how many are stuck and, most offsets behind first, each stuck
// one's sentence; a data partition with nothing to say (clear, no open
// transaction) gets one name in a line instead of a runbook. The JSON keeps
// every partition whole.
func TestDiagnoseLogDirSummary(t *testing.T) {
	dir := threeStoriesLogDir(t)
	const now = "2026-01-02T00:00:00Z"
	code, text, errOut := runArgs(t, "diagnose", "--now", now, dir)
	if code != exitHanging {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(text, "\n")
	want := []string{
		"3 partitions: 2 stuck (LSO below the high watermark), 0 pinned by a hanging transaction, 2 by a late one whose coordinator was not read (hanging not confirmed), 1 clear",
		"  orders-2: STUCK: the LSO has been held for 24h, 10 offsets",
		"  orders-1: STUCK: the LSO has been held for",
	}
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Fatalf("line %d: want %q\n%s", i, w, text)
		}
	}
	if !strings.Contains(text, "\nclear, no open transaction (read_committed consumers read to the high watermark): quiet-0\n") || strings.Contains(text, "\nquiet-0\n") {
		t.Errorf("quiet-0 is not named in one line:\n%s", text)
	}
	for _, p := range []string{"\norders-1\n  log start", "\norders-2\n  log start"} {
		if !strings.Contains(text, p) {
			t.Errorf("no runbook for %q:\n%s", p, text)
		}
	}
	_, js, _ := runArgs(t, "diagnose", "--format", "json", "--now", now, dir)
	var d struct{ Partitions []*diagnosis.Diagnosis }
	if err := json.Unmarshal([]byte(js), &d); err != nil || len(d.Partitions) != 3 {
		t.Fatalf("JSON: %d partitions, %v", len(d.Partitions), err)
	}
}

// threeStoriesLogDir writes a log dir of three partitions: quiet-0 clear,
// orders-1 and orders-2 each pinned by a transaction left open (producer
// ids 7 and 8) while plain batches moved on.
func threeStoriesLogDir(t *testing.T) string {
	t.Helper()
	story := func(topic string, p int, body string) *scenario.Built {
		s, err := scenario.Parse(strings.NewReader(fmt.Sprintf("topic %s partition %d\nproducer a transactional id 7\nproducer b transactional id 8\n%s", topic, p, body)), topic+".txn")
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dir := t.TempDir()
	if err := scenario.WriteLogDir(dir,
		story("quiet", 0, "begin a\nsend a 2\ncommit a\nplain 3\n"),
		story("orders", 1, "plain 2\nbegin a\nsend a 2\nplain 4\n"),
		story("orders", 2, "begin b\nsend b 1\nplain 9\n"),
	); err != nil {
		t.Fatal(err)
	}
	return dir
}
