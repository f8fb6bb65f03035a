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
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

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
	cold, _, described := a.take()
	warm, err := cl.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	warmKeys, warmNodes, _ := a.take()
	// DescribeProducers asks about the stuck partitions only, whatever
	// the partition count.
	var stuck []string
	for _, st := range s.stuck {
		stuck = append(stuck, fmt.Sprintf("%s-%d", st.topic, st.partition))
	}
	if slices.Sort(stuck); !slices.Equal(described, stuck) {
		t.Errorf("DescribeProducers asked about %v, want the stuck %v only", described, stuck)
	}

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
			o.TimeoutMs != 300_000 || o.StartTimestamp <= 0 || o.Hanging || o.State != diagnosis.StateOpen || !o.PinsLSO ||
			!slices.Contains(o.CoordinatorPartitions, txnindex.TopicPartition{Topic: st.topic, Partition: st.partition}) {
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

// TestClusterScan at scale: three brokers, 1,000
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
	for _, want := range []string{"3 stuck (0 hanging), 0 unknown, 997 clear", `transactional id "stuck-orders"`, `group "billing" (no members) committed`,
		"\n  t3 0-99", "since the transaction start (DescribeTransactions)\n", "\n    open: last write "} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// Said once, in words: not "open: open, ..." nor Kafka's group state.
	for _, raw := range []string{"open: open", "(Empty)", "((DescribeTransactions))"} {
		if strings.Contains(text, raw) {
			t.Errorf("text has %q:\n%s", raw, text)
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
	if p.Topic != lost.topic || p.Partition != lost.partition || !p.Hanging || !p.Open[0].Hanging || p.Open[0].State != diagnosis.StateHanging ||
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
		if q.Hanging || q.Open[0].State != diagnosis.StateExpired || !strings.Contains(q.Open[0].Reason, want) {
			t.Errorf("%s-%d: %+v, want a reason with %q", q.Topic, q.Partition, q.Open[0], want)
		}
	}
	if scan.MaxTxnTimeoutMs != diagnosis.DefaultMaxTxnTimeout.Milliseconds() || scan.MaxTxnTimeoutSource == "" {
		t.Errorf("max timeout %d ms from %q", scan.MaxTxnTimeoutMs, scan.MaxTxnTimeoutSource)
	}
	t.Logf("%s", p.Open[0].Reason)
}

// TestClusterBrokerDown: broker 2 closes every connection, or never
// answers. The scan reports it and its partitions as unknown, still scans
// the rest (the stuck partitions on brokers 0 and 1 named), does not call
// a transaction hanging for want of an answer from it, and asks it once,
// the unanswered request ended by the scan's own request timeout.
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
	var (
		mu   sync.Mutex
		sent []string // the requests broker 2 received
	)
	s.c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		s.c.KeepControl()
		if s.c.CurrentNode() == down {
			mu.Lock()
			sent = append(sent, kmsg.NameForKey(r.Key()))
			mu.Unlock()
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
	if b := scan.Brokers[down]; b.ID != down || !strings.Contains(b.Err, "unreachable") {
		t.Fatalf("broker %d: %+v", down, b)
	}
	// The unanswered request ends at the scan's own bound (the request
	// timeout, here --dial-timeout's 1 s): its context's deadline, not
	// kgo's read deadline (RequestTimeoutOverhead, 10 s, an "i/o
	// timeout"); and the broker is asked once a scan, not once a phase.
	if closeWith == nil && !strings.HasSuffix(scan.Brokers[down].Err, context.DeadlineExceeded.Error()) {
		t.Errorf("broker %d: %q, want the scan's request timeout (%v)", down, scan.Brokers[down].Err, context.DeadlineExceeded)
	}
	mu.Lock()
	if len(sent) != 1 {
		t.Errorf("broker %d received %v in one scan, want one request and then nothing", down, sent)
	}
	mu.Unlock()
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
