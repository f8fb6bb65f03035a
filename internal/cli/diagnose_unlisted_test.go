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
