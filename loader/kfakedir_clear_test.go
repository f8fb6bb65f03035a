package loader

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestKfakeDataDirStuckThenClear: a kfake broker's data directory with a
// transaction left open diagnoses as pinned at the broker's LSO; after the
// cluster restarts on the same directory and a new producer instance with
// the same transactional.id fences the old one (InitProducerId makes the
// coordinator abort the ongoing transaction, as a restarted application
// does), the directory diagnoses clear at the broker's LSO, which has
// moved to the high watermark.
func TestKfakeDataDirStuckThenClear(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	const topic = "kfd-clear"
	run := func(work func(client func(...kgo.Opt) *kgo.Client, reader *kgo.Client) (lso, hwm int64)) (lso, hwm int64) {
		t.Helper()
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.SyncWrites(), kfake.SeedTopics(1, topic))
		if err != nil {
			t.Fatal(err)
		}
		var clients []*kgo.Client
		client := func(opts ...kgo.Opt) *kgo.Client {
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(topic),
				kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, cl)
			return cl
		}
		lso, hwm = work(client, client())
		// kgo does not end an open transaction on Close; close the
		// clients before the cluster so they do not wait on retries.
		for _, cl := range clients {
			cl.Close()
		}
		c.Close()
		return lso, hwm
	}
	produce := func(cl *kgo.Client, n int, tag string) {
		t.Helper()
		for i := range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", tag, i)}).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", tag, err)
			}
		}
	}
	txn := func(cl *kgo.Client, n int, tag string, end *kgo.TransactionEndTry) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produce(cl, n, tag)
		if end != nil {
			if err := cl.EndTransaction(ctx, *end); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit, abort := kgo.TryCommit, kgo.TryAbort
	brokerOffsets := func(reader *kgo.Client) (lso, hwm int64) {
		t.Helper()
		mreq := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(topic)
		mreq.Topics = append(mreq.Topics, mt)
		mresp, err := mreq.RequestWith(ctx, reader)
		if err != nil || len(mresp.Topics) != 1 || mresp.Topics[0].ErrorCode != 0 {
			t.Fatalf("metadata: %v %+v", err, mresp)
		}
		p := kfdFetch(t, reader, mresp.Topics[0].TopicID, 0, 1)
		return p.LastStableOffset, p.HighWatermark
	}
	diagnose := func() (*txnindex.Log, *diagnosis.Diagnosis) {
		t.Helper()
		ps, err := OpenKfakeDir(dir)
		if err != nil || len(ps) != 1 {
			t.Fatalf("OpenKfakeDir: %v (%d partitions)", err, len(ps))
		}
		l := ps[0].Build()
		return l, present.Diagnose(l, diagnosis.Options{Position: -1, Bootstrap: "kfake:9092"})
	}

	var start int64
	lso, hwm := run(func(client func(...kgo.Opt) *kgo.Client, reader *kgo.Client) (int64, int64) {
		good, bad, open := client(kgo.TransactionalID("good")), client(kgo.TransactionalID("bad")), client(kgo.TransactionalID("open"))
		txn(good, 2, "g", &commit)
		txn(open, 3, "open", nil)
		txn(bad, 2, "b", &abort)
		txn(good, 1, "g2", &commit)
		lso, hwm := brokerOffsets(reader)
		start = lso
		return lso, hwm
	})
	if lso >= hwm {
		t.Fatalf("broker LSO %d, HWM %d: the open transaction should pin it", lso, hwm)
	}
	l, d := diagnose()
	if d.LastStableOffset != lso || d.PinnedBy == nil || d.PinnedBy.FirstOffset != start ||
		!strings.HasSuffix(d.PinnedBy.AbortCommand, fmt.Sprintf("--start-offset %d", start)) {
		t.Fatalf("stuck: diagnosis LSO %d (broker %d), pinned by %+v", d.LastStableOffset, lso, d.PinnedBy)
	}
	before := l.LastStableOffset

	lso, hwm = run(func(client func(...kgo.Opt) *kgo.Client, reader *kgo.Client) (int64, int64) {
		// The new instance's first transaction makes kgo send
		// InitProducerId, which fences the old epoch and aborts its
		// transaction.
		again := client(kgo.TransactionalID("open"))
		txn(again, 1, "again", &commit)
		return brokerOffsets(reader)
	})
	if lso != hwm || lso <= before {
		t.Fatalf("after fencing: broker LSO %d, HWM %d (was %d)", lso, hwm, before)
	}
	_, d = diagnose()
	if d.PinnedBy != nil || d.LastStableOffset != lso || len(d.OpenTransactions) != 0 || !strings.Contains(present.Runbook(d), "clear") {
		t.Fatalf("after fencing: LSO %d (broker %d), pinned by %+v\n%s", d.LastStableOffset, lso, d.PinnedBy, present.Runbook(d))
	}
}
