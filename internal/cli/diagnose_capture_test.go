package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/testtool"
)

// TestDiagnoseCaptureOfStuckLSO leaves a transaction open on a kfake broker
// while other producers commit and abort, captures (tshark) a read_committed
// and a read_uncommitted kcat consuming the partition, and runs `server
// diagnose` on the capture: both consumers' diagnoses report the broker's
// LSO (== ListOffsets read_committed) and the abort command with the open
// transaction's start offset; the read_uncommitted one names the producer
// DescribeProducers shows, the read_committed one (which the broker never
// sends the open batches) reports it unseen at that offset. After the
// producer aborts, a new capture shows the LSO moved and the diagnosis clear.
func TestDiagnoseCaptureOfStuckLSO(t *testing.T) {
	kcat := testtool.Need(t, "kcat")
	addr, port := testtool.CaptureBroker(t)
	const topic = "stuck"
	ctx := context.Background()
	start, hang := testtool.StuckPartition(t, addr, topic)
	admin, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	lso, hwm := testtool.ListOffsets(t, admin, topic)
	if lso != start || hwm <= lso {
		t.Fatalf("ListOffsets: LSO %d, HWM %d; the open transaction starts at %d", lso, hwm, start)
	}
	pinner := testtool.TxnStartProducer(t, admin, topic, start)

	// consume captures a read_committed kcat (which never reaches the end
	// of a pinned partition, so it runs for a bounded time) and a
	// read_uncommitted one (which stops at the high watermark).
	consume := func(name string, rcEnds bool) string {
		path := filepath.Join(t.TempDir(), name+".pcapng")
		stop := testtool.StartCapture(t, port, path)
		run := func(iso string, d time.Duration, toEnd bool) {
			cctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			args := []string{"-C", "-b", addr, "-t", topic, "-p", "0", "-o", "beginning", "-q", "-f", "%o\n",
				"-X", "isolation.level=" + iso, "-X", "fetch.wait.max.ms=100"}
			if toEnd {
				args = append(args, "-e")
			}
			out, err := exec.CommandContext(cctx, kcat, args...).Output()
			if toEnd && err != nil {
				t.Fatalf("kcat %s: %v %s", iso, err, out)
			}
		}
		run("read_committed", 3*time.Second, rcEnds)
		run("read_uncommitted", 30*time.Second, true)
		stop()
		return path
	}
	type report struct {
		Partitions []struct {
			Topic                  string `json:"topic"`
			LastStableOffset       int64  `json:"last_stable_offset"`
			LastStableOffsetSource string `json:"last_stable_offset_source"`
			HighWatermark          int64  `json:"high_watermark"`
			PinnedBy               *struct {
				ProducerID   int64  `json:"producer_id"`
				FirstOffset  int64  `json:"first_offset"`
				Unseen       bool   `json:"unseen"`
				AbortCommand string `json:"abort_command"`
			} `json:"pinned_by"`
			Capture *struct {
				Isolation string `json:"isolation"`
				Fetches   int    `json:"fetches"`
			} `json:"capture"`
		} `json:"partitions"`
	}
	diagnose := func(path string) (report, string) {
		code, js, errOut := runArgs(t, "diagnose", path, "--format", "json", "--topic", topic, "--bootstrap", addr)
		if code != 0 {
			t.Fatalf("diagnose: exit %d: %s", code, errOut)
		}
		var r report
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatalf("%v: %s", err, js)
		}
		_, text, _ := runArgs(t, "diagnose", path, "--topic", topic, "--bootstrap", addr)
		return r, text
	}

	r, text := diagnose(consume("stuck", false))
	want := fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic %s --partition 0 --start-offset %d", addr, topic, start)
	seen := map[string]bool{}
	for _, p := range r.Partitions {
		if p.Topic != topic || p.Capture == nil {
			continue
		}
		iso := p.Capture.Isolation
		seen[iso] = true
		if p.LastStableOffset != lso || p.LastStableOffsetSource != "capture" || p.HighWatermark != hwm {
			t.Errorf("%s: LSO %d (%s), HWM %d; broker: LSO %d, HWM %d", iso, p.LastStableOffset, p.LastStableOffsetSource, p.HighWatermark, lso, hwm)
		}
		pb := p.PinnedBy
		if pb == nil {
			t.Errorf("%s: not pinned", iso)
			continue
		}
		if pb.FirstOffset != start || pb.AbortCommand != want {
			t.Errorf("%s: pinned at %d, command %q; want %d, %q", iso, pb.FirstOffset, pb.AbortCommand, start, want)
		}
		switch iso {
		case "read_uncommitted":
			if pb.Unseen || pb.ProducerID != pinner {
				t.Errorf("read_uncommitted: pinned by producer %d (unseen %v), DescribeProducers says %d", pb.ProducerID, pb.Unseen, pinner)
			}
		case "read_committed":
			if !pb.Unseen {
				t.Errorf("read_committed: the pinner should be unseen, got producer %d", pb.ProducerID)
			}
		}
	}
	if !seen["read_committed"] || !seen["read_uncommitted"] {
		t.Fatalf("consumers diagnosed: %v\n%s", seen, text)
	}
	if !strings.Contains(text, "STUCK") || !strings.Contains(text, "did not see, from offset "+fmt.Sprint(start)) {
		t.Errorf("runbook:\n%s", text)
	}

	if err := hang.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	lso, hwm = testtool.ListOffsets(t, admin, topic)
	if lso != hwm || lso <= start {
		t.Fatalf("after the abort: LSO %d, HWM %d", lso, hwm)
	}
	r, text = diagnose(consume("clear", true))
	n := 0
	for _, p := range r.Partitions {
		if p.Topic != topic || p.Capture == nil {
			continue
		}
		n++
		if p.PinnedBy != nil || p.LastStableOffset != lso {
			t.Errorf("after the abort, %s: LSO %d (broker %d), pinned by %+v", p.Capture.Isolation, p.LastStableOffset, lso, p.PinnedBy)
		}
	}
	if n != 2 || !strings.Contains(text, "clear") {
		t.Errorf("after the abort: %d consumers\n%s", n, text)
	}
}
