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

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/live"
)

// TestClusterIndex: the cluster view of a scan keeps the scan's ranking
// within each topic, orders the topics by their worst partition, names the
// pinning transaction in words, marks a partition of a down leader
// unknown, escapes a topic name in the link, and says why the latest scan
// failed while still showing the one before.
func TestClusterIndex(t *testing.T) {
	hang := &live.ClusterTxn{ProducerID: 7, FirstOffset: 40, TransactionalID: "stuck-orders", CoordinatorState: "Ongoing", State: diagnosis.StateHanging, Hanging: true}
	s := &live.ClusterScan{Time: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), Topics: 3, Stuck: 3, Hanging: 1, Unknown: 1, Clear: 1, RequestCount: 19,
		Brokers: []live.BrokerStatus{{ID: 0, Host: "b0", Port: 9092}, {ID: 1, Host: "b1", Port: 9092, Err: "broker 1 unreachable: connection refused"}},
		Partitions: []live.PartitionLag{
			{Topic: "orders", Partition: 3, HighWatermark: 50, LastStableOffset: 40, LSOLagOffsets: 10, LSOLagMs: 3_600_000, Hanging: true, PinnedBy: hang, Open: []live.ClusterTxn{*hang},
				Groups: []live.GroupBehind{{Group: "billing"}, {Group: "audit"}}},
			{Topic: "a/b", Partition: 0, HighWatermark: 9, LastStableOffset: 8, LSOLagOffsets: 1, LSOLagMs: 2000, PinnedBy: &live.ClusterTxn{ProducerID: 9, FirstOffset: 8, State: diagnosis.StateOpen}},
			{Topic: "orders", Partition: 1, HighWatermark: -1, LastStableOffset: -1, Err: "leader 1 down"},
			{Topic: "billing", Partition: 0, HighWatermark: 9, LastStableOffset: 3, LSOLagOffsets: 6, LSOLagMs: 1000, PinnedBy: &live.ClusterTxn{ProducerID: 10, FirstOffset: 3,
				TransactionalID: "billing-tx", CoordinatorState: "Ongoing", State: diagnosis.StateOpen}},
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
	if got := strings.Join(names, " "); got != "orders-3:hanging orders-1:unknown orders-0:clear a/b-0:open billing-0:open" {
		t.Errorf("rows %s", got)
	}
	for _, want := range []string{`"stuck-orders" from offset 40, which its coordinator will not end`, `"billing-tx" from offset 3, still open at its coordinator`, "billing, audit", "1h", "producer 9 from offset 8",
		`href="/cluster/a%2Fb/0"`, "Broker 1 at b1:9092 did not answer (connection refused): the partitions it leads are unknown until it does.",
		"leader 1 down", `data-poll-ms="5000"`, "3 stuck (1 hanging), 1 unknown, 1 clear", "with 19 requests.", `title="A hanging transaction holds the LSO`,
		"the last 2,000 offsets", "3 partitions, 1 stuck"} {
		if !strings.Contains(html.UnescapeString(body), want) {
			t.Errorf("no %q in the page", want)
		}
	}
	// Words for people: no raw coordinator state, no broker error
	// naming its broker twice.
	for _, raw := range []string{", Ongoing", "broker 1 unreachable"} {
		if strings.Contains(html.UnescapeString(body), raw) {
			t.Errorf("%q in the page", raw)
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

// TestClusterIndexNumbers: the cluster view writes its counts as every
// page and the CLI do (txnindex.Count): 1,200 partitions, a lag of 12,345
// offsets, 1 topic.
func TestClusterIndexNumbers(t *testing.T) {
	s := &live.ClusterScan{Time: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), Topics: 1, Stuck: 1, Clear: 1199, RequestCount: 1,
		Brokers: []live.BrokerStatus{{ID: 0, Host: "b0", Port: 9092}}}
	s.Partitions = append(s.Partitions, live.PartitionLag{Topic: "big", Partition: 0, HighWatermark: 112345, LastStableOffset: 100000, LSOLagOffsets: 12345, LSOLagMs: 5000})
	for p := int32(1); p < 1200; p++ {
		s.Partitions = append(s.Partitions, live.PartitionLag{Topic: "big", Partition: p, HighWatermark: 7, LastStableOffset: 7})
	}
	rec := httptest.NewRecorder()
	ClusterIndex(func() (*live.ClusterScan, error) { return s, nil }, "b0:9092", time.Second, 2000).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	body := html.UnescapeString(rec.Body.String())
	for _, want := range []string{"1,200 partitions in 1 topic on 1 broker: 1 stuck (0 hanging), 1,199 clear.", "with 1 request.", ">12,345<", "1,200 partitions, 1 stuck"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in the page", want)
		}
	}
}
