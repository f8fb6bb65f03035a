package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader/capture"
	"github.com/txnscope/txnscope/txnindex"
)

// cluster is a real kfake broker on loopback with one topic.
func cluster(t *testing.T, topic string, partitions int32, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()[0]
}

func client(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	// The workload's clients send no KIP-714 telemetry, which kgo starts
	// at some moment after their first response: TestLiveReadOnly must
	// see the watcher's requests only.
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func txnClient(t *testing.T, addr, topic, id string) *kgo.Client {
	return client(t, addr, kgo.DefaultProduceTopic(topic), kgo.TransactionalID(id), kgo.TransactionTimeout(5*time.Minute))
}

// produce writes n records to partition 0 and returns the last offset.
func produce(t *testing.T, cl *kgo.Client, n int) int64 {
	t.Helper()
	last := int64(-1)
	for range n {
		r := &kgo.Record{Value: []byte("v"), Partition: 0}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Error(err)
			return -1
		}
		last = r.Offset
	}
	return last
}

func txn(t *testing.T, cl *kgo.Client, n int, end kgo.TransactionEndTry) int64 {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	last := produce(t, cl, n)
	if err := cl.EndTransaction(context.Background(), end); err != nil {
		t.Fatal(err)
	}
	return last
}

func dial(t *testing.T, cfg Config) *Watcher {
	t.Helper()
	if cfg.From == 0 {
		cfg.From = -1
	}
	w, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// settle polls until the committed consumer reached the high watermark and
// nothing moved during the poll.
func settle(t *testing.T, w *Watcher) Update {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		u, err := w.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		done := true
		for _, p := range u.Partitions {
			if p.Unsettled || p.CommittedPosition < p.EngineLSO || p.WindowEnd < p.ListedHWM {
				done = false
			}
		}
		if done || time.Now().After(deadline) {
			return u
		}
	}
}

// TestLiveTail runs a transactional workload while the watcher polls:
// every produced batch shows up in an update within a second, the
// engine's LSO is what ListOffsets(read_committed) reports, and nothing
// differs between the engine and the broker.
func TestLiveTail(t *testing.T) {
	t.Parallel()
	_, addr := cluster(t, "tail", 1)
	w := dial(t, Config{Brokers: []string{addr}, Topic: "tail", Poll: 20 * time.Millisecond})

	var mu sync.Mutex
	var updates []Update
	seen := make(chan int64, 1024) // window end of each update
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- w.Run(ctx, func(u Update) {
			mu.Lock()
			updates = append(updates, u)
			mu.Unlock()
			if len(u.Partitions) == 1 {
				select {
				case seen <- u.Partitions[0].WindowEnd:
				default:
				}
			}
		})
	}()
	waitFor := func(off int64) {
		t.Helper()
		// The product target is one second; the test bounds hangs only,
		// since a loaded CI machine is slower (no timing in tests).
		limit := time.After(15 * time.Second)
		for {
			select {
			case end := <-seen:
				if end > off {
					return
				}
			case <-limit:
				t.Fatalf("offset %d not in an update within 15 s", off)
			}
		}
	}

	a, b := txnClient(t, addr, "tail", "a"), txnClient(t, addr, "tail", "b")
	idem := client(t, addr, kgo.DefaultProduceTopic("tail"))
	waitFor(txn(t, a, 2, kgo.TryCommit))
	if err := b.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	waitFor(produce(t, b, 2)) // open: pins the LSO
	waitFor(txn(t, a, 3, kgo.TryAbort))
	waitFor(produce(t, idem, 1))
	if err := b.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	waitFor(txn(t, a, 1, kgo.TryCommit))
	waitFor(txn(t, b, 2, kgo.TryCommit))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}

	u := settle(t, w)
	mu.Lock()
	updates = append(updates, u)
	mu.Unlock()
	for _, u := range updates {
		if u.Err != "" {
			t.Errorf("update %d: %s", u.Seq, u.Err)
		}
		if len(u.Mismatches) > 0 {
			t.Errorf("update %d: mismatches %v", u.Seq, u.Mismatches)
		}
	}
	p := u.Partitions[0]
	if p.EngineLSO != p.ListedLSO || p.EngineLSO != p.BrokerLSO || p.EngineLSO != p.HighWatermark || len(p.Open) != 0 {
		t.Errorf("final: engine LSO %d, ListOffsets %d, Fetch %d, HWM %d, open %+v", p.EngineLSO, p.ListedLSO, p.BrokerLSO, p.HighWatermark, p.Open)
	}
	aborted := 0
	for d := range p.Log.Decisions(txnindex.ConsumeOptions{From: p.WindowStart, Isolation: txnindex.ReadCommitted}) {
		if d.Verdict == txnindex.Aborted {
			aborted++
		}
	}
	if aborted == 0 || p.Delivered != 6 {
		t.Errorf("aborted runs %d, delivered %d (want 6)", aborted, p.Delivered)
	}
	t.Logf("%d updates", len(updates))
}

