package difftest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// listOffset asks the broker for partition 0's latest offset under an
// isolation level: the LSO for read_committed, the HWM otherwise.
func listOffset(t *testing.T, cl *kgo.Client, topic string, iso int8) int64 {
	t.Helper()
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

// TestDiagnoseStuckLSOOnBroker leaves a transaction open while other
// producers commit and abort, and checks that the diagnosis of what the
// broker holds names the pinning producer and first offset, reports the LSO
// ListOffsets(read_committed) gives, and prints the abort command with that
// start offset; after the producer aborts, the LSO moves and the diagnosis
// is clear.
func TestDiagnoseStuckLSOOnBroker(t *testing.T) {
	b := newBroker(t)
	ctx := context.Background()
	topic := "stuck"
	admin := b.client(t)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, rt)
	cresp, err := req.RequestWith(ctx, admin)
	if err != nil || cresp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v", err)
	}
	topicIDs.Store(topic, cresp.Topics[0].TopicID)
	mk := func(opts ...kgo.Opt) *kgo.Client {
		return b.client(t, append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.TransactionTimeout(5 * time.Minute)}, opts...)...)
	}
	hang, good, bad := mk(kgo.TransactionalID("hang")), mk(kgo.TransactionalID("good")), mk(kgo.TransactionalID("bad"))
	idem := mk()
	prod := func(cl *kgo.Client, n int) int64 {
		var first int64 = -1
		for range n {
			r := &kgo.Record{Value: []byte("v")}
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
	start := prod(hang, 3)
	txn(bad, 2, kgo.TryAbort)
	txn(good, 1, kgo.TryCommit)
	prod(idem, 1)

	l, _ := readLog(t, admin, topic)
	lso := listOffset(t, admin, topic, 1)
	if l.LastStableOffset != lso || lso != start {
		t.Fatalf("engine LSO %d, ListOffsets(read_committed) %d, open transaction starts at %d", l.LastStableOffset, lso, start)
	}
	d := l.Diagnose(txnindex.DiagnoseOptions{Now: time.Now(), Position: 0, Bootstrap: b.addr})
	if d.PinnedBy == nil || d.PinnedBy.FirstOffset != start || len(d.OpenTransactions) != 1 {
		t.Fatalf("diagnosis: %+v", d)
	}
	want := fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic %s --partition 0 --start-offset %d", b.addr, topic, start)
	if d.PinnedBy.AbortCommand != want || d.PinnedBy.State != txnindex.StateOpen || d.PinnedBy.Discards.Records != 3 {
		t.Errorf("pinned by %+v", d.PinnedBy)
	}
	// Seen from far in the future the same transaction is hanging.
	if late := l.Diagnose(txnindex.DiagnoseOptions{Now: time.Now().Add(time.Hour), Position: -1}); !late.Hanging() {
		t.Errorf("an hour later: %+v", late.PinnedBy)
	}
	// Who did it: the producer id the broker's DescribeProducers reports.
	dp := kmsg.NewPtrDescribeProducersRequest()
	dt := kmsg.NewDescribeProducersRequestTopic()
	dt.Topic, dt.Partitions = topic, []int32{0}
	dp.Topics = append(dp.Topics, dt)
	dresp, err := dp.RequestWith(ctx, admin)
	if err != nil || len(dresp.Topics) != 1 || len(dresp.Topics[0].Partitions) != 1 {
		t.Fatalf("DescribeProducers: %v %+v", err, dresp)
	}
	{
		found := false
		for _, ap := range dresp.Topics[0].Partitions[0].ActiveProducers {
			if ap.CurrentTxnStartOffset == start && txnindex.ProducerID(ap.ProducerID) == d.PinnedBy.ProducerID {
				found = true
			}
		}
		if !found {
			t.Errorf("DescribeProducers does not show producer %d open at %d: %+v", d.PinnedBy.ProducerID, start, dresp.Topics[0].Partitions[0].ActiveProducers)
		}
	}

	if err := hang.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	l, _ = readLog(t, admin, topic)
	lso = listOffset(t, admin, topic, 1)
	d = l.Diagnose(txnindex.DiagnoseOptions{Now: time.Now(), Position: -1})
	if d.PinnedBy != nil || lso != l.HighWatermark || l.LastStableOffset != lso {
		t.Fatalf("after abort: LSO %d (broker %d), HWM %d, pinned by %+v", l.LastStableOffset, lso, l.HighWatermark, d.PinnedBy)
	}
	if !strings.Contains(d.Runbook(), "clear") {
		t.Errorf("runbook: %s", d.Runbook())
	}
}
