package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// The helpers the server's tests share. The fixtures (watchCluster,
// shapeBatch, writeHostileDir, writeJoinLogDir) build the same inputs as
// internal/cli's tests of the same names, so that a page and the command
// are tested on one story.

// realdata holds the real files the tests read (testdata/realdata/README.md).
const realdata = "../testdata/realdata"

// serveErr is New's error for serve's default options changed by set, nil
// when the server starts (it is then closed).
func serveErr(t *testing.T, set ...func(*Options)) error {
	t.Helper()
	o := DefaultOptions()
	o.Addr, o.Big = "127.0.0.1:0", false
	for _, f := range set {
		f(&o)
	}
	s, err := New(context.Background(), o)
	if err == nil {
		s.Close()
	}
	return err
}

// writeScenario builds the scenario file name into the log directory dir,
// as `txnscope scenario build NAME --out DIR` does.
func writeScenario(t *testing.T, name, dir string) {
	t.Helper()
	sc, err := scenario.ParseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sc.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's writes and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func getPage(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %s", u, resp.Status, b)
	}
	return string(b)
}

func getJSONInto(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// watchCluster is a kfake broker on loopback holding topic "w" with a
// committed, an aborted and a still open transaction (transactional id
// "open-one"); it returns the address and the open transaction's first
// offset. The open transaction is aborted at cleanup.
func watchCluster(t *testing.T) (string, int64) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "w"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
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

// recordPoll writes the fetch exchanges of one poll of topic's partition 0
// at addr to file, a raw capture, as `txnscope watch --once --record FILE`
// does.
func recordPoll(t *testing.T, addr, topic, file string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	w, err := live.Dial(ctx, live.Config{Brokers: []string{addr}, Topic: topic, Partitions: []int32{0}, From: -1, Record: f})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Poll(ctx); err != nil {
		w.Close()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

var castagnoliTab = crc32.MakeTable(crc32.Castagnoli)

// shapeBatch is one batch of a test partition: data (ctrl < 0, n records
// at consecutive offsets) or an end-transaction marker (ctrl 0 ABORT, 1
// COMMIT) carrying coord.
type shapeBatch struct {
	base  int64
	pid   int64
	epoch int16
	txn   bool
	ctrl  int
	n     int
	ts    int64
	coord int32
}

// encode is the batch as a broker writes it: v2, kmsg-encoded, CRC-32C.
func (b shapeBatch) encode() []byte {
	var recs []byte
	rb := kmsg.RecordBatch{FirstOffset: b.base, Magic: 2, FirstTimestamp: b.ts, MaxTimestamp: b.ts, ProducerID: b.pid,
		ProducerEpoch: b.epoch, FirstSequence: 0}
	if b.pid < 0 {
		rb.ProducerEpoch, rb.FirstSequence = -1, -1
	}
	if b.txn {
		rb.Attributes = 0x10
	}
	if b.ctrl >= 0 {
		rb.Attributes, rb.FirstSequence = 0x30, -1
		key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(b.ctrl))
		val := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), uint32(b.coord))
		r := kmsg.Record{Key: key, Value: val}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs, rb.NumRecords = r.AppendTo(nil), 1
	} else {
		for i := 0; i < b.n; i++ {
			r := kmsg.Record{OffsetDelta: int32(i), Key: []byte(fmt.Sprintf("k%d", b.base+int64(i))), Value: []byte("v")}
			r.Length = int32(len(r.AppendTo(nil)) - 1)
			recs = r.AppendTo(recs)
		}
		rb.NumRecords, rb.LastOffsetDelta = int32(b.n), int32(b.n-1)
	}
	rb.Records = recs
	rb.Length = int32(49 + len(recs))
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], castagnoliTab))
	return out
}

