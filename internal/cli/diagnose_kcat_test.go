package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/testtool"
)

// TestSeeThemFirstRunsInKcat: the stuck partition of a kfake broker, the
// hanging producer's records in two ranges with other producers' between
// them, read by a read_uncommitted kcat under tshark; `diagnose` of the
// capture gives "to see them first", which, run by bash with the real
// kcat against the broker, prints exactly the hanging transaction's
// offsets.
func TestSeeThemFirstRunsInKcat(t *testing.T) {
	kcat := testtool.Need(t, "kcat")
	bash := testtool.Need(t, "bash")
	addr, port := testtool.CaptureBroker(t)
	const topic = "orders"
	start, hang := testtool.StuckPartition(t, addr, topic)
	// The hanging transaction writes on, after the other producers' records.
	var want []int64
	for i := range 3 {
		want = append(want, start+int64(i))
	}
	for i := range 2 {
		r := &kgo.Record{Topic: topic, Value: []byte("late " + strconv.Itoa(i))}
		if err := hang.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Offset)
	}
	if want[3] == want[2]+1 {
		t.Fatalf("the hanging transaction's offsets %v are not interleaved", want)
	}

	capture := filepath.Join(t.TempDir(), "ru.pcapng")
	stop := testtool.StartCapture(t, port, capture)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if b, err := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%o\n",
		"-X", "isolation.level=read_uncommitted").CombinedOutput(); err != nil {
		t.Fatalf("kcat: %v %s", err, b)
	}
	stop()

	code, out, errOut := runArgs(t, "diagnose", capture, "--topic", topic, "--bootstrap", addr, "--format", "json")
	if code != exitOK && code != exitHanging {
		t.Fatalf("diagnose: exit %d: %s", code, errOut)
	}
	var v struct {
		Partitions []struct {
			PinnedBy *struct {
				Discards struct {
					PrintCommand string `json:"print_command"`
				} `json:"discards"`
			} `json:"pinned_by"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Partitions) != 1 || v.Partitions[0].PinnedBy == nil {
		t.Fatalf("%v: %s", err, out)
	}
	cmd := v.Partitions[0].PinnedBy.Discards.PrintCommand
	if n := strings.Count(cmd, "kcat -C"); n != 2 {
		t.Errorf("%d kcat commands, want one per range (2):\n%s", n, cmd)
	}
	// -e: a command that asks for more records than there are stops at
	// the end of the partition instead of waiting for them.
	run := exec.CommandContext(ctx, bash, "-c", strings.ReplaceAll(cmd, "kcat -C", kcat+" -C -e -q -X fetch.wait.max.ms=100"))
	run.Env = append(run.Environ(), "BOOTSTRAP="+addr)
	printed, err := run.Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	if got := testtool.KcatOffsets(t, printed); !slices.Equal(got, want) {
		t.Errorf("kcat printed offsets %v; the abort discards %v\n%s", got, want, cmd)
	}
}
