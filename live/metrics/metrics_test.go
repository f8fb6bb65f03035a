package metrics_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/hostilebroker"
	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/live/metrics"
)

func newClient(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func produce(t *testing.T, cl *kgo.Client, topic string, part int32, n int) {
	t.Helper()
	for range n {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Partition: part, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// openTxn leaves a transaction of two records open on topic-part.
func openTxn(t *testing.T, addrs []string, id, topic string, part int32) {
	t.Helper()
	tx := newClient(t, addrs, kgo.TransactionalID(id), kgo.TransactionTimeout(5*time.Minute))
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, tx, topic, part, 2)
}

// scrape GETs the handler over HTTP and parses the text format.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("%s %q: %s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return mfs
}

// series maps "topic-partition" to the value of a per-partition metric.
func series(t *testing.T, mfs map[string]*dto.MetricFamily, name string) map[string]float64 {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("no %s in the output", name)
	}
	out := map[string]float64{}
	for _, m := range mf.GetMetric() {
		var topic, part string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "topic":
				topic = l.GetValue()
			case "partition":
				part = l.GetValue()
			}
		}
		out[topic+"-"+part] = m.GetGauge().GetValue()
	}
	return out
}

func single(t *testing.T, mfs map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	mf := mfs[name]
	if mf == nil || len(mf.GetMetric()) != 1 {
		t.Fatalf("%s: %v", name, mf)
	}
	m := mf.GetMetric()[0]
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// listOffsets asks the cluster directly, through kgo's own sharding (not
// the scan's code), for every partition's latest offset at one isolation.
func listOffsets(t *testing.T, cl *kgo.Client, topics map[string]int32, iso int8) map[string]int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, iso
	for topic, n := range topics {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		for p := range n {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	out := map[string]int64{}
	for _, sh := range cl.RequestSharded(context.Background(), req) {
		if sh.Err != nil {
			t.Fatal(sh.Err)
		}
		for _, rt := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					t.Fatal(err)
				}
				out[fmt.Sprintf("%s-%d", rt.Topic, rp.Partition)] = rp.Offset
			}
		}
	}
	return out
}