// writeHostileDir writes DIR/<topic>-0 holding a stuck partition: producer
// 7's transaction from offset 0, a year older than now, then 3 records
// (LSO 0, log end 5) of a plain producer, so the transaction is hanging
// (KIP-664).
func writeHostileDir(t *testing.T, topic string, now time.Time) string {
	t.Helper()
	old := now.Add(-365 * 24 * time.Hour).UnixMilli()
	var log []byte
	for _, b := range []shapeBatch{
		{base: 0, pid: 7, epoch: 1, txn: true, ctrl: -1, n: 2, ts: old},
		{base: 2, pid: -1, ctrl: -1, n: 3, ts: now.Add(-time.Minute).UnixMilli()},
	} {
		log = append(log, b.encode()...)
	}
	pdir := filepath.Join(t.TempDir(), topic+"-0")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "00000000000000000000.log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	return pdir
}

// joinStory is the stuck-LSO incident the internal-topic join answers:
// zombie-tx's transaction (offsets 3-5 of orders-0) never ends while the
// partition moves on; group orders-app waits at the LSO, audit still has
// records to read before it, and late-reader (a read_uncommitted
// consumer) is past it.
const joinStory = `topic orders partition 0
producer billing transactional id 5
producer zombie transactional id 6
begin billing
send billing 2
commit billing
begin zombie
send zombie 3
begin billing
send billing 2
commit billing
plain 3
`

// writeJoinLogDir writes joinStory's log dir: orders-0, the
// __consumer_offsets partitions of its groups and the __transaction_state
// partitions of both transactional ids, all kmsg-encoded as the
// coordinators write them. zombieParts are the partitions zombie-tx's
// coordinator lists for its Ongoing transaction.
func writeJoinLogDir(t *testing.T, zombieParts ...txnindex.TopicPartition) string {
	t.Helper()
	dir := t.TempDir()
	if err := scenario.WriteLogDir(dir, joinLogDirParts(t, nil, zombieParts...)...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// joinLogDirParts are writeJoinLogDir's partitions, with more groups'
// __consumer_offsets batches (by group) added to theirs.
func joinLogDirParts(t *testing.T, more map[string][]scenario.InternalBatch, zombieParts ...txnindex.TopicPartition) []*scenario.Built {
	t.Helper()
	s, err := scenario.Parse(strings.NewReader(joinStory), "join.txn")
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	const ts = 1_767_225_600_000
	parts := []*scenario.Built{data}
	groups := map[string][]scenario.InternalBatch{
		"orders-app":  {scenario.CoordinatorBatch(scenario.GroupMetadataRecord("orders-app", 1, ts), scenario.OffsetCommitRecord("orders-app", "orders", 0, 3, 0, "", ts+1))},
		"audit":       {scenario.CoordinatorBatch(scenario.OffsetCommitRecord("audit", "orders", 0, 0, 0, "", ts+2))},
		"late-reader": {scenario.CoordinatorBatch(scenario.OffsetCommitRecord("late-reader", "orders", 0, 9, 0, "", ts+3))},
	}
	maps.Copy(groups, more)
	byPart := map[int32][]scenario.InternalBatch{}
	for g, bs := range groups {
		n := internaltopic.PartitionFor(g, internaltopic.DefaultConsumerOffsetsPartitions)
		byPart[n] = append(byPart[n], bs...)
	}
	for n, bs := range byPart {
		b, err := scenario.BuildInternal(scenario.ConsumerOffsetsTopic, n, bs)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	billing := txnindex.TxnCoordinatorState{TransactionalID: "billing-tx", ProducerID: 5, PreviousProducerID: -1, NextProducerID: -1,
		NextProducerEpoch: -1, State: txnindex.TxnStatusCompleteCommit, TimeoutMs: 60000, StartTimestamp: ts, LastUpdateTimestamp: ts + 5}
	txnParts := map[int32][]scenario.InternalBatch{}
	add := func(id string, recs ...scenario.InternalRecord) {
		n := internaltopic.PartitionFor(id, internaltopic.DefaultTransactionStatePartitions)
		txnParts[n] = append(txnParts[n], scenario.CoordinatorBatch(recs...))
	}
	add("billing-tx", scenario.TxnStateRecord(billing))
	add("zombie-tx", scenario.OngoingTxnStates("zombie-tx", 6, 0, ts, zombieParts...)...)
	for n, bs := range txnParts {
		b, err := scenario.BuildInternal(scenario.TransactionStateTopic, n, bs)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	return parts
}
