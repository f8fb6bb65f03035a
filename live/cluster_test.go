package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// clusterReadOnlyKeys is the watcher's read-only list (readOnlyKeys) grown
// by the three group reads cluster mode needs: OffsetFetch, DescribeGroups
// and ListGroups.
var clusterReadOnlyKeys = func() map[int16]bool {
	m := maps.Clone(readOnlyKeys)
	m[int16(kmsg.OffsetFetch)], m[int16(kmsg.DescribeGroups)], m[int16(kmsg.ListGroups)] = true, true, true
	return m
}()

// stuckTP is a partition a test leaves an open transaction on.
type stuckTP struct {
	topic     string
	partition int32
	leader    int32  // moved there before any write
	txnID     string // the open transaction's transactional id
}

// scenario is a kfake cluster of three brokers with topics t0..t9 of per
// partitions each: one record on every partition, a committed transaction
// on t0's and an aborted one on t2's first ten partitions, three
// transactions left open (each followed by three more records from an
// idempotent producer, so the partition moved on), and committed offsets
// of groups "billing" (at each stuck LSO), "audit" (one below) and "ahead"
// (past one LSO: not behind).
type scenario struct {
	c      *kfake.Cluster
	addrs  []string
	stuck  []stuckTP
	first  map[stuckTP]int64 // the open transaction's first offset
	hwm    map[stuckTP]int64
	groups []string
}

func clusterTopics(n int) []string {
	ts := make([]string, n)
	for i := range ts {
		ts[i] = fmt.Sprintf("t%d", i)
	}
	return ts
}

func newScenario(tb testing.TB, topics, per int32) *scenario {
	tb.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(per, clusterTopics(int(topics))...))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	s := &scenario{c: c, addrs: c.ListenAddrs(), first: map[stuckTP]int64{}, hwm: map[stuckTP]int64{}}
	s.stuck = []stuckTP{
		{topic: "t1", partition: 7 % per, leader: 0, txnID: "stuck-orders"},
		{topic: fmt.Sprintf("t%d", min(4, topics-1)), partition: 42 % per, leader: 1, txnID: "stuck-billing"},
		{topic: fmt.Sprintf("t%d", topics-1), partition: per - 1, leader: 2, txnID: "stuck-audit"},
	}
	for _, st := range s.stuck {
		if err := c.MoveTopicPartition(st.topic, st.partition, st.leader); err != nil {
			tb.Fatal(err)
		}
	}
	ctx := context.Background()
	plain := benchClient(tb, s.addrs)
	var recs []*kgo.Record
	for t := range topics {
		for p := range per {
			recs = append(recs, &kgo.Record{Topic: fmt.Sprintf("t%d", t), Partition: p, Value: []byte("seed")})
		}
	}
	if err := plain.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		tb.Fatal(err)
	}
	for i, end := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort} {
		tx := benchClient(tb, s.addrs, kgo.TransactionalID(fmt.Sprintf("done-%d", i)))
		if err := tx.BeginTransaction(); err != nil {
			tb.Fatal(err)
		}
		recs = recs[:0]
		for p := range min(per, 10) {
			recs = append(recs, &kgo.Record{Topic: fmt.Sprintf("t%d", 2*i), Partition: p, Value: []byte("txn")})
		}
		if err := tx.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			tb.Fatal(err)
		}
		if err := tx.EndTransaction(ctx, end); err != nil {
			tb.Fatal(err)
		}
	}
	for _, st := range s.stuck {
		tx := benchClient(tb, s.addrs, kgo.TransactionalID(st.txnID), kgo.TransactionTimeout(5*time.Minute))
		if err := tx.BeginTransaction(); err != nil {
			tb.Fatal(err)
		}
		r1 := &kgo.Record{Topic: st.topic, Partition: st.partition, Value: []byte("open")}
		r2 := &kgo.Record{Topic: st.topic, Partition: st.partition, Value: []byte("open")}
		if err := tx.ProduceSync(ctx, r1, r2).FirstErr(); err != nil {
			tb.Fatal(err)
		}
		s.first[st] = r1.Offset
		var last *kgo.Record
		for range 3 {
			last = &kgo.Record{Topic: st.topic, Partition: st.partition, Value: []byte("after")}
			if err := plain.ProduceSync(ctx, last).FirstErr(); err != nil {
				tb.Fatal(err)
			}
		}
		s.hwm[st] = last.Offset + 1
	}
	// Committed offsets, as a consumer of each group would have left
	// them, through OffsetCommit with generation -1 (a simple consumer's
	// commit): the scan must find them without joining any group.
	commit := func(group string, offs map[stuckTP]int64) {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = group, -1
		for st, off := range offs {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic, rt.TopicID = st.topic, c.TopicInfo(st.topic).TopicID // v10 names topics by id
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = st.partition, off, -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		kresp, err := plain.Request(ctx, req)
		if err != nil {
			tb.Fatal(err)
		}
		for _, t := range kresp.(*kmsg.OffsetCommitResponse).Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					tb.Fatalf("commit %s %s-%d: %v", group, t.Topic, p.Partition, err)
				}
			}
		}
		s.groups = append(s.groups, group)
	}
	billing := map[stuckTP]int64{{topic: "t0", partition: 0}: 3}
	for _, st := range s.stuck {
		billing[st] = s.first[st]
	}
	commit("billing", billing)
	commit("audit", map[stuckTP]int64{s.stuck[1]: s.first[s.stuck[1]] - 1})
	commit("ahead", map[stuckTP]int64{s.stuck[2]: s.hwm[s.stuck[2]]})
	return s
}