// TestMetricsScan scrapes /metrics after a cluster scan of three kfake
// brokers with two open transactions, one of them hanging (its coordinator
// lost the id, and the scan looks an hour later), and checks every
// partition's lag against ListOffsets done here, the open and hanging
// counts, the lag seconds, the brokers and the scan's duration.
func TestMetricsScan(t *testing.T) {
	t.Parallel()
	topics := map[string]int32{"orders": 4, "payments": 3}
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(4, "orders"), kfake.SeedTopics(3, "payments"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	plain := newClient(t, addrs)
	for topic, n := range topics {
		for p := range n {
			produce(t, plain, topic, p, int(p)+1)
		}
	}
	start := time.Now()
	openTxn(t, addrs, "orders-writer", "orders", 2)
	openTxn(t, addrs, "lost-writer", "payments", 1)
	produce(t, plain, "orders", 2, 3)
	produce(t, plain, "payments", 1, 1)
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, TxnID: "lost-writer", Err: kerr.TransactionalIDNotFound, Count: -1})

	later := time.Now().Add(time.Hour)
	cl, err := live.NewCluster(live.Config{Brokers: addrs, Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	scan, err := cl.Scan(context.Background(), live.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	col := metrics.New(metrics.Options{ConstLabels: map[string]string{"cluster": "test"}})
	col.ObserveScan(scan)
	mfs := scrape(t, col.Handler())

	hwm, lso := listOffsets(t, plain, topics, 0), listOffsets(t, plain, topics, 1)
	lagOff, lagSec := series(t, mfs, metrics.NameLagOffsets), series(t, mfs, metrics.NameLagSeconds)
	open, hanging := series(t, mfs, metrics.NameOpen), series(t, mfs, metrics.NameHanging)
	if len(lagOff) != 7 || len(hwm) != 7 {
		t.Fatalf("%d lag series, %d partitions listed", len(lagOff), len(hwm))
	}
	for tp, h := range hwm {
		if got, want := lagOff[tp], float64(h-lso[tp]); got != want {
			t.Errorf("%s: lag %v offsets, ListOffsets says %d - %d = %v", tp, got, h, lso[tp], want)
		}
		wantOpen, wantHanging := 0.0, 0.0
		switch tp {
		case "orders-2":
			wantOpen = 1
		case "payments-1":
			wantOpen, wantHanging = 1, 1
		}
		if open[tp] != wantOpen || hanging[tp] != wantHanging {
			t.Errorf("%s: %v open, %v hanging; want %v, %v", tp, open[tp], hanging[tp], wantOpen, wantHanging)
		}
		if wantOpen == 0 && lagSec[tp] != 0 {
			t.Errorf("%s: clear, yet lag %v s", tp, lagSec[tp])
		}
	}
	if lagOff["orders-2"] != 5 || lagOff["payments-1"] != 3 {
		t.Errorf("stuck lags %v %v, want 5 and 3", lagOff["orders-2"], lagOff["payments-1"])
	}
	// Measured against a clock an hour ahead: an hour plus the time
	// since the transactions began.
	for _, tp := range []string{"orders-2", "payments-1"} {
		if s, hi := lagSec[tp], time.Hour.Seconds()+time.Since(start).Seconds()+1; s < time.Hour.Seconds() || s > hi {
			t.Errorf("%s: lag %v s, want within [3600, %v]", tp, s, hi)
		}
	}
	if d := single(t, mfs, metrics.NameScanDuration); math.Abs(d-scan.Duration.Seconds()) > 1e-9 || d <= 0 {
		t.Errorf("scan duration %v, scan took %s", d, scan.Duration)
	}
	if n := single(t, mfs, metrics.NameScanRequests); int(n) != scan.RequestCount {
		t.Errorf("requests %v, scan counted %d", n, scan.RequestCount)
	}
	if n := single(t, mfs, metrics.NameMismatches); n != 0 {
		t.Errorf("mismatches %v in cluster mode", n)
	}
	if at := single(t, mfs, metrics.NameLastScan); math.Abs(at-float64(later.UnixMilli())/1000) > 0.001 {
		t.Errorf("last scan at %v, want %v", at, later.Unix())
	}
	up := mfs[metrics.NameBrokerUp].GetMetric()
	if len(up) != 3 {
		t.Fatalf("broker_up: %v", up)
	}
	for _, m := range up {
		if m.GetGauge().GetValue() != 1 {
			t.Errorf("broker down: %v", m)
		}
	}
	for _, l := range mfs[metrics.NameLagOffsets].GetMetric()[0].GetLabel() {
		if l.GetName() == "cluster" && l.GetValue() != "test" {
			t.Errorf("cluster label %q", l.GetValue())
		}
	}
	if mfs["go_goroutines"] == nil {
		t.Error("no Go runtime metrics")
	}

	// LaggingOnly keeps the two stuck partitions only.
	lagging := metrics.New(metrics.Options{LaggingOnly: true})
	lagging.ObserveScan(scan)
	if got := series(t, scrape(t, lagging.Handler()), metrics.NameLagOffsets); len(got) != 2 || got["orders-2"] != 5 {
		t.Errorf("lagging only: %v", got)
	}
}

// TestMetricsWatcher feeds a single-topic watcher's update (live mode with
// --topic) and checks the lag against ListOffsets done here, the open
// transaction and the age of the LSO.
func TestMetricsWatcher(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "tail"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	plain := newClient(t, addrs)
	produce(t, plain, "tail", 0, 2)
	produce(t, plain, "tail", 1, 1)
	start := time.Now()
	openTxn(t, addrs, "tail-writer", "tail", 1)
	produce(t, plain, "tail", 1, 2)

	w, err := live.Dial(context.Background(), live.Config{Brokers: addrs, Topic: "tail", From: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	polled := time.Now()
	u, err := w.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	col := metrics.New(metrics.Options{})
	col.ObserveUpdate(u, time.Since(polled))
	col.AddMismatches(2) // as a poll with two differences would
	mfs := scrape(t, col.Handler())

	topics := map[string]int32{"tail": 2}
	hwm, lso := listOffsets(t, plain, topics, 0), listOffsets(t, plain, topics, 1)
	lagOff, lagSec, open := series(t, mfs, metrics.NameLagOffsets), series(t, mfs, metrics.NameLagSeconds), series(t, mfs, metrics.NameOpen)
	for p := range int32(2) {
		tp := "tail-" + strconv.Itoa(int(p))
		if got, want := lagOff[tp], float64(hwm[tp]-lso[tp]); got != want {
			t.Errorf("%s: lag %v, ListOffsets says %v", tp, got, want)
		}
	}
	if lagOff["tail-1"] != 4 || open["tail-1"] != 1 || open["tail-0"] != 0 || lagSec["tail-0"] != 0 {
		t.Errorf("lag %v, open %v", lagOff, open)
	}
	if s := lagSec["tail-1"]; s < 0 || s > time.Since(start).Seconds()+1 {
		t.Errorf("lag %v s, the transaction began %s ago", s, time.Since(start))
	}
	if n := single(t, mfs, metrics.NameMismatches); n != float64(len(u.Mismatches)+2) {
		t.Errorf("mismatches %v, want %d", n, len(u.Mismatches)+2)
	}
	if mfs[metrics.NameBrokerUp] != nil || mfs[metrics.NameScanRequests] != nil {
		t.Error("single-topic mode exports cluster-scan series")
	}
	// A failed poll keeps the previous observation.
	col.ObserveUpdate(live.Update{Topic: "tail", Err: "connection refused"}, time.Second)
	if got := series(t, scrape(t, col.Handler()), metrics.NameLagOffsets); got["tail-1"] != 4 {
		t.Errorf("after a failed poll: %v", got)
	}
}

// TestMetricsBrokerDown: a scan with a broker that did not answer exports
// txnscope_broker_up 0 for it and no series for the partitions it leads
// (their offsets are unknown: an absent series, not a lag of 0), while the
// others keep theirs.
func TestMetricsBrokerDown(t *testing.T) {
	scan := &live.ClusterScan{Time: time.Now(), Duration: time.Millisecond, RequestCount: 16,
		Brokers: []live.BrokerStatus{{ID: 0}, {ID: 1}, {ID: 2, Err: "broker 2 unreachable: connection refused"}},
		Partitions: []live.PartitionLag{
			{Topic: "orders", Partition: 0, Leader: 0, HighWatermark: 9, LastStableOffset: 4, LSOLagOffsets: 5, LSOLagMs: 2000, Open: []live.ClusterTxn{{}}},
			{Topic: "orders", Partition: 1, Leader: 1, HighWatermark: 3, LastStableOffset: 3},
			{Topic: "orders", Partition: 2, Leader: 2, HighWatermark: -1, LastStableOffset: -1, Err: "broker 2 unreachable: connection refused"},
		}}
	col := metrics.New(metrics.Options{})
	col.ObserveScan(scan)
	mfs := scrape(t, col.Handler())
	up := map[string]float64{}
	for _, m := range mfs[metrics.NameBrokerUp].GetMetric() {
		up[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	if up["0"] != 1 || up["1"] != 1 || up["2"] != 0 || len(up) != 3 {
		t.Errorf("broker_up %v, want 0 and 1 up, 2 down", up)
	}
	lag := series(t, mfs, metrics.NameLagOffsets)
	if _, ok := lag["orders-2"]; ok || lag["orders-0"] != 5 || lag["orders-1"] != 0 || len(lag) != 2 {
		t.Errorf("lag %v, want orders-0 5, orders-1 0 and no series for orders-2", lag)
	}
	if s := series(t, mfs, metrics.NameLagSeconds)["orders-0"]; s != 2 {
		t.Errorf("orders-0 held for %v s, want 2", s)
	}
}

// TestMetricsHostileTopicNames scans a broker whose Metadata lists topic
// names no Kafka accepts (bytes that are not UTF-8, a backslash) beside a
// plain one, and scrapes /metrics over HTTP. A label value that is not
// UTF-8 made the registry answer 500 for the whole scrape; now the names
// are escaped and every partition has its series.
func TestMetricsHostileTopicNames(t *testing.T) {
	b := hostilebroker.New(t, "orders", 2)
	b.MoreTopics = []string{"bad\xff\xfename", `bad\xff\xfename`, "caf\xc3"}
	b.HWM = 5
	cl, err := live.NewCluster(live.Config{Brokers: []string{b.Addr()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	scan, err := cl.Scan(context.Background(), live.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	col := metrics.New(metrics.Options{})
	col.ObserveScan(scan)
	mfs := scrape(t, col.Handler())
	got := series(t, mfs, metrics.NameLagOffsets)
	for _, want := range []string{"orders-0", "orders-1", `bad\xff\xfename-0`, `bad\\xff\\xfename-1`, `caf\xc3-0`} {
		if _, ok := got[want]; !ok {
			t.Errorf("no lag series for %q; have %v", want, got)
		}
	}
	if len(got) != 8 {
		t.Errorf("%d lag series, want 8 (4 topics of 2 partitions): %v", len(got), got)
	}
	if s := single(t, mfs, metrics.NameSkipped); s != 0 {
		t.Errorf("%v partitions without series", s)
	}
}

// TestLabelValue: names Kafka accepts are unchanged; the escape of the
// others is one-to-one.
func TestLabelValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"orders.v1_x-2", "orders.v1_x-2"},
		{"caf\u00e9", "caf\u00e9"},
		{"bad\xff", `bad\xff`},
		{`bad\xff`, `bad\\xff`},
		{"\xc3", `\xc3`},
		{"\xe2\x82", `\xe2\x82`},
		{"", ""},
	}
	for _, tc := range tests {
		if got := metrics.LabelValue(tc.in); got != tc.want {
			t.Errorf("LabelValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