// TestLiveOpenTransactionPinsLSO: the engine and the broker agree on an
// LSO held by an open transaction, which the update lists with its
// transactional id.
func TestLiveOpenTransactionPinsLSO(t *testing.T) {
	t.Parallel()
	_, addr := cluster(t, "pin", 1)
	a, b := txnClient(t, addr, "pin", "alpha"), txnClient(t, addr, "pin", "beta")
	txn(t, a, 2, kgo.TryCommit)
	if err := b.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	first := produce(t, b, 1)
	produce(t, b, 1)
	txn(t, a, 2, kgo.TryAbort)
	w := dial(t, Config{Brokers: []string{addr}, Topic: "pin"})
	u := settle(t, w)
	p := u.Partitions[0]
	if len(u.Mismatches) > 0 || p.EngineLSO != first || p.ListedLSO != first {
		t.Fatalf("LSO engine %d listed %d want %d; mismatches %v", p.EngineLSO, p.ListedLSO, first, u.Mismatches)
	}
	if len(p.Open) != 1 || p.Open[0].TransactionalID != "beta" || p.Open[0].FirstOffset != first || !p.Open[0].PinsLSO || p.Open[0].Hanging {
		t.Fatalf("open: %+v", p.Open)
	}
	want := fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic pin --partition 0 --start-offset %d", addr, first)
	if p.Open[0].AbortCommand != want {
		t.Errorf("abort command %q, want %q", p.Open[0].AbortCommand, want)
	}
	if err := b.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}

// TestLiveSCRAM authenticates with SCRAM-SHA-256; a wrong password fails
// quickly with ErrAuth, and the password is in no error.
func TestLiveSCRAM(t *testing.T) {
	t.Parallel()
	c, addr := cluster(t, "sasl", 1, kfake.EnableSASL(), kfake.Superuser(MechanismSCRAMSHA256, "alice", "correct-horse"))
	var mu sync.Mutex
	keys := map[int16]int{}
	c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		keys[r.Key()]++
		mu.Unlock()
		return nil, nil, false
	})
	w := dial(t, Config{Brokers: []string{addr}, Topic: "sasl", SASL: &SASL{Mechanism: "scram-sha-256", User: "alice", Password: "correct-horse"}})
	if _, err := w.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if keys[int16(kmsg.SASLHandshake)] == 0 || keys[int16(kmsg.SASLAuthenticate)] == 0 {
		t.Errorf("no SASL exchange seen: %v", keys)
	}
	for k := range keys {
		if !readOnlyKeys[k] {
			t.Errorf("sent %s (key %d): not a read-only API", kmsg.NameForKey(k), k)
		}
	}
	mu.Unlock()
	start := time.Now()
	_, err := Dial(context.Background(), Config{Brokers: []string{addr}, Topic: "sasl", From: -1,
		SASL: &SASL{Mechanism: MechanismSCRAMSHA256, User: "alice", Password: "battery-staple"}})
	if !errors.Is(err, ErrAuth) || time.Since(start) > 5*time.Second {
		t.Fatalf("wrong password: %v after %s", err, time.Since(start))
	}
	if strings.Contains(err.Error(), "battery-staple") || strings.Contains(fmt.Sprintf("%v %+v %#v", err, w.cfg, w.cfg), "correct-horse") {
		t.Fatalf("password leaked: %v", err)
	}
	t.Logf("wrong password: %v (%s)", err, time.Since(start).Round(time.Millisecond))
}

