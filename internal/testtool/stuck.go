package testtool

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// StuckPartition fills partition 0 of topic on the broker at addr with the
// stuck-LSO workload: idempotent records, a committed transaction, then a
// transaction of producer "hang" left open while "bad" aborts one, "good"
// commits another and more idempotent records follow. It returns the open
// transaction's first offset and the client that holds it, to end it with.
// The transaction timeout is long enough that the broker does not end it
// during a test.
func StuckPartition(t testing.TB, addr, topic string) (start int64, hang *kgo.Client) {
	t.Helper()
	ctx := context.Background()
	mk := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation(),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(5 * time.Minute)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	hang, good, bad, idem := mk(kgo.TransactionalID("hang")), mk(kgo.TransactionalID("good")), mk(kgo.TransactionalID("bad")), mk()
	prod := func(cl *kgo.Client, n int) int64 {
		first := int64(-1)
		for i := range n {
			r := &kgo.Record{Value: []byte(fmt.Sprint(i))}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if first < 0 {
				first = r.Offset
			}
		}
		return first
	}
	txn := func(cl *kgo.Client, n int, end kgo.TransactionEndTry) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		prod(cl, n)
		if err := cl.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	prod(idem, 2)
	txn(good, 2, kgo.TryCommit)
	if err := hang.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	start = prod(hang, 3)
	txn(bad, 2, kgo.TryAbort)
	txn(good, 1, kgo.TryCommit)
	prod(idem, 1)
	return start, hang
}

// ListOffsets returns partition 0's LSO (ListOffsets with read_committed)
// and high watermark (read_uncommitted), as the broker reports them.
func ListOffsets(t testing.TB, cl *kgo.Client, topic string) (lso, hwm int64) {
	t.Helper()
	get := func(iso int8) int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.IsolationLevel, req.ReplicaID = iso, -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("list offsets: %v %+v", err, resp)
		}
		return resp.Topics[0].Partitions[0].Offset
	}
	return get(1), get(0)
}

// TxnStartProducer returns the producer id DescribeProducers shows with a
// transaction open at start on partition 0 of topic, failing the test when
// there is none.
func TxnStartProducer(t testing.TB, cl *kgo.Client, topic string, start int64) int64 {
	t.Helper()
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("DescribeProducers: %v %+v", err, resp)
	}
	for _, ap := range resp.Topics[0].Partitions[0].ActiveProducers {
		if ap.CurrentTxnStartOffset == start {
			return ap.ProducerID
		}
	}
	t.Fatalf("DescribeProducers shows no transaction open at %d: %+v", start, resp.Topics[0].Partitions[0].ActiveProducers)
	return -1
}
