package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/txnscope/txnscope/internal/testfixture"
)

// TestClusterOpenWindow: a partition opened from the cluster view is
// watched over a bounded window, the last 2,000 offsets of its log (of
// 3,000: from offset 1,000), not from its start.
func TestClusterOpenWindow(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "tail"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	cl := testfixture.KfakeClient(t, addrs)
	for range 30 {
		recs := make([]*kgo.Record, 100)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: "tail", Partition: 0, Value: []byte("v")}
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	addr := startServe(t, "--bootstrap", addrs[0], "--poll", "200ms").addr
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Get("http://" + addr + "/cluster/tail/0")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/sources/live/partitions/tail/0" {
		t.Fatalf("open: %s at %s", resp.Status, resp.Request.URL)
	}
	resp, err = hc.Get("http://" + addr + "/api/v1/sources/live/partitions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Partitions []struct {
			Topic   string `json:"topic"`
			Summary *struct {
				LogStartOffset int64 `json:"log_start_offset"`
				HighWatermark  int64 `json:"high_watermark"`
				Totals         struct {
					Batches int `json:"batches"`
				} `json:"totals"`
			} `json:"summary"`
		} `json:"partitions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if len(v.Partitions) != 1 || v.Partitions[0].Summary == nil {
		t.Fatalf("live partitions %+v", v.Partitions)
	}
	s := v.Partitions[0].Summary
	// The window starts at the batch holding offset 1,000; kgo may split
	// a ProduceSync of 100 records into several batches, none longer.
	if s.HighWatermark != 3000 || s.LogStartOffset > 1000 || s.LogStartOffset <= 900 {
		t.Errorf("high watermark %d, window from %d (%d batches); want 3000, and from the batch holding 1000", s.HighWatermark, s.LogStartOffset, s.Totals.Batches)
	}
}
