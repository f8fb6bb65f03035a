package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/txnindex"
)

const (
	workloads     = 50 // random workloads against kgo
	kcatWorkloads = 12 // of which this many are also read by kcat
)

// topicIDs maps the topics the workloads created to their ids.
var topicIDs sync.Map // string -> [16]byte

// broker is a real kfake cluster on loopback.
type broker struct {
	c    *kfake.Cluster
	addr string
}

func newBroker(t *testing.T) *broker {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &broker{c: c, addr: c.ListenAddrs()[0]}
}

func (b *broker) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// workloadResult is what a workload left on the partition.
type workloadResult struct {
	topic   string
	open    []*kgo.Client // producers whose transaction is still open
	records int
}

// runWorkload writes a random interleaving of transactions from three
// transactional producers (commit, abort, multi-record batches, some left
// open at the end) and non-transactional records from an idempotent
// producer, all to partition 0 of a new topic.
func runWorkload(t *testing.T, b *broker, seed uint64) workloadResult {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, seed*7+1))
	topic := fmt.Sprintf("w%03d", seed)
	admin := b.client(t)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, rt)
	cresp, err := req.RequestWith(ctx, admin)
	if err != nil || len(cresp.Topics) != 1 || cresp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic: %v %+v", err, cresp)
	}
	topicIDs.Store(topic, cresp.Topics[0].TopicID)

	const nTxn = 3
	txns := make([]*kgo.Client, nTxn)
	inTxn := make([]bool, nTxn)
	for i := range txns {
		txns[i] = b.client(t, kgo.DefaultProduceTopic(topic), kgo.TransactionalID(fmt.Sprintf("%s-tx%d", topic, i)),
			kgo.TransactionTimeout(2*time.Minute), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	idem := b.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	res := workloadResult{topic: topic}
	produce := func(cl *kgo.Client, n int, tag string) {
		rs := make([]*kgo.Record, n)
		for i := range rs {
			rs[i] = &kgo.Record{Value: []byte(fmt.Sprintf("%s-%d", tag, i)), Partition: 0}
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", tag, err)
		}
		res.records += n
	}
	steps := 6 + r.IntN(30)
	for s := 0; s < steps; s++ {
		p := r.IntN(nTxn)
		switch op := r.IntN(10); {
		case op < 5:
			if !inTxn[p] {
				if err := txns[p].BeginTransaction(); err != nil {
					t.Fatal(err)
				}
				inTxn[p] = true
			}
			produce(txns[p], 1+r.IntN(4), fmt.Sprintf("s%d-p%d", s, p))
		case op < 8:
			if !inTxn[p] {
				continue
			}
			commit := kgo.TryCommit
			if r.IntN(2) == 0 {
				commit = kgo.TryAbort
			}
			if err := txns[p].EndTransaction(ctx, commit); err != nil {
				t.Fatalf("end txn: %v", err)
			}
			inTxn[p] = false
		default:
			produce(idem, 1+r.IntN(3), fmt.Sprintf("s%d-idem", s))
		}
	}
	// Most workloads end every transaction; one in four leaves one open,
	// which pins the LSO.
	leaveOpen := -1
	if r.IntN(4) == 0 {
		leaveOpen = r.IntN(nTxn)
	}
	for p := range txns {
		if !inTxn[p] {
			continue
		}
		if p == leaveOpen {
			res.open = append(res.open, txns[p])
			continue
		}
		commit := kgo.TryCommit
		if r.IntN(3) == 0 {
			commit = kgo.TryAbort
		}
		if err := txns[p].EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	if len(res.open) == 0 && leaveOpen >= 0 {
		// The chosen producer had nothing open: open one now.
		if err := txns[leaveOpen].BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produce(txns[leaveOpen], 1, "open")
		res.open = append(res.open, txns[leaveOpen])
	}
	return res
}

// rawFetch fetches partition 0 of topic from offset with the given isolation.
func rawFetch(t *testing.T, cl *kgo.Client, topic string, offset int64, iso int8) *kmsg.FetchResponseTopicPartition {
	t.Helper()
	id, _ := topicIDs.Load(topic)
	return testtool.RawFetch(t, cl, topic, id.([16]byte), offset, iso)
}

// readLog fetches every batch read_uncommitted and builds the engine's Log,
// with the broker's high watermark.
func readLog(t *testing.T, cl *kgo.Client, topic string) (*txnindex.Log, *kmsg.FetchResponseTopicPartition) {
	t.Helper()
	var batches []txnindex.Batch
	var pos int64
	var first *kmsg.FetchResponseTopicPartition
	for off := int64(0); ; {
		p := rawFetch(t, cl, topic, off, 0)
		if first == nil {
			first = p
		}
		bs, err := kmsgBatches(p.RecordBatches, pos)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) == 0 {
			if off < p.HighWatermark {
				t.Fatalf("no progress at %d below HWM %d", off, p.HighWatermark)
			}
			break
		}
		for _, b := range bs {
			pos += int64(b.Size)
		}
		batches = append(batches, bs...)
		off = bs[len(bs)-1].LastOffset() + 1
	}
	hwm := first.HighWatermark
	return txnindex.Build(&txnindex.Partition{Topic: topic, Batches: batches, LogStartOffset: -1, HighWatermark: hwm, HighWatermarkSource: "fetch"}), first
}

// engineDelivered is every offset the engine's read_committed consumer of
// variant v delivers from from (Log.Delivered, one offset per element).
func engineDelivered(l *txnindex.Log, from int64, v txnindex.Variant) []int64 {
	var out []int64
	for _, r := range l.Delivered(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted, Variant: v}) {
		for o := r[0]; o <= r[1]; o++ {
			out = append(out, o)
		}
	}
	return out
}

