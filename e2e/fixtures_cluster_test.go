package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/txnscope/txnscope/internal/testtool"
)

// The clusters and real files the browser tests use: kfake brokers with
// transactions left open, as internal/cli's tests build them, the real
// files of testdata/realdata, and the watch command's recordings.

// openTxn is a transaction a cluster fixture leaves open.
type openTxn struct {
	topic     string
	partition int32
	leader    int32
	txnID     string
	first     int64 // its first offset
}

// clusterFixture is three kfake brokers with topics orders (6 partitions),
// billing (4) and audit (2), one record on each partition, a committed
// transaction on orders-0, and two transactions left open, each followed by
// records from an idempotent producer: "stuck-orders" on orders-3 (its
// coordinator answers TRANSACTIONAL_ID_NOT_FOUND: hanging by KIP-664's rule
// once past transaction.max.timeout.ms) and "slow-billing" on billing-1.
// It is a smaller cousin of live's newScenario (live/cluster_test.go),
// which cannot be imported from here.
type clusterFixture struct {
	c     *kfake.Cluster
	addrs []string
	cl    *kgo.Client
	open  []openTxn
	parts map[string]int32
}

func newClusterFixture(t *testing.T) *clusterFixture {
	t.Helper()
	f := &clusterFixture{parts: map[string]int32{"orders": 6, "billing": 4, "audit": 2}}
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(2, "audit"), kfake.SeedTopics(4, "billing"), kfake.SeedTopics(6, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f.c, f.addrs = c, c.ListenAddrs()
	f.open = []openTxn{{topic: "orders", partition: 3, leader: 1, txnID: "stuck-orders"}, {topic: "billing", partition: 1, leader: 2, txnID: "slow-billing"}}
	for _, o := range f.open {
		if err := c.MoveTopicPartition(o.topic, o.partition, o.leader); err != nil {
			t.Fatal(err)
		}
	}
	client := func(opts ...kgo.Opt) *kgo.Client { return kfakeClient(t, f.addrs, opts...) }
	ctx := context.Background()
	f.cl = client()
	var recs []*kgo.Record
	for topic, n := range f.parts {
		for p := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("seed")})
		}
	}
	if err := f.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
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
	leaveOpen(t, f.addrs, f.cl, f.open, func(i int) int { return 2 + i })
	// The coordinator has lost stuck-orders: KIP-664's hanging case.
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeTransactions}, TxnID: f.open[0].txnID, Err: kerr.TransactionalIDNotFound, Count: -1})
	return f
}

// kfakeClient is a kgo client of the brokers at addrs that writes to the
// partition each record names, closed when the test ends.
func kfakeClient(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// leaveOpen begins a transaction of each of open's transactional ids, writes
// one record to its partition, sets its first offset, and leaves it open;
// then after(i) records from plain, an idempotent producer, move the
// partition on past it.
func leaveOpen(t *testing.T, addrs []string, plain *kgo.Client, open []openTxn, after func(i int) int) {
	t.Helper()
	ctx := context.Background()
	for i := range open {
		o := &open[i]
		tx := kfakeClient(t, addrs, kgo.TransactionalID(o.txnID), kgo.TransactionTimeout(5*time.Minute))
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		r := &kgo.Record{Topic: o.topic, Partition: o.partition, Value: []byte("open")}
		if err := tx.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
		o.first = r.Offset
		for range after(i) {
			if err := plain.ProduceSync(ctx, &kgo.Record{Topic: o.topic, Partition: o.partition, Value: []byte("after")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// offsets asks the brokers directly, from the test's own client, for every
// partition's high watermark (read_uncommitted) and LSO (read_committed).
func (f *clusterFixture) offsets(t *testing.T) (hwm, lso map[string]int64) {
	t.Helper()
	get := func(iso int8) map[string]int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID, req.IsolationLevel = -1, iso
		for topic, n := range f.parts {
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			for p := range n {
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(context.Background(), f.cl) // kgo splits it per leader
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

// clusterReadKeys are the requests cluster mode may send: the watcher's
// read-only list (live/live_test.go) grown by ListGroups, DescribeGroups,
// OffsetFetch, ConsumerGroupDescribe and DescribeShareGroupOffsets.
var clusterReadKeys = map[int16]bool{
	int16(kmsg.Metadata): true, int16(kmsg.ListOffsets): true, int16(kmsg.Fetch): true,
	int16(kmsg.DescribeProducers): true, int16(kmsg.ListTransactions): true, int16(kmsg.DescribeTransactions): true,
	int16(kmsg.DescribeConfigs): true, int16(kmsg.ApiVersions): true, int16(kmsg.SASLHandshake): true, int16(kmsg.SASLAuthenticate): true,
	int16(kmsg.ListGroups): true, int16(kmsg.DescribeGroups): true, int16(kmsg.OffsetFetch): true,
	int16(kmsg.ConsumerGroupDescribe): true, int16(kmsg.DescribeShareGroupOffsets): true,
}

// watchCluster is a kfake broker on loopback holding topic "w" with a
// committed, an aborted and a still open transaction (transactional id
// "open-one"); it returns the address and the open transaction's first
// offset. The open transaction is aborted at cleanup.
func watchCluster(t *testing.T, opts ...kfake.Opt) (string, int64) {
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

// interleavedClients is the diagnosis's sentence on the interleaved demo's
// clients: its aborted transaction (offsets 2-4, and two more records) and
// its markers reach kafka-go and kafka-python.
const interleavedClients = "kafka-go and kafka-python would deliver 5 aborted records and 3 control markers from this partition; the Java consumer, librdkafka, franz-go and kafkajs none of them"

// realdata holds the real files the tests read (testdata/realdata/README.md).
const realdata = "../testdata/realdata"

// uploadSegment is the real file the upload tests send: a segment of 14
// batches from 13 idempotent producers (BiggerBrain/kafka, in
// testdata/realdata).
var uploadSegment = filepath.Join(realdata, "BiggerBrain_kafka/data/lsx1-0/00000000000000000000.log")

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	testtool.NeedDir(t, realdata)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sourceIDs are the ids of the sources a server lists.
func sourceIDs(t *testing.T, s *served) []string {
	t.Helper()
	var body struct{ Sources []struct{ ID string } }
	getJSONInto(t, s.url("/api/v1/sources"), &body)
	var ids []string
	for _, src := range body.Sources {
		ids = append(ids, src.ID)
	}
	return ids
}

// runWatchArgs runs `txnscope watch ARGS` (cli.Run) and returns its
// output, and its stderr as the error when it fails.
func runWatchArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	code, out, errOut := runArgs(t, append([]string{"watch"}, args...)...)
	if code != exitOK {
		return out, fmt.Errorf("watch: exit %d: %s", code, errOut)
	}
	return out, nil
}