// readOnlyKeys are the request keys the watcher may send: Metadata,
// ListOffsets, Fetch, DescribeProducers, ListTransactions,
// DescribeTransactions, DescribeConfigs, the group reads ListGroups,
// OffsetFetch, ConsumerGroupDescribe and DescribeShareGroupOffsets (while
// an LSO lags), and the connection's ApiVersions, SaslHandshake and
// SaslAuthenticate.
var readOnlyKeys = map[int16]bool{3: true, 2: true, 1: true, 61: true, 66: true, 65: true, 32: true, 16: true, 9: true, 69: true, 90: true, 18: true, 17: true, 36: true}

// TestLiveReadOnly records the key of every request the watcher sends
// and checks it against the read-only list: never Produce, JoinGroup,
// OffsetCommit, InitProducerID, FindCoordinator or any other.
func TestLiveReadOnly(t *testing.T) {
	t.Parallel()
	c, addr := cluster(t, "ro", 2)
	a, b := txnClient(t, addr, "ro", "ro-a"), txnClient(t, addr, "ro", "ro-b")
	txn(t, a, 2, kgo.TryCommit)
	txn(t, a, 1, kgo.TryAbort)
	if err := b.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, b, 1)
	// The producers are idle from here on; every request is the watcher's.
	var mu sync.Mutex
	keys := map[int16]int{}
	c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		keys[r.Key()]++
		mu.Unlock()
		return nil, nil, false
	})
	w := dial(t, Config{Brokers: []string{addr}, Topic: "ro", Now: func() time.Time { return time.Now().Add(time.Hour) }})
	for range 3 {
		if _, err := w.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for k, n := range keys {
		if !readOnlyKeys[k] {
			t.Errorf("sent %s (key %d) %d times: not a read-only API", kmsg.NameForKey(k), k, n)
		}
	}
	for _, k := range []int16{1, 2, 3, 61, 66, 65, 32} {
		if keys[k] == 0 {
			t.Errorf("never sent %s: the test would prove little", kmsg.NameForKey(k))
		}
	}
	t.Logf("requests: %v", keys)
}

// TestLiveHanging leaves a transaction open and looks an hour later: past
// transaction.max.timeout.ms. While the coordinator still tracks the
// partition it is not hanging (the coordinator will abort it); once the
// coordinator has lost the transactional id (a DescribeTransactions
// answered TRANSACTIONAL_ID_NOT_FOUND, as after
// transactional.id.expiration.ms) it is hanging by KIP-664's rule, named
// with its transactional id.
func TestLiveHanging(t *testing.T) {
	t.Parallel()
	c, addr := cluster(t, "hang", 1)
	h, g := txnClient(t, addr, "hang", "stuck-producer"), txnClient(t, addr, "hang", "good")
	if err := h.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	first := produce(t, h, 2)
	first--
	txn(t, g, 2, kgo.TryCommit) // the partition moves on
	w := dial(t, Config{Brokers: []string{addr}, Topic: "hang", Now: func() time.Time { return time.Now().Add(time.Hour) }})

	u := settle(t, w)
	p := u.Partitions[0]
	if len(p.Open) != 1 {
		t.Fatalf("open: %+v", p.Open)
	}
	o := p.Open[0]
	if o.TransactionalID != "stuck-producer" || o.Hanging || o.EngineState != string(diagnosis.StateLate) || !strings.Contains(o.Reason, "still tracks") {
		t.Fatalf("coordinator tracking it: %+v", o)
	}

	c.ControlKey(int16(kmsg.DescribeTransactions), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.DescribeTransactionsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range req.TransactionalIDs {
			s := kmsg.NewDescribeTransactionsResponseTransactionState()
			s.TransactionalID, s.ErrorCode = id, kerr.TransactionalIDNotFound.Code
			resp.TransactionStates = append(resp.TransactionStates, s)
		}
		return resp, nil, true
	})
	u, err := w.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	o = u.Partitions[0].Open[0]
	if !o.Hanging || o.TransactionalID != "stuck-producer" || o.FirstOffset != first || !strings.Contains(o.Reason, "KIP-664") {
		t.Fatalf("lost by the coordinator: %+v", o)
	}
	want := fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic hang --partition 0 --start-offset %d", addr, first)
	if o.AbortCommand != want {
		t.Errorf("abort command %q", o.AbortCommand)
	}
	t.Logf("%s", o.Reason)
}

