package testfixture

import (
	"context"
	"fmt"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"testing"
	"time"
)

// OpenTxn is a transaction a cluster fixture leaves open.
type OpenTxn struct {
	Topic     string
	Partition int32
	Leader    int32
	TxnID     string
	First     int64 // its first offset
}

// Cluster is three kfake brokers with topics orders (6 partitions),
// billing (4) and audit (2), one record on each partition, a committed
// transaction on orders-0, and two transactions left open, each followed by
// records from an idempotent producer: "stuck-orders" on orders-3 (its
// coordinator answers TRANSACTIONAL_ID_NOT_FOUND: hanging by KIP-664's rule
// once past transaction.max.timeout.ms) and "slow-billing" on billing-1.
// It is a smaller cousin of live's newScenario (live/cluster_test.go),
// which cannot be imported from here.
type Cluster struct {
	C      *kfake.Cluster
	Addrs  []string         // the brokers' listen addresses
	Client *kgo.Client      // a plain client, writing where each record says
	Open   []OpenTxn        // the transactions left open, first offsets set
	Parts  map[string]int32 // partition count by topic
}

// NewCluster starts the Cluster, closed at the test's cleanup.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	f := &Cluster{Parts: map[string]int32{"orders": 6, "billing": 4, "audit": 2}}
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(2, "audit"), kfake.SeedTopics(4, "billing"), kfake.SeedTopics(6, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f.C, f.Addrs = c, c.ListenAddrs()
	f.Open = []OpenTxn{{Topic: "orders", Partition: 3, Leader: 1, TxnID: "stuck-orders"}, {Topic: "billing", Partition: 1, Leader: 2, TxnID: "slow-billing"}}
	for _, o := range f.Open {
		if err := c.MoveTopicPartition(o.Topic, o.Partition, o.Leader); err != nil {
			t.Fatal(err)
		}
	}
	client := func(opts ...kgo.Opt) *kgo.Client { return KfakeClient(t, f.Addrs, opts...) }
	ctx := context.Background()
	f.Client = client()
	var recs []*kgo.Record
	for topic, n := range f.Parts {
		for p := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("seed")})
		}
	}
	if err := f.Client.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	done := client(kgo.TransactionalID("done"))
	if err := done.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := done.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("txn")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := done.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	LeaveOpen(t, f.Addrs, f.Client, f.Open, func(i int) int { return 2 + i })
	// The coordinator has lost stuck-orders: KIP-664's hanging case.
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, TxnID: f.Open[0].TxnID, Err: kerr.TransactionalIDNotFound, Count: -1})
	return f
}

// KfakeClient is a kgo client of the brokers at addrs that writes to the
// partition each record names, closed when the test ends.
func KfakeClient(t testing.TB, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// LeaveOpen begins a transaction of each of open's transactional ids, writes
// one record to its partition, sets its first offset, and leaves it open;
// then after(i) records from plain, an idempotent producer, move the
// partition on past it.
func LeaveOpen(t testing.TB, addrs []string, plain *kgo.Client, open []OpenTxn, after func(i int) int) {
	t.Helper()
	ctx := context.Background()
	for i := range open {
		o := &open[i]
		tx := KfakeClient(t, addrs, kgo.TransactionalID(o.TxnID), kgo.TransactionTimeout(5*time.Minute))
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		r := &kgo.Record{Topic: o.Topic, Partition: o.Partition, Value: []byte("open")}
		if err := tx.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
		o.First = r.Offset
		for range after(i) {
			if err := plain.ProduceSync(ctx, &kgo.Record{Topic: o.Topic, Partition: o.Partition, Value: []byte("after")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// offsets asks the brokers directly, from the test's own client, for every
// partition's high watermark (read_uncommitted) and LSO (read_committed).
func (f *Cluster) Offsets(t testing.TB) (hwm, lso map[string]int64) {
	t.Helper()
	get := func(iso int8) map[string]int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID, req.IsolationLevel = -1, iso
		for topic, n := range f.Parts {
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			for p := range n {
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(context.Background(), f.Client) // kgo splits it per leader
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, rt := range resp.Topics {
			for _, p := range rt.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					t.Fatalf("%s-%d: %v", rt.Topic, p.Partition, err)
				}
				out[fmt.Sprintf("%s-%d", rt.Topic, p.Partition)] = p.Offset
			}
		}
		return out
	}
	return get(0), get(1)
}

// WatchCluster is a kfake broker on loopback holding topic "w" with a
// committed, an aborted and a still open transaction (transactional id
// "open-one"); it returns the address and the open transaction's first
// offset. The open transaction is aborted at cleanup.
func WatchCluster(t testing.TB, opts ...kfake.Opt) (string, int64) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, "w")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	if len(opts) > 0 {
		return addr, -1 // SASL clusters: the workload would need credentials
	}
	mk := func(id string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("w"), kgo.TransactionalID(id),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(5*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	ctx := context.Background()
	a, o := mk("done-one"), mk("open-one")
	for _, end := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort} {
		if err := a.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := a.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}, &kgo.Record{Value: []byte("b")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := a.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	r := &kgo.Record{Value: []byte("open")}
	if err := o.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.EndTransaction(context.Background(), kgo.TryAbort) })
	return addr, r.Offset
}
