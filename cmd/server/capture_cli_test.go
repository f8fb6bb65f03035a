package main

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

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/txnscope/txnscope/internal/testtool"
)

// TestDecideCaptureOfKcat: `server decide` on a tshark capture of kcat
// consuming read_committed from a kfake broker delivers exactly the offsets
// kcat printed, and `diagnose` on it reports the broker's LSO.
func TestDecideCaptureOfKcat(t *testing.T) {
	kcat := testtool.Need(t, "kcat")
	port := testtool.FreePort(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	path := filepath.Join(t.TempDir(), "kcat.pcapng")
	stop := testtool.StartCapture(t, port, path)
	testtool.WriteTransactions(t, addr, "txns")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", "txns", "-p", "0", "-o", "beginning", "-e", "-q",
		"-f", "%o\n", "-X", "isolation.level=read_committed", "-X", "fetch.message.max.bytes=300").Output()
	stop()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	var printed []int64
	for _, f := range strings.Fields(string(out)) {
		o, _ := strconv.ParseInt(f, 10, 64)
		printed = append(printed, o)
	}
	if len(printed) == 0 {
		t.Fatal("kcat printed nothing")
	}

	code, nd, errOut := runArgs(t, "decide", path, "--format", "ndjson", "--topic", "txns")
	if code != 0 {
		t.Fatalf("decide: %d %s", code, errOut)
	}
	var delivered []int64
	aborted := 0
	for _, line := range strings.Split(strings.TrimSpace(nd), "\n") {
		var m struct {
			Offset   int64  `json:"offset"`
			Decision string `json:"decision"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch m.Decision {
		case "delivered":
			delivered = append(delivered, m.Offset)
		case "aborted":
			aborted++
		}
	}
	if !slices.Equal(delivered, printed) || aborted == 0 {
		t.Errorf("decide delivers %v (%d aborted)\nkcat printed    %v", delivered, aborted, printed)
	}
	code, js, errOut := runArgs(t, "diagnose", path, "--format", "json")
	if code != 0 || !strings.Contains(js, `"last_stable_offset"`) {
		t.Errorf("diagnose: %d %s %s", code, errOut, js)
	}
}