// TestLiveRecordReplay records the fetches to the raw capture format;
// read back and replayed, the broker's read_committed responses give the
// decisions the live view shows.
func TestLiveRecordReplay(t *testing.T) {
	t.Parallel()
	_, addr := cluster(t, "rec", 1)
	a, b := txnClient(t, addr, "rec", "ra"), txnClient(t, addr, "rec", "rb")
	idem := client(t, addr, kgo.DefaultProduceTopic("rec"))
	txn(t, a, 2, kgo.TryCommit)
	if err := b.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, b, 2)
	txn(t, a, 2, kgo.TryAbort)
	produce(t, idem, 1)
	if err := b.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	txn(t, a, 1, kgo.TryCommit)

	var buf bytes.Buffer
	w := dial(t, Config{Brokers: []string{addr}, Topic: "rec", Record: &buf})
	u := settle(t, w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := u.Partitions[0]
	want := delivered(p.Log.Decisions(txnindex.ConsumeOptions{From: p.WindowStart, Isolation: txnindex.ReadCommitted}))

	c, err := capture.ReadRaw(bytes.NewReader(buf.Bytes()), "rec.raw")
	if err != nil || len(c.Problems) > 0 {
		t.Fatal(err, c.Problems)
	}
	var fetches []txnindex.CapturedFetch
	for _, f := range c.Fetches {
		if f.Isolation == txnindex.ReadCommitted {
			if f.Topic != "rec" || f.Partition != 0 {
				t.Fatalf("fetch of %q-%d: topic id not resolved", f.Topic, f.Partition)
			}
			fetches = append(fetches, txnindex.CapturedFetch{Offset: f.FetchOffset, Response: f.Response()})
		}
	}
	got := delivered(txnindex.Replay(fetches, txnindex.ReadCommitted, txnindex.VariantJava, nil))
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("replayed %v, live %v", got, want)
	}
}

func delivered(seq func(func(txnindex.Decision) bool)) []int64 {
	var out []int64
	for d := range seq {
		if d.Verdict == txnindex.Delivered {
			for o := d.From; o <= d.To; o++ {
				out = append(out, o)
			}
		}
	}
	return out
}

// TestLiveDialErrors: an address nothing listens on fails within seconds,
// and a missing topic says so (and is not created by looking at it).
func TestLiveDialErrors(t *testing.T) {
	t.Parallel()
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		start := time.Now()
		_, err = Dial(context.Background(), Config{Brokers: []string{addr}, Topic: "t", From: -1, DialTimeout: time.Second})
		if !errors.Is(err, ErrUnreachable) || time.Since(start) > 5*time.Second {
			t.Fatalf("%v after %s", err, time.Since(start))
		}
		t.Logf("%v (%s)", err, time.Since(start).Round(time.Millisecond))
	})
	t.Run("missing topic", func(t *testing.T) {
		t.Parallel()
		c, addr := cluster(t, "present", 1, kfake.AllowAutoTopicCreation())
		_, err := Dial(context.Background(), Config{Brokers: []string{addr}, Topic: "absent", From: -1})
		if !errors.Is(err, ErrTopicMissing) || !strings.Contains(err.Error(), `"absent"`) {
			t.Fatalf("%v", err)
		}
		if c.TopicInfo("absent") != nil {
			t.Fatal("looking at a missing topic created it")
		}
		_, err = Dial(context.Background(), Config{Brokers: []string{addr}, Topic: "present", Partitions: []int32{7}, From: -1})
		if !errors.Is(err, ErrTopicMissing) {
			t.Fatalf("missing partition: %v", err)
		}
	})
}

// dumpWatcher logs a watcher's window and engine view, for a failure.
func dumpWatcher(t *testing.T, w *Watcher, u Update) {
	t.Helper()
	for i, p := range w.parts {
		t.Logf("part %d start %d next %d seeds %+v rcPos %d", p.id, p.start, p.next, p.seeds, p.rcPos)
		l := u.Partitions[i].Log
		t.Logf("log start %d lso %d txns %+v", l.LogStartOffset, l.LastStableOffset, l.Txns)
		for _, b := range l.Batches {
			t.Logf("  batch %d-%d pid %d ctl %v", b.BaseOffset, b.LastOffset(), b.ProducerID, b.Control())
		}
		t.Logf("rebuilt %+v", l.RebuiltIndex)
	}
}
