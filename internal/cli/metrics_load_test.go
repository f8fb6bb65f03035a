package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMetricsOfLoadedPartitions: serve --load of a log directory serves
// the txnscope_partition_lso_lag_* series of its partitions, equal to what
// diagnose says of each (lag in offsets, open and hanging transactions),
// without opening a partition for the scrape; a server with only its demos
// answers /metrics with what would serve it.
func TestMetricsOfLoadedPartitions(t *testing.T) {
	dir := threeStoriesLogDir(t)
	code, out, errOut := runArgs(t, "diagnose", "--format", "json", dir)
	if code != exitHanging {
		t.Fatalf("diagnose: exit %d: %s", code, errOut)
	}
	var want struct {
		Partitions []diagAnswer `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}

	s := startServe(t, "--load", dir)
	series := regexp.MustCompile(`(?m)^txnscope_partition_lso_lag_offsets\{partition="(\d+)",topic="([^"]+)"\} (\d+)$`)
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for {
		body = scrapeStatus(t, s.url("/metrics"), http.StatusOK)
		if len(series.FindAllString(body, -1)) == len(want.Partitions) || time.Now().After(deadline) {
			break // the tails are ranked in the background
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, d := range want.Partitions {
		lag := fmt.Sprintf("txnscope_partition_lso_lag_offsets{partition=\"%d\",topic=%q} %d\n", d.Partition, d.Topic, d.HWM-d.LSO)
		hanging := 0
		if d.PinnedBy != nil && d.PinnedBy.State == "hanging" {
			hanging = 1
		}
		hang := fmt.Sprintf("txnscope_hanging_transactions{partition=\"%d\",topic=%q} %d\n", d.Partition, d.Topic, hanging)
		if !strings.Contains(body, lag) || !strings.Contains(body, hang) {
			t.Errorf("%s-%d: /metrics lacks %q or %q:\n%s", d.Topic, d.Partition, lag, hang, body)
		}
	}
	if !regexp.MustCompile(`(?m)^txnscope_partition_lso_lag_seconds\{partition="2",topic="orders"\} [1-9]`).MatchString(body) {
		t.Errorf("orders-2's LSO has been held for no time:\n%s", body)
	}

	demos := startServe(t)
	if body := scrapeStatus(t, demos.url("/metrics"), http.StatusNotFound); !strings.Contains(body, "serve --load") {
		t.Errorf("/metrics of the demos: %q", body)
	}
}

func scrapeStatus(t *testing.T, u string, status int) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %s, want %d: %s", u, resp.Status, status, b)
	}
	return string(b)
}
