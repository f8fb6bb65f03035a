package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/loader/inspect"
)

const realdata = "../../testdata/realdata"

// TestDecideRealPartition: the ksqlDB command topic a transactional
// producer wrote (a COMMIT marker at offset 1) decides record 0 delivered
// and 1 control, one NDJSON object per offset.
func TestDecideRealPartition(t *testing.T) {
	testtool.NeedDir(t, realdata)
	dir := filepath.Join(realdata, "ItumelengMogase_Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0")
	code, out, errOut := runArgs(t, "decide", "--format", "ndjson", dir)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), out)
	}
	var objs []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, m)
	}
	if objs[0]["decision"] != "delivered" || objs[1]["decision"] != "control" || objs[1]["control"] != "COMMIT" || objs[0]["transactional"] != true {
		t.Errorf("decisions %v", objs)
	}
}

// TestDiagnoseExitStatus: 3 when the LSO is pinned by a hanging
// transaction or by a late one no coordinator evidence decided (the demo
// has no __transaction_state), 0 when clear.
func TestDiagnoseExitStatus(t *testing.T) {
	if code, out, errOut := runArgs(t, "diagnose", "--demo", "stuck-lso", "--now", "2027-01-01T00:00:00Z"); code != 3 || !strings.Contains(out, "(late; hanging not confirmed)") {
		t.Errorf("stuck-lso: code %d out %q err %q", code, out, errOut)
	}
	code, out, _ := runArgs(t, "diagnose", "--demo", "interleaved", "--format", "json")
	if code != 0 {
		t.Errorf("interleaved: code %d", code)
	}
	var v struct {
		Partitions []struct {
			LastStableOffset int64 `json:"last_stable_offset"`
			HighWatermark    int64 `json:"high_watermark"`
			PinnedBy         any   `json:"pinned_by"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Partitions) != 1 || v.Partitions[0].PinnedBy != nil || v.Partitions[0].LastStableOffset != v.Partitions[0].HighWatermark {
		t.Errorf("json %v %s", err, out)
	}
	if code, _, _ := runArgs(t, "diagnose", "--now", "yesterday", "--demo", "interleaved"); code != 2 {
		t.Errorf("bad --now: code %d", code)
	}
}

// TestInspectAndErrors: every real log directory inspects to JSON; an
// input that is nothing Kafka says what was expected.
func TestInspectAndErrors(t *testing.T) {
	testtool.NeedDir(t, realdata)
	dirs, _ := filepath.Glob(filepath.Join(realdata, "*", "kafka-data"))
	more, _ := filepath.Glob(filepath.Join(realdata, "*", "kafka-logs"))
	dirs = append(dirs, more...)
	if len(dirs) == 0 {
		t.Fatal("no log directories in realdata")
	}
	for _, d := range dirs {
		code, out, errOut := runArgs(t, "inspect", "--format", "json", d)
		if code != 0 {
			t.Errorf("%s: code %d %s", d, code, errOut)
			continue
		}
		var v inspect.Report
		if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Partitions) == 0 {
			t.Errorf("%s: %v, %d partitions", d, err, len(v.Partitions))
		}
	}
	code, _, errOut := runArgs(t, "decide", "cli.go")
	if code != 1 || !strings.Contains(errOut, "not a Kafka input: want a log directory") {
		t.Errorf("cli.go: code %d %q", code, errOut)
	}
}

// TestServeLoad: --load adds every partition of a real log directory,
// served through the same API as the demos.
func TestServeLoad(t *testing.T) {
	testtool.NeedDir(t, realdata)
	dir := filepath.Join(realdata, "ItumelengMogase_Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data")
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--big=false", "--load", dir}, &env{stdout: io.Discard, stderr: io.Discard, ready: func(a string) { addrc <- a }})
	}()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-done:
		t.Fatalf("server exited %d", code)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not start")
	}
	resp, err := http.Get("http://" + addr + "/api/v1/sources/load1/partitions/_confluent-ksql-default__command_topic/0/decisions")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "commit_marker") {
		t.Errorf("decisions: %d %s", resp.StatusCode, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}