// kgoConsume reads topic with a real kgo read_committed consumer from
// offset, until it has want records and then briefly longer, so that
// records beyond the expectation would show up too.
func kgoConsume(t *testing.T, b *broker, topic string, from int64, want int) []int64 {
	t.Helper()
	cl := b.client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(50*time.Millisecond),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(from)}}))
	defer cl.Close()
	var got []int64
	deadline := time.Now().Add(15 * time.Second)
	extra := time.Time{}
	for {
		if len(got) >= want && extra.IsZero() {
			extra = time.Now().Add(200 * time.Millisecond)
		}
		if !extra.IsZero() && time.Now().After(extra) || time.Now().After(deadline) {
			return got
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r.Offset) })
	}
}

// processFetchPartition delivers what kgo's own filter returns when given
// the broker's read_committed responses, fetch after fetch.
func processFetchPartition(t *testing.T, cl *kgo.Client, topic string, from int64) []int64 {
	t.Helper()
	var got []int64
	off := from
	for range 10_000 {
		p := rawFetch(t, cl, topic, off, 1)
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Topic: topic, Partition: 0, Offset: off, IsolationLevel: kgo.ReadCommitted(),
		}, p, kgo.DefaultDecompressor(), nil)
		for _, r := range fp.Records {
			got = append(got, r.Offset)
		}
		if next <= off {
			return got
		}
		off = next
	}
	t.Fatal("ProcessFetchPartition loop did not end")
	return nil
}

// kcatConsume reads with librdkafka's kcat, read_committed, until it
// reports the end of the partition (-e). librdkafka signals that end only
// when its position equals the end offset (the LSO under read_committed),
// so a consumer positioned above the LSO waits forever without receiving
// anything; for that case wait reads for a fixed time and stops kcat.
func kcatConsume(t *testing.T, kcat, addr, topic string, from int64, wait time.Duration) []int64 {
	t.Helper()
	limit := 20 * time.Second
	if wait > 0 {
		limit = wait
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", topic, "-p", "0", "-o", strconv.FormatInt(from, 10),
		"-e", "-q", "-f", "%o\n", "-X", "isolation.level=read_committed", "-X", "broker.address.family=v4")
	out, err := cmd.Output()
	if err != nil && !(wait > 0 && ctx.Err() != nil) {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kcat: %v: %s", err, stderr)
	}
	var got []int64
	for _, f := range strings.Fields(string(out)) {
		o, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("kcat output %q", f)
		}
		got = append(got, o)
	}
	return got
}

