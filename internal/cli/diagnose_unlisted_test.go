package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// TestDiagnoseLogDirNamesUnlistedAborted: in a log directory whose
// partitions all have a clear LSO, the one whose .txnindex is lost (the
// lost-txnindex demo) is still named at the top: its read_committed
// consumers receive aborted records, which a clear LSO hides. The
// interleaved demo beside it, whose files list its aborted transaction, is
// not.
func TestDiagnoseLogDirNamesUnlistedAborted(t *testing.T) {
	root, lost := testfixture.WriteScenarioFile(t, filepath.Join("..", "..", "scenario", "demos", "lost-txnindex.txn"))
	other, b := testfixture.WriteScenarioFile(t, filepath.Join("..", "..", "scenario", "demos", "interleaved.txn"))
	if err := os.CopyFS(filepath.Join(root, b.Dir), os.DirFS(filepath.Join(other, b.Dir))); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runArgs(t, "diagnose", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	head := strings.SplitN(out, "\n", 4)
	if len(head) < 3 || !strings.Contains(head[0], "2 partitions: 0 stuck") ||
		head[1] != "1 partition hands its read_committed consumers aborted records (no .txnindex entry lists them):" ||
		head[2] != "  "+lost.Dir+": 3 records of 1 aborted transaction, from offset 2 on" {
		t.Errorf("summary:\n%s", strings.Join(head[:min(3, len(head))], "\n"))
	}
	if strings.Contains(strings.Join(head[:min(3, len(head))], "\n"), b.Dir) {
		t.Errorf("the interleaved partition named among those that deliver aborted records:\n%s", out)
	}
}

// TestDiagnoseNamesATxnIndexNoBrokerLoads: a .txnindex entry whose version
// byte Kafka refuses stops the broker's startup. diagnose of the log
// directory names the partition under its first line, and its runbook
// says which file, at which byte, and how the broker starts again; the
// interleaved demo beside it has nothing of the kind.
func TestDiagnoseNamesATxnIndexNoBrokerLoads(t *testing.T) {
	root, a := testfixture.WriteScenarioFile(t, filepath.Join("..", "..", "scenario", "demos", "interleaved.txn"))
	other, b := testfixture.WriteScenarioFile(t, filepath.Join("..", "..", "scenario", "demos", "spanning.txn"))
	if err := os.CopyFS(filepath.Join(root, b.Dir), os.DirFS(filepath.Join(other, b.Dir))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, a.Dir, "00000000000000000000.txnindex")
	raw, err := os.ReadFile(path)
	if err != nil || len(raw) == 0 {
		t.Fatalf("the interleaved demo's .txnindex: %d bytes, %v", len(raw), err)
	}
	raw[0] = 2
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runArgs(t, "diagnose", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 3 || lines[1] != "1 partition holds a .txnindex whose version Kafka refuses, so a broker fails to start with it:" ||
		lines[2] != "  "+a.Dir+": 00000000000000000000.txnindex" {
		t.Errorf("summary:\n%s", strings.Join(lines[:min(3, len(lines))], "\n"))
	}
	for _, want := range []string{
		"BROKER CANNOT LOAD THIS PARTITION: 00000000000000000000.txnindex (version 2 at byte 0x0) holds an entry whose version Kafka refuses",
		"move 00000000000000000000.index out of the partition directory first",
	} {
		if strings.Count(out, want) != 1 {
			t.Errorf("want %q once in:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "00000000000000000000.txnindex: entry at byte 0x0: unsupported version") {
		t.Errorf("stderr: %s", errOut)
	}
	if strings.Contains(out, "ABORTED RECORDS DELIVERED") {
		t.Errorf("the refused file read as a lost one:\n%s", out)
	}
}