func benchClient(tb testing.TB, addrs []string, opts ...kgo.Opt) *kgo.Client {
	tb.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cl.Close)
	return cl
}

// audit records the key and broker of every request the cluster handles
// from the moment it is installed; the workload's clients are idle by then.
type audit struct {
	mu   sync.Mutex
	keys map[int16]int
	node map[string]int // "ListOffsets@1"
}

func newAudit(c *kfake.Cluster) *audit {
	a := &audit{keys: map[int16]int{}, node: map[string]int{}}
	c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n := c.CurrentNode()
		a.mu.Lock()
		a.keys[r.Key()]++
		a.node[fmt.Sprintf("%s@%d", kmsg.NameForKey(r.Key()), n)]++
		a.mu.Unlock()
		return nil, nil, false
	})
	return a
}

// take returns the counts so far and starts again.
func (a *audit) take() (map[int16]int, map[string]int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k, n := a.keys, a.node
	a.keys, a.node = map[int16]int{}, map[string]int{}
	return k, n
}

// formula is ScanCluster's request count, computed from what the scan
// found and what the scenario knows about the group coordinators. Ct, the
// brokers that list one of the open producers, is every broker here: kfake
// lists every transaction on every broker (Kafka lists only those a broker
// coordinates), so each gets a DescribeTransactions.
func formula(s *ClusterScan, groupCoordinators int, maxTxnSet bool) int {
	leaders, stuckLeaders := map[int32]bool{}, map[int32]bool{}
	open := 0
	for _, b := range s.Brokers {
		if b.Leads > 0 {
			leaders[b.ID] = true
		}
	}
	for _, p := range s.Partitions {
		if p.Err == "" && p.LSOLagOffsets > 0 {
			stuckLeaders[p.Leader] = true
			open += len(p.Open)
		}
	}
	B := len(s.Brokers)
	r := 1 + 2*len(leaders)
	if s.Stuck > 0 {
		r += len(stuckLeaders) + B + B + groupCoordinators
		if open > 0 {
			r += B // Ct
			if !maxTxnSet {
				r++
			}
		}
	}
	return r
}

