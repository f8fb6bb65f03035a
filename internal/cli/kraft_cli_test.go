package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// writeKRaftDirs writes two KRaft metadata log directories under a log
// directory each: one holding only a .checkpoint snapshot, its indexes and
// quorum-state (a node that has just snapshotted and cleaned its log), one
// with a .log of records.
func writeKRaftDirs(t *testing.T) (onlySnapshot, withLog string) {
	t.Helper()
	onlySnapshot = filepath.Join(t.TempDir(), "metadata", "__cluster_metadata-0")
	if err := os.MkdirAll(onlySnapshot, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"00000000000000004321-0000000003.checkpoint": strings.Repeat("\x00", 96),
		"00000000000000004321.index":                 "",
		"00000000000000004321.timeindex":             "",
		"leader-epoch-checkpoint":                    "0\n1\n3 4000\n",
		"quorum-state":                               `{"leaderId":1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}`,
	} {
		if err := os.WriteFile(filepath.Join(onlySnapshot, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, b := testfixture.WriteScenario(t, "topic __cluster_metadata partition 0\nplain 3\nplain 2\n", "kraft.txn")
	return onlySnapshot, filepath.Join(root, b.Dir)
}

// TestKRaftMetadataLog: __cluster_metadata-0 is loaded even with no .log,
// and inspect and diagnose say what it is (its .checkpoint snapshots in
// kafka-dump-log.sh's words) instead of reporting an empty partition
// "clear".
func TestKRaftMetadataLog(t *testing.T) {
	onlySnapshot, withLog := writeKRaftDirs(t)
	for _, dir := range []string{onlySnapshot, filepath.Dir(onlySnapshot), withLog, filepath.Dir(withLog)} {
		var so, se bytes.Buffer
		if code := run(context.Background(), []string{"inspect", dir}, &env{stdout: &so, stderr: &se}); code != exitOK {
			t.Fatalf("inspect %s: exit %d: %s", dir, code, se.String())
		}
		if !strings.Contains(so.String(), "KRaft cluster metadata log") {
			t.Errorf("inspect %s does not say what it is:\n%s", dir, so.String())
		}
		if strings.HasPrefix(dir, filepath.Dir(onlySnapshot)) && !strings.Contains(so.String(), "checkpoint 00000000000000004321-0000000003.checkpoint, 96 bytes: Snapshot end offset: 4321, epoch: 3") {
			t.Errorf("inspect %s: no snapshot line:\n%s", dir, so.String())
		}
		so.Reset()
		if code := run(context.Background(), []string{"diagnose", dir}, &env{stdout: &so, stderr: &se}); code != exitOK {
			t.Fatalf("diagnose %s: exit %d: %s", dir, code, se.String())
		}
		if out := so.String(); !strings.Contains(out, "not a data partition: KRaft cluster metadata log") || strings.Contains(out, "clear") {
			t.Errorf("diagnose %s:\n%s", dir, out)
		}
		so.Reset()
		if code := run(context.Background(), []string{"diagnose", "--format", "json", dir}, &env{stdout: &so, stderr: &se}); code != exitOK {
			t.Fatalf("diagnose --format json %s: exit %d: %s", dir, code, se.String())
		}
		var d struct{ Partitions []struct{ Note string } }
		if err := json.Unmarshal(so.Bytes(), &d); err != nil || len(d.Partitions) != 1 || !strings.HasPrefix(d.Partitions[0].Note, "KRaft") {
			t.Errorf("diagnose json %s: %v %+v", dir, err, d)
		}
	}
}
