package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/inspect"
	"github.com/txnscope/txnscope/scenario/gen"
)

// TestInspectLogDirOneAtATime: `inspect LOGDIR` reads the directory a
// partition at a time and prints what inspect of the directory loaded whole
// prints (inspect.New over input.OpenContext): real log dirs (internal
// topics, checkpoints), the join's log dir and a generated one with
// snapshots at each roll, with and without --batches.
func TestInspectLogDirOneAtATime(t *testing.T) {
	gd := t.TempDir()
	if _, err := gen.WriteLogDir(gd, gen.LogOptions{SegmentBytes: 32 << 10, TotalBytes: 4 * 32 << 10}, 2); err != nil {
		t.Fatal(err)
	}
	dirs := []string{
		filepath.Join("..", "..", "testdata", "realdata", "DonaldY_kafka-2.7.1", "kafka-logs"),
		filepath.Join("..", "..", "testdata", "realdata", "BiggerBrain_kafka", "data"),
		testfixture.WriteJoinLogDir(t),
		gd,
	}
	for _, dir := range dirs {
		for _, o := range []inspect.Options{{}, {Batches: true}} {
			args := []string{"inspect", "--format", "json"}
			if o.Batches {
				args = append(args, "--batches")
			}
			code, got, errOut := runArgs(t, append(args, dir)...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", dir, code, errOut)
			}
			c, err := input.OpenContext(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := jsonid.WriteIndent(&want, inspect.New(c, o)); err != nil {
				t.Fatal(err)
			}
			var r inspect.Report
			if err := json.Unmarshal([]byte(got), &r); err != nil || len(r.Partitions) == 0 {
				t.Fatalf("%s: %d partitions, %v", dir, len(r.Partitions), err)
			}
			if got != want.String() {
				t.Errorf("%s (batches %v): a partition at a time\n%s\nloaded whole\n%s", dir, o.Batches, got, want.String())
			}
		}
	}
}

// TestInspectCleanShutdownMarker: inspect of a log directory, and of a
// partition directory in it, says when the directory holds the broker's
// clean shutdown marker (its next start recovers no segment, and diagnose
// cuts no segment at a bad CRC but names it), in text and in JSON, and
// says nothing without it.
func TestInspectCleanShutdownMarker(t *testing.T) {
	gd := t.TempDir()
	if _, err := gen.WriteLogDir(gd, gen.LogOptions{SegmentBytes: 32 << 10, TotalBytes: 2 * 32 << 10}, 1); err != nil {
		t.Fatal(err)
	}
	parts, err := filepath.Glob(filepath.Join(gd, "*-0"))
	if err != nil || len(parts) == 0 {
		t.Fatalf("no partition directory in %s: %v", gd, err)
	}
	check := func(want bool) {
		t.Helper()
		for _, dir := range []string{gd, parts[0]} {
			code, text, errOut := runArgs(t, "inspect", dir)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", dir, code, errOut)
			}
			if got := strings.Contains(text, "clean shutdown marker .kafka_cleanshutdown"); got != want {
				t.Errorf("%s: text says the marker %v, want %v:\n%.300s", dir, got, want, text)
			}
			code, js, errOut := runArgs(t, "inspect", "--format", "json", dir)
			var r inspect.Report
			if code != 0 || json.Unmarshal([]byte(js), &r) != nil {
				t.Fatalf("%s: exit %d: %s", dir, code, errOut)
			}
			if r.CleanShutdown != want {
				t.Errorf("%s: JSON clean_shutdown %v, want %v", dir, r.CleanShutdown, want)
			}
		}
	}
	check(false)
	if err := os.WriteFile(filepath.Join(gd, ".kafka_cleanshutdown"), []byte(`{"version":0,"brokerEpoch":3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	check(true)
}

// TestInspectRefusesWhatWouldNotFit: a partition directory whose whole
// load would take more than half of --max-memory is not loaded (on a
// broker's host that memory may be the broker's): inspect of it fails
// saying so and naming a segment file to inspect instead, which is
// inspected within the same --max-memory; in a log dir, such partitions
// are problems and the others are inspected.
func TestInspectRefusesWhatWouldNotFit(t *testing.T) {
	gd := t.TempDir()
	if _, err := gen.WriteLogDir(gd, gen.LogOptions{SegmentBytes: 32 << 10, TotalBytes: 4 * 32 << 10}, 2); err != nil {
		t.Fatal(err)
	}
	parts, _ := filepath.Glob(filepath.Join(gd, "*-[0-9]*"))
	if len(parts) != 2 {
		t.Fatalf("partitions %v", parts)
	}
	// 131 KiB of batches: some 20 KB of whole load.
	const small = "20000"
	code, out, errOut := runArgs(t, "inspect", "--max-memory", small, parts[0])
	if code != exitFailure || out != "" || !strings.Contains(errOut, parts[0]+": not inspected: it holds ") || !strings.Contains(errOut, "KiB of segments, whose whole load would take about") ||
		!strings.Contains(errOut, "more than half of --max-memory 19.5 KiB") {
		t.Fatalf("inspect of a partition too large: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	i := strings.Index(errOut, "(inspect ")
	j := strings.Index(errOut[max(i, 0):], ")")
	if i < 0 || j < 0 || !strings.HasSuffix(errOut[i+len("(inspect "):i+j], ".log") {
		t.Fatalf("no segment file named in %q", errOut)
	}
	seg := errOut[i+len("(inspect ") : i+j]
	if code, out, errOut := runArgs(t, "inspect", "--max-memory", small, seg); code != exitOK || !strings.Contains(out, filepath.Base(seg)) {
		t.Errorf("inspect of the segment file it names: exit %d, %q, %q", code, out, errOut)
	}
	// The log dir: both partitions too large, each a problem.
	code, out, errOut = runArgs(t, "inspect", "--format", "json", "--max-memory", small, gd)
	var r inspect.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitOK {
		t.Fatalf("inspect of the log dir: exit %d, %v, %q", code, err, errOut)
	}
	refused := 0
	for _, p := range r.Problems {
		if strings.Contains(p, ": not inspected: it holds ") {
			refused++
		}
	}
	if refused != 2 || len(r.Partitions) != 0 {
		t.Errorf("log dir under --max-memory %s: %d partitions, problems %q", small, len(r.Partitions), r.Problems)
	}
	// A --max-memory they fit in: inspected.
	if code, out, errOut := runArgs(t, "inspect", "--max-memory", "200000", parts[0]); code != exitOK || !strings.Contains(out, "segment ") {
		t.Errorf("inspect under a larger --max-memory: exit %d, %q, %q", code, out, errOut)
	}
	if code, _, errOut := runArgs(t, "inspect", "--max-memory", "0", parts[0]); code != exitUsage || errOut == "" {
		t.Errorf("--max-memory 0: exit %d, %q", code, errOut)
	}
}