// TestDifferentialRealClients: for every random workload, the offsets the
// engine says a read_committed consumer receives (from the log start and
// from a random seek) equal what kgo delivers, what
// kgo.ProcessFetchPartition returns from the broker's own read_committed
// responses, and, for some workloads, what librdkafka's kcat prints. The
// engine's LSO equals the broker's.
func TestDifferentialRealClients(t *testing.T) {
	if testing.Short() {
		t.Skip("talks to a kfake broker; skipped with -short")
	}
	kcat := testtool.Need(t, "kcat")
	b := newBroker(t)
	reader := b.client(t)
	seed := seedOffset(t)
	var totalOffsets, totalAborted atomic.Int64
	// Workloads run in parallel on their own topics: the consumers spend
	// most of their time waiting on the broker, not computing.
	t.Run("workloads", func(t *testing.T) {
		for i := range workloads {
			t.Run(fmt.Sprintf("w%03d", i+1), func(t *testing.T) {
				t.Parallel()
				offsets, aborted := checkWorkload(t, b, reader, kcat, seed+uint64(i+1), i < kcatWorkloads)
				totalOffsets.Add(offsets)
				totalAborted.Add(aborted)
			})
		}
	})
	if totalAborted.Load() == 0 {
		t.Fatal("no workload aborted anything: the test proves nothing")
	}
	t.Logf("%d workloads, %d offsets decided, %d aborted", workloads, totalOffsets.Load(), totalAborted.Load())
}

func checkWorkload(t *testing.T, b *broker, reader *kgo.Client, kcat string, seed uint64, useKcat bool) (offsets, aborted int64) {
	w := runWorkload(t, b, seed)
	defer func() {
		for _, cl := range w.open {
			if err := cl.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
				t.Logf("ending open transaction: %v", err)
			}
		}
	}()
	l, first := readLog(t, reader, w.topic)
	// Before the deferred abort above, which changes the log on purpose.
	defer logUnchanged(t, reader, w.topic, l)
	rc := rawFetch(t, reader, w.topic, 0, 1)
	if l.LastStableOffset != rc.LastStableOffset {
		t.Fatalf("%s: engine LSO %d, broker LSO %d", w.topic, l.LastStableOffset, rc.LastStableOffset)
	}
	if l.HighWatermark != first.HighWatermark {
		t.Fatalf("%s: HWM %d vs %d", w.topic, l.HighWatermark, first.HighWatermark)
	}
	r := rand.New(rand.NewPCG(seed, 99))
	for _, from := range []int64{0, int64(r.IntN(int(l.LogEndOffset) + 1))} {
		want := engineDelivered(l, from, txnindex.VariantJava)
		for _, v := range []txnindex.Variant{txnindex.VariantLibrdkafka, txnindex.VariantFranzGo} {
			if got := engineDelivered(l, from, v); !slices.Equal(got, want) {
				t.Fatalf("%s from %d: %s variant %v, java %v", w.topic, from, v, got, want)
			}
		}
		if got := processFetchPartition(t, reader, w.topic, from); !slices.Equal(got, want) {
			t.Fatalf("%s from %d: ProcessFetchPartition %v\nengine %v\nlog %v", w.topic, from, got, want, l.Batches)
		}
		if got := kgoConsume(t, b, w.topic, from, len(want)); !slices.Equal(got, want) {
			t.Fatalf("%s from %d: kgo consumer %v\nengine %v", w.topic, from, got, want)
		}
		if useKcat {
			wait := time.Duration(0)
			if from > l.LastStableOffset {
				wait = 2 * time.Second
			}
			if got := kcatConsume(t, kcat, b.addr, w.topic, from, wait); !slices.Equal(got, want) {
				t.Fatalf("%s from %d: kcat %v\nengine %v", w.topic, from, got, want)
			}
		}
	}
	for d := range l.Decisions(txnindex.ConsumeOptions{Isolation: txnindex.ReadCommitted}) {
		offsets += d.Offsets()
		if d.Verdict == txnindex.Aborted {
			aborted += d.Offsets()
		}
	}
	return offsets, aborted
}
