package live

// The kfake cluster the cluster-scan tests and benchmark build (stuck,
// hanging and clear partitions, groups behind them) and the request audit
// that checks a scan against its request formula.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// clusterReadOnlyKeys is the watcher's read-only list (readOnlyKeys) grown
// by the group reads cluster mode needs: OffsetFetch, DescribeGroups,
// ListGroups, and for the newer kinds ConsumerGroupDescribe (KIP-848) and
// DescribeShareGroupOffsets (KIP-932).
var clusterReadOnlyKeys = func() map[int16]bool {
	m := maps.Clone(readOnlyKeys)
	m[int16(kmsg.OffsetFetch)], m[int16(kmsg.DescribeGroups)], m[int16(kmsg.ListGroups)] = true, true, true
	m[int16(kmsg.ConsumerGroupDescribe)], m[int16(kmsg.DescribeShareGroupOffsets)] = true, true
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

func newScenario(tb testing.TB, topics, per int32, opts ...kfake.Opt) *scenario {
	tb.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3), kfake.SeedTopics(per, clusterTopics(int(topics))...)}, opts...)...)
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
		for st, off := range offs {
			testfixture.CommitOffset(tb, plain, group, st.topic, st.partition, off)
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
	// described are the partitions DescribeProducers asked about,
	// "t1-7", sorted by take.
	described []string
}

func newAudit(c *kfake.Cluster) *audit {
	a := &audit{keys: map[int16]int{}, node: map[string]int{}}
	c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n := c.CurrentNode()
		a.mu.Lock()
		a.keys[r.Key()]++
		a.node[fmt.Sprintf("%s@%d", kmsg.NameForKey(r.Key()), n)]++
		if dp, ok := r.(*kmsg.DescribeProducersRequest); ok {
			for _, t := range dp.Topics {
				for _, p := range t.Partitions {
					a.described = append(a.described, fmt.Sprintf("%s-%d", t.Topic, p))
				}
			}
		}
		a.mu.Unlock()
		return nil, nil, false
	})
	return a
}

// take returns the counts and the partitions DescribeProducers asked
// about so far, and starts again.
func (a *audit) take() (map[int16]int, map[string]int, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k, n, d := a.keys, a.node, a.described
	a.keys, a.node, a.described = map[int16]int{}, map[string]int{}, nil
	slices.Sort(d)
	return k, n, d
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
