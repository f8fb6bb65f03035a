package web

import (
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/txnindex"
)

// TestClusterIndex: the cluster view of a scan keeps the scan's ranking
// within each topic, orders the topics by their worst partition, names the
// pinning transaction in words, marks a partition of a down leader
// unknown, escapes a topic name in the link, and says why the latest scan
// failed while still showing the one before.
func TestClusterIndex(t *testing.T) {
	hang := &live.ClusterTxn{ProducerID: 7, FirstOffset: 40, TransactionalID: "stuck-orders", CoordinatorState: "Ongoing", State: txnindex.StateHanging, Hanging: true}
	s := &live.ClusterScan{Time: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), Topics: 2, Stuck: 2, Hanging: 1, Unknown: 1, Clear: 1, RequestCount: 19,
		Brokers: []live.BrokerStatus{{ID: 0, Host: "b0", Port: 9092}, {ID: 1, Host: "b1", Port: 9092, Err: "connection refused"}},
		Partitions: []live.PartitionLag{
			{Topic: "orders", Partition: 3, HighWatermark: 50, LastStableOffset: 40, LSOLagOffsets: 10, LSOLagMs: 3_600_000, Hanging: true, PinnedBy: hang, Open: []live.ClusterTxn{*hang},
				Groups: []live.GroupBehind{{Group: "billing"}, {Group: "audit"}}},
			{Topic: "a/b", Partition: 0, HighWatermark: 9, LastStableOffset: 8, LSOLagOffsets: 1, LSOLagMs: 2000, PinnedBy: &live.ClusterTxn{ProducerID: 9, FirstOffset: 8, State: txnindex.StateOpen}},
			{Topic: "orders", Partition: 1, HighWatermark: -1, LastStableOffset: -1, Err: "leader 1 down"},
			{Topic: "orders", Partition: 0, HighWatermark: 5, LastStableOffset: 5},
		}}
	var err error
	h := ClusterIndex(func() (*live.ClusterScan, error) { return s, err }, "b0:9092", 5*time.Second, 2000)
	get := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%d: %s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	body := get()
	var names []string
	for _, m := range regexp.MustCompile(`data-testid="cluster-row" data-name="([^"]+)" data-state="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		names = append(names, m[1]+":"+m[2])
	}
	if got := strings.Join(names, " "); got != "orders-3:hanging orders-1:unknown orders-0:clear a/b-0:open" {
		t.Errorf("rows %s", got)
	}
	for _, want := range []string{`"stuck-orders" from offset 40, Ongoing`, "billing, audit", "1h0m0s", "producer 9 from offset 8",
		`href="/cluster/a%2Fb/0"`, "broker 1 (b1:9092): connection refused", "leader 1 down", `data-poll-ms="5000"`, "2 stuck (1 hanging)"} {
		if !strings.Contains(html.UnescapeString(body), want) {
			t.Errorf("no %q in the page", want)
		}
	}
	err = errors.New("cluster unreachable")
	if body := get(); !strings.Contains(body, "The latest scan failed: cluster unreachable") || !strings.Contains(body, "orders-3") {
		t.Errorf("a failed scan after a good one: %s", body)
	}
	s = nil
	if body := get(); !strings.Contains(body, "No scan has finished yet.") {
		t.Errorf("before the first scan: %s", body)
	}
}