func (s *scenario) groupCoordinators() int {
	m := map[int32]bool{}
	for _, g := range s.groups {
		m[s.c.CoordinatorFor(g)] = true
	}
	return len(m)
}

// clusterScanChecked runs the scenario's scan twice with one client and
// checks the first: every partition listed, the three stuck ones named
// with their transactional ids, first offsets and groups, the rest clear,
// only read-only requests, and the counts the formula gives. It returns
// the second (warm) scan's counts as the broker saw them.
func clusterScanChecked(t *testing.T, topics, per int32) (map[int16]int, *ClusterScan) {
	s := newScenario(t, topics, per)
	a := newAudit(s.c)
	cl, err := NewCluster(Config{Brokers: s.addrs})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	scan, err := cl.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cold, _ := a.take()
	warm, err := cl.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	warmKeys, warmNodes := a.take()

	n := int(topics * per)
	if len(scan.Partitions) != n || scan.Topics != int(topics) || scan.Stuck != 3 || scan.Clear != n-3 || scan.Unknown != 0 || scan.Hanging != 0 {
		t.Fatalf("%d partitions in %d topics, %d stuck, %d clear, %d unknown, %d hanging; want %d, 3 stuck", len(scan.Partitions), scan.Topics,
			scan.Stuck, scan.Clear, scan.Unknown, scan.Hanging, n)
	}
	seen := map[string]bool{}
	for i, p := range scan.Partitions {
		key := fmt.Sprintf("%s-%d", p.Topic, p.Partition)
		if seen[key] {
			t.Fatalf("%s listed twice", key)
		}
		seen[key] = true
		if i >= 3 && (p.LSOLagOffsets != 0 || p.HighWatermark < 1 || p.LastStableOffset != p.HighWatermark || len(p.Open) != 0 || p.Err != "") {
			t.Fatalf("clear partition %d: %+v", i, p)
		}
		// kfake's own state is the oracle for every partition.
		if pi := s.c.PartitionInfo(p.Topic, p.Partition); pi.HighWatermark != p.HighWatermark || pi.LastStableOffset != p.LastStableOffset || pi.Leader != p.Leader {
			t.Fatalf("%s: HWM %d LSO %d leader %d; kfake has %d %d %d", key, p.HighWatermark, p.LastStableOffset, p.Leader, pi.HighWatermark, pi.LastStableOffset, pi.Leader)
		}
	}
	for _, st := range s.stuck {
		i := slices.IndexFunc(scan.Partitions[:3], func(p PartitionLag) bool { return p.Topic == st.topic && p.Partition == st.partition })
		if i < 0 {
			t.Fatalf("%s-%d not among the first three: %+v", st.topic, st.partition, scan.Partitions[:3])
		}
		p := scan.Partitions[i]
		first := s.first[st]
		if p.Leader != st.leader || p.LastStableOffset != first || p.HighWatermark != s.hwm[st] || p.LSOLagOffsets != s.hwm[st]-first {
			t.Errorf("%s-%d: leader %d LSO %d HWM %d lag %d; want leader %d LSO %d HWM %d", st.topic, st.partition, p.Leader,
				p.LastStableOffset, p.HighWatermark, p.LSOLagOffsets, st.leader, first, s.hwm[st])
		}
		if len(p.Open) != 1 || p.PinnedBy == nil || p.PinnedBy != &p.Open[0] {
			t.Fatalf("%s-%d open %+v pinned by %v", st.topic, st.partition, p.Open, p.PinnedBy)
		}
		o := p.Open[0]
		if o.TransactionalID != st.txnID || o.FirstOffset != first || o.CoordinatorState != "Ongoing" || o.Coordinator != s.c.CoordinatorFor(st.txnID) ||
			o.TimeoutMs != 300_000 || o.StartTimestamp <= 0 || o.Hanging || o.State != txnindex.StateOpen || !o.PinsLSO ||
			!slices.Contains(o.CoordinatorPartitions, fmt.Sprintf("%s-%d", st.topic, st.partition)) {
			t.Errorf("%s-%d: open transaction %+v", st.topic, st.partition, o)
		}
		if want := fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic %s --partition %d --start-offset %d",
			strings.Join(s.addrs, ","), st.topic, st.partition, first); o.AbortCommand != want {
			t.Errorf("abort command %q, want %q", o.AbortCommand, want)
		}
		if p.LSOLagSource != "transaction start (DescribeTransactions)" || p.LSOLagMs < 0 || p.LSOLagMs > time.Since(time.UnixMilli(o.StartTimestamp)).Milliseconds()+1 {
			t.Errorf("lag %d ms from %q", p.LSOLagMs, p.LSOLagSource)
		}
		var groups []string
		for _, g := range p.Groups {
			groups = append(groups, fmt.Sprintf("%s@%d/%v", g.Group, g.Committed, g.Blocked))
		}
		want := []string{fmt.Sprintf("billing@%d/true", first)}
		if st == s.stuck[1] {
			want = append([]string{fmt.Sprintf("audit@%d/false", first-1)}, want...)
		}
		if !slices.Equal(groups, want) {
			t.Errorf("%s-%d groups behind %v, want %v (ahead is past the LSO)", st.topic, st.partition, groups, want)
		}
	}

	for k, c := range cold {
		if !clusterReadOnlyKeys[k] {
			t.Errorf("sent %s (key %d) %d times: not a read-only API", kmsg.NameForKey(k), k, c)
		}
	}
	sent := func(keys map[int16]int) int {
		n := 0
		for k, c := range keys {
			if k != int16(kmsg.ApiVersions) {
				n += c
			}
		}
		return n
	}
	want := formula(scan, s.groupCoordinators(), false)
	if got := sent(cold); got != want || scan.RequestCount != want {
		t.Errorf("cold scan: the broker saw %d requests (%v), the scan counted %d (%v), the formula says %d", got, cold, scan.RequestCount, scan.Requests, want)
	}
	if got := cold[int16(kmsg.ApiVersions)]; got > len(scan.Brokers)+1 {
		t.Errorf("%d ApiVersions for %d brokers", got, len(scan.Brokers))
	}
	if got := sent(warmKeys); got != want || warmKeys[int16(kmsg.ApiVersions)] != 0 {
		t.Errorf("warm scan: %v, want %d requests and no new connection", warmKeys, want)
	}
	// One ListOffsets per broker per isolation level: each of the three
	// leads partitions.
	for b := range 3 {
		if c := warmNodes[fmt.Sprintf("ListOffsets@%d", b)]; c != 2 {
			t.Errorf("broker %d got %d ListOffsets, want 2 (%v)", b, c, warmNodes)
		}
	}
	if warm.Stuck != 3 || len(warm.Partitions) != n {
		t.Errorf("warm scan: %d stuck of %d", warm.Stuck, len(warm.Partitions))
	}
	t.Logf("%d partitions: %d requests per scan (%v), +%d ApiVersions on the first; %s", n, want, scan.Requests, cold[int16(kmsg.ApiVersions)], scan.Duration)
	return warmKeys, scan
}

