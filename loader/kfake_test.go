package loader

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/txnindex"
)

// TestKfakeTransactions: no public segment holds an ABORT marker, so a
// kfake broker and kgo transactional producers make one. The raw fetch
// response's records go through ParseRecordSet; the markers must come out
// as ABORT/COMMIT with the producer's id, every record must match kgo's own
// decoding, and the aborted transactions the broker lists for a
// read_committed fetch must be the ones txnindex.Build rebuilds from the
// parsed batches.
func TestKfakeTransactions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	opts := []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"),
		kgo.MaxVersions(kversion.V3_0_0()), // Fetch v12: topics by name
	}
	txA, err := kgo.NewClient(append(opts, kgo.TransactionalID("a"), kgo.ProducerBatchCompression(kgo.ZstdCompression()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Close()
	plain, err := kgo.NewClient(append(opts, kgo.ProducerBatchCompression(kgo.SnappyCompression()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()

	// aborted, committed, aborted, with plain writes in between.
	for i, end := range []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit, kgo.TryAbort} {
		if err := txA.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		recs := []*kgo.Record{{Value: fmt.Appendf(nil, "txn %d a", i)}, {Value: fmt.Appendf(nil, "txn %d b", i), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}}}
		if err := txA.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := plain.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: fmt.Appendf(nil, "plain %d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := txA.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}

	fetch := func(iso int8) *kmsg.FetchResponseTopicPartition {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.IsolationLevel = -1, 100, 1<<20, iso
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, plain)
		if err != nil {
			t.Fatal(err)
		}
		p := &resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("fetch error %d", p.ErrorCode)
		}
		return p
	}
	rp := fetch(0)
	batches, errs := ParseRecordSet(rp.RecordBatches, "kfake t-0")
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	var controls []txnindex.ControlType
	var got []Record
	var magics []int8
	for _, b := range batches {
		if b.IsControl() {
			controls = append(controls, b.Control())
			if !b.IsTransactional() || b.ProducerID < 0 || b.Records != 1 {
				t.Errorf("marker %+v", b)
			}
		}
		rs, err := RecordsOf(rp.RecordBatches, b, "kfake t-0")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rs...)
		for range rs {
			magics = append(magics, 2)
		}
	}
	if want := []txnindex.ControlType{txnindex.ControlAbort, txnindex.ControlCommit, txnindex.ControlAbort}; !slices.Equal(controls, want) {
		t.Errorf("markers %v, want %v", controls, want)
	}
	compareRecords(t, "kfake", got, magics, kgoRecords(t, rp.RecordBatches))

	l := txnindex.Build(&txnindex.Partition{Batches: batches, LogStartOffset: -1, HighWatermark: -1})
	var rebuilt [][2]int64
	for _, e := range l.RebuiltIndex[0] {
		rebuilt = append(rebuilt, [2]int64{int64(e.ProducerID), e.FirstOffset})
	}
	var listed [][2]int64
	for _, a := range fetch(1).AbortedTransactions {
		listed = append(listed, [2]int64{a.ProducerID, a.FirstOffset})
	}
	if len(rebuilt) != 2 || !slices.Equal(rebuilt, listed) {
		t.Errorf("aborted transactions: rebuilt from parsed batches %v, broker lists %v", rebuilt, listed)
	}
}