// TestClusterScan is issue 20's acceptance: three brokers, 1,000
// partitions over 10 topics, three transactions left open on three
// partitions and groups with committed offsets. The scan lists all 1,000,
// names the three with their transactional ids and first offsets, finds the
// rest clear and the groups behind, sends only read-only requests, and sends
// as many at 1,000 partitions as at 100.
func TestClusterScan(t *testing.T) {
	t.Parallel()
	big, scan := clusterScanChecked(t, 10, 100)
	small, _ := clusterScanChecked(t, 10, 10)
	if !maps.Equal(big, small) {
		t.Errorf("requests per scan differ: %v at 1,000 partitions, %v at 100", big, small)
	}
	var sb strings.Builder
	if err := scan.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	text := sb.String()
	for _, want := range []string{"3 stuck (0 hanging), 0 unknown, 997 clear", `transactional id "stuck-orders"`, `group "billing"`, "\n  t3 0-99"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if i, j := strings.Index(text, "STUCK"), strings.Index(text, "clear (lag 0)"); i < 0 || j < i {
		t.Errorf("stuck partitions do not come first:\n%s", text)
	}
	b, err := json.Marshal(scan)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Partitions []struct {
			Topic string `json:"topic"`
			Open  []struct {
				TransactionalID  string `json:"transactional_id"`
				CoordinatorState string `json:"coordinator_state"`
			} `json:"open_transactions"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Partitions) != 1000 || back.Partitions[0].Open[0].CoordinatorState != "Ongoing" {
		t.Fatalf("JSON: %v %+v", err, back.Partitions[:1])
	}
	t.Logf("\n%s", text[:min(len(text), 2500)])
}

// TestClusterFilters: --topics keeps the matching topics, and internal
// topics are scanned only when asked for.
func TestClusterFilters(t *testing.T) {
	t.Parallel()
	s := newScenario(t, 3, 4)
	// kfake flags a topic internal by this config, as Kafka flags
	// __consumer_offsets and __transaction_state.
	if err := s.c.CreateTopic("__consumer_offsets", 3, map[string]string{"kfake.is_internal": "true"}); err != nil {
		t.Fatal(err)
	}
	cl, err := NewCluster(Config{Brokers: s.addrs})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	scan, err := cl.Scan(context.Background(), ScanOptions{Topics: regexp.MustCompile(`^t[01]$`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Partitions) != 8 || scan.Topics != 2 || scan.Stuck != 1 || scan.Partitions[0].Topic != "t1" {
		t.Fatalf("--topics ^t[01]$: %d partitions, %d topics, %d stuck", len(scan.Partitions), scan.Topics, scan.Stuck)
	}
	all, err := cl.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	internal, err := cl.Scan(context.Background(), ScanOptions{Internal: true})
	if err != nil {
		t.Fatal(err)
	}
	hasInternal := func(s *ClusterScan) bool {
		return slices.ContainsFunc(s.Partitions, func(p PartitionLag) bool { return strings.HasPrefix(p.Topic, "__") })
	}
	if hasInternal(all) || !hasInternal(internal) || len(internal.Partitions) != len(all.Partitions)+3 {
		t.Fatalf("internal topics: %d partitions without, %d with", len(all.Partitions), len(internal.Partitions))
	}
}

// TestClusterHanging looks an hour later (past transaction.max.timeout.ms):
// the transaction whose coordinator lost its id (DescribeTransactions
// answers TRANSACTIONAL_ID_NOT_FOUND, as after
// transactional.id.expiration.ms) is hanging by KIP-664's rule and ranked
// first; those the coordinator still tracks are expired but not hanging.
func TestClusterHanging(t *testing.T) {
	t.Parallel()
	s := newScenario(t, 3, 4)
	lost, denied := s.stuck[1], s.stuck[2]
	s.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, TxnID: lost.txnID, Err: kerr.TransactionalIDNotFound, Count: -1})
	// An ACL denying DESCRIBE on an id is no evidence: not hanging.
	s.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, TxnID: denied.txnID, Err: kerr.TransactionalIDAuthorizationFailed, Count: -1})
	cl, err := NewCluster(Config{Brokers: s.addrs, Now: func() time.Time { return time.Now().Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	scan, err := cl.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !scan.AnyHanging() || scan.Hanging != 1 || scan.Stuck != 3 {
		t.Fatalf("%d hanging of %d stuck", scan.Hanging, scan.Stuck)
	}
	p := scan.Partitions[0]
	if p.Topic != lost.topic || p.Partition != lost.partition || !p.Hanging || !p.Open[0].Hanging || p.Open[0].State != txnindex.StateHanging ||
		p.Open[0].TransactionalID != lost.txnID || !strings.Contains(p.Open[0].Reason, "KIP-664") {
		t.Fatalf("first: %+v", p)
	}
	if p.LSOLagSource != "last write (DescribeProducers), a lower bound" || p.LSOLagMs < time.Hour.Milliseconds() {
		t.Errorf("lag %d ms from %q", p.LSOLagMs, p.LSOLagSource)
	}
	for _, q := range scan.Partitions[1:3] {
		want := "still tracks"
		if q.Topic == denied.topic && q.Partition == denied.partition {
			want = "whether it hangs is unknown"
		}
		if q.Hanging || q.Open[0].State != txnindex.StateExpired || !strings.Contains(q.Open[0].Reason, want) {
			t.Errorf("%s-%d: %+v, want a reason with %q", q.Topic, q.Partition, q.Open[0], want)
		}
	}
	if scan.MaxTxnTimeoutMs != txnindex.DefaultMaxTxnTimeout.Milliseconds() || scan.MaxTxnTimeoutSource == "" {
		t.Errorf("max timeout %d ms from %q", scan.MaxTxnTimeoutMs, scan.MaxTxnTimeoutSource)
	}
	t.Logf("%s", p.Open[0].Reason)
}

// TestClusterBrokerDown: broker 2 closes every connection, or never
// answers. The scan reports it and its partitions as unknown, still scans
// the rest (the stuck partitions on brokers 0 and 1 named), does not call
// a transaction hanging for want of an answer from it, and waits for it
// about one request timeout, not one per phase.
func TestClusterBrokerDown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error // nil: the request is swallowed, never answered
	}{{"closes connections", errors.New("broker down")}, {"never answers", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			brokerDown(t, tc.err)
		})
	}
}

func brokerDown(t *testing.T, closeWith error) {
	s := newScenario(t, 3, 6)
	const down = 2
	s.c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		s.c.KeepControl()
		if s.c.CurrentNode() == down {
			return nil, closeWith, true
		}
		return nil, nil, false
	})
	// Seeded with the live brokers, as an operator would list them.
	cl, err := NewCluster(Config{Brokers: s.addrs[:2], DialTimeout: time.Second, Now: func() time.Time { return time.Now().Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	start := time.Now()
	scan, err := cl.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Two timeouts would be 2 s; the bound is loose for a loaded machine.
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("scan took %s with a request timeout of 1 s", took)
	}
	if b := scan.Brokers[down]; b.ID != down || !strings.Contains(b.Err, "unreachable") {
		t.Fatalf("broker %d: %+v", down, b)
	}
	led := 0
	for _, p := range scan.Partitions {
		if p.Leader == down {
			led++
			if !strings.Contains(p.Err, "broker 2 unreachable") {
				t.Errorf("%s-%d on the dead broker: %+v", p.Topic, p.Partition, p)
			}
		} else if p.Err != "" {
			t.Errorf("%s-%d on a live broker: %s", p.Topic, p.Partition, p.Err)
		}
	}
	if led == 0 || scan.Unknown != led || scan.Stuck != 2 || scan.Clear != 18-led-2 {
		t.Fatalf("%d led by broker %d, %d unknown, %d stuck, %d clear", led, down, scan.Unknown, scan.Stuck, scan.Clear)
	}
	for _, st := range s.stuck[:2] {
		i := slices.IndexFunc(scan.Partitions, func(p PartitionLag) bool { return p.Topic == st.topic && p.Partition == st.partition })
		o := scan.Partitions[i].Open
		if len(o) != 1 || o[0].FirstOffset != s.first[st] || o[0].Hanging {
			t.Fatalf("%s-%d: %+v", st.topic, st.partition, o)
		}
		// kfake lists every transaction on every broker, so the live
		// ones name it even when broker 2 coordinates it; Kafka's
		// would not, and the reason would say broker 2 did not answer.
		if o[0].TransactionalID != st.txnID {
			t.Errorf("%s-%d: transactional id %q, want %q", st.topic, st.partition, o[0].TransactionalID, st.txnID)
		}
		if s.c.CoordinatorFor(st.txnID) == down && !strings.Contains(o[0].Reason, "whether it hangs is unknown") {
			t.Errorf("coordinated by the dead broker, yet judged: %s", o[0].Reason)
		}
	}
	t.Logf("broker %d: %s; %d requests in %s", down, scan.Brokers[down].Err, scan.RequestCount, time.Since(start))
}

// BenchmarkClusterScan scans 1,000 and 10,000 partitions (topics of 100
// partitions on three kfake brokers, three of them stuck, the groups
// behind) and reports the requests and bytes per scan; the request count
// does not change with the partitions. Issue 20's figure is the 10,000 one.
func BenchmarkClusterScan(b *testing.B) {
	for _, topics := range []int32{10, 100} {
		n := int(topics) * 100
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			s := newScenario(b, topics, 100)
			wire := &wireBytes{}
			cl := benchClient(b, s.addrs, kgo.WithHooks(wire))
			ctx := context.Background()
			if _, err := ScanCluster(ctx, cl, ScanOptions{}); err != nil { // connect
				b.Fatal(err)
			}
			wire.take()
			requests, scans := 0, 0
			for b.Loop() {
				scan, err := ScanCluster(ctx, cl, ScanOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if len(scan.Partitions) != n || scan.Stuck != 3 {
					b.Fatalf("%d partitions, %d stuck", len(scan.Partitions), scan.Stuck)
				}
				requests = scan.RequestCount
				scans++
			}
			w, r := wire.take()
			b.ReportMetric(float64(requests), "requests/scan")
			b.ReportMetric(float64(w)/float64(scans), "sent-B/scan")
			b.ReportMetric(float64(r)/float64(scans), "received-B/scan")
		})
	}
}

// wireBytes counts the bytes a client writes and reads.
type wireBytes struct{ w, r atomic.Int64 }

func (h *wireBytes) OnBrokerWrite(_ kgo.BrokerMetadata, _ int16, n int, _, _ time.Duration, _ error) {
	h.w.Add(int64(n))
}

func (h *wireBytes) OnBrokerRead(_ kgo.BrokerMetadata, _ int16, n int, _, _ time.Duration, _ error) {
	h.r.Add(int64(n))
}

func (h *wireBytes) take() (int64, int64) { return h.w.Swap(0), h.r.Swap(0) }

// inflight tracks, per broker, the requests written and not yet answered.
type inflight struct {
	mu       sync.Mutex
	now, max map[int32]int
}

func (h *inflight) OnBrokerWrite(m kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil && key != int16(kmsg.ApiVersions) {
		h.now[m.NodeID]++
		h.max[m.NodeID] = max(h.max[m.NodeID], h.now[m.NodeID])
	}
}

func (h *inflight) OnBrokerRead(m kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if key != int16(kmsg.ApiVersions) {
		h.now[m.NodeID]--
	}
}

func (h *inflight) reset() map[int32]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.max
	h.now, h.max = map[int32]int{}, map[int32]int{}
	return m
}

// TestClusterPerBroker: ScanCluster on a caller's client keeps at most
// PerBroker requests in flight to a broker. The brokers answer slowly
// (kfake runs control functions one at a time), so requests the scan sends
// together overlap: with a bound of 4 some broker has two in flight,
// which shows the count can see it; with 1, none does.
func TestClusterPerBroker(t *testing.T) {
	t.Parallel()
	s := newScenario(t, 3, 6)
	h := &inflight{}
	h.reset()
	cl := benchClient(t, s.addrs, kgo.WithHooks(h))
	ctx := context.Background()
	if _, err := ScanCluster(ctx, cl, ScanOptions{}); err != nil { // connect
		t.Fatal(err)
	}
	s.c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		s.c.KeepControl()
		time.Sleep(10 * time.Millisecond)
		return nil, nil, false
	})
	for _, bound := range []int{4, 1} {
		h.reset()
		scan, err := ScanCluster(ctx, cl, ScanOptions{PerBroker: bound})
		if err != nil {
			t.Fatal(err)
		}
		peak := h.reset()
		most := slices.Max(slices.Collect(maps.Values(peak)))
		switch {
		case scan.Stuck != 3:
			t.Fatalf("bound %d: %d stuck", bound, scan.Stuck)
		case bound == 1 && most != 1:
			t.Errorf("bound 1: %v in flight at most", peak)
		case bound == 4 && most < 2:
			t.Errorf("bound 4: %v in flight at most: the test cannot see the bound work", peak)
		}
		t.Logf("bound %d: at most %v in flight per broker", bound, peak)
	}
}

// TestClusterInOrder: an answer that lists the partitions in another order
// than asked is matched by name, not by position.
func TestClusterInOrder(t *testing.T) {
	ps := []*PartitionLag{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}}
	resp := kmsg.NewPtrListOffsetsResponse()
	for _, tp := range []struct {
		t string
		p []int32
	}{{"a", []int32{0, 1}}, {"b", []int32{0}}} {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = tp.t
		for _, p := range tp.p {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if !inOrder(ps, resp) {
		t.Fatal("the asked order is not in order")
	}
	resp.Topics[0].Partitions[0].Partition, resp.Topics[0].Partitions[1].Partition = 1, 0
	if inOrder(ps, resp) {
		t.Fatal("swapped partitions taken as in order")
	}
	resp.Topics[0].Partitions = resp.Topics[0].Partitions[:1]
	if inOrder(ps, resp) || inOrder(ps[:2], resp) {
		t.Fatal("a short answer taken as in order")
	}
}

// TestClusterRun: Run delivers a scan every Poll until cancelled; a wrong
// password is ErrAuth and ends Run, an address nothing listens on is
// ErrUnreachable within seconds, and neither error holds the password.
func TestClusterRun(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(3, "r"), kfake.EnableSASL(), kfake.Superuser(MechanismSCRAMSHA256, "alice", "correct-horse"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := Config{Brokers: c.ListenAddrs(), Poll: 20 * time.Millisecond, SASL: &SASL{Mechanism: MechanismSCRAMSHA256, User: "alice", Password: "correct-horse"}}
	cl, err := NewCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var scans []*ClusterScan
	err = cl.Run(ctx, ScanOptions{}, func(s *ClusterScan, err error) {
		if err != nil {
			t.Errorf("scan: %v", err)
		}
		if scans = append(scans, s); len(scans) == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || len(scans) != 2 || len(scans[1].Partitions) != 3 {
		t.Fatalf("Run: %v after %d scans", err, len(scans))
	}

	cfg.SASL = &SASL{Mechanism: MechanismSCRAMSHA256, User: "alice", Password: "battery-staple"}
	bad, err := NewCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	calls := 0
	authErr := bad.Run(context.Background(), ScanOptions{}, func(*ClusterScan, error) { calls++ })
	if !errors.Is(authErr, ErrAuth) || calls != 0 || strings.Contains(authErr.Error(), "battery-staple") {
		t.Fatalf("wrong password: %v after %d calls", authErr, calls)
	}

	start := time.Now()
	dead, err := NewCluster(Config{Brokers: []string{"127.0.0.1:1"}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	if _, err = dead.Scan(context.Background(), ScanOptions{}); !errors.Is(err, ErrUnreachable) || time.Since(start) > 10*time.Second {
		t.Fatalf("nothing listening: %v after %s", err, time.Since(start))
	}
	t.Logf("wrong password: %v; nothing listening: %v (%s)", authErr, err, time.Since(start).Round(time.Millisecond))
}
