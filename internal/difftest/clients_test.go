package difftest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/txnindex"
)

// npmDir is where `make deps` installs kafkajs (npm install --prefix DIR
// kafkajs@2.2.4): $TXNSCOPE_NPM, else $TMPDIR/txnscope-npm.
func npmDir() string {
	if d := os.Getenv("TXNSCOPE_NPM"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "txnscope-npm")
}

// needKafkaJS returns node's path and the node_modules holding kafkajs
// 2.2.4; the test skips without them, and fails when CI=true.
func needKafkaJS(t *testing.T) (node, modules string) {
	t.Helper()
	node = testtool.Need(t, "node")
	modules = filepath.Join(npmDir(), "node_modules")
	b, err := os.ReadFile(filepath.Join(modules, "kafkajs", "package.json"))
	if err == nil && !strings.Contains(string(b), `"version": "2.2.4"`) {
		err = errors.New("not version 2.2.4")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kafkajs 2.2.4 is required (CI=true) in %s: %v; run `make deps`", modules, err)
		}
		t.Skipf("kafkajs 2.2.4 not installed in %s (%v); run `make deps`", modules, err)
	}
	return node, modules
}

// jsConsume reads partition 0 of topic with a real kafkajs 2.2.4 consumer
// (testdata/kafkajs_consume.js) from offset from, asking for maxBytes per
// partition, with eachMessage or eachBatch, and returns the offsets it
// delivered, and whether it crashed (a batch it cannot decompress). It
// stops shortly after delivering last (the offset the test expects last,
// -1 for none), else after clientIdle without a delivery.
func jsConsume(t *testing.T, node, modules, addr, topic string, from int64, maxBytes int, eachBatch bool, last int64) ([]int64, bool) {
	t.Helper()
	mode := "eachMessage"
	if eachBatch {
		mode = "eachBatch"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "kafkajs_consume.js"), addr, topic,
		strconv.FormatInt(from, 10), strconv.Itoa(maxBytes), mode, strconv.FormatInt(clientIdle.Milliseconds(), 10), strconv.FormatInt(last, 10))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.Output()
	crashed := false
	if err != nil {
		var stderr string
		ee, ok := err.(*exec.ExitError)
		if ok {
			stderr = string(ee.Stderr)
		}
		if !ok || ee.ExitCode() != 3 || !strings.Contains(stderr, "KafkaJSNotImplemented") {
			t.Fatalf("kafkajs: %v: %s", err, stderr)
		}
		crashed = true
	}
	return parseOffsets(t, string(out)), crashed
}

func parseOffsets(t *testing.T, s string) []int64 {
	t.Helper()
	var got []int64
	for _, f := range strings.Fields(s) {
		o, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("offset %q", f)
		}
		got = append(got, o)
	}
	return got
}

// clientIdle is how long a consumer must deliver nothing before the tests
// take it to have reached the end, unless it delivered the offset they
// expect last (then lastGrace more shows any extra). Generous: a loaded
// machine can stall a consumer between fetches.
const (
	clientIdle = 3 * time.Second
	lastGrace  = 300 * time.Millisecond
)

// waitFor is how long to wait for the next message having delivered got
// when last is the offset expected last.
func waitFor(got []int64, last int64) time.Duration {
	if n := len(got); n > 0 && got[n-1] >= last && last >= 0 {
		return lastGrace
	}
	return clientIdle
}

// lastOf is the last element of want, -1 if none.
func lastOf(want []int64) int64 {
	if len(want) == 0 {
		return -1
	}
	return want[len(want)-1]
}

// goConsume reads partition 0 of topic with a real segmentio/kafka-go
// Reader, IsolationLevel ReadCommitted, from offset from, until no message
// comes for a while (waitFor), and returns the offsets it delivered
// (control records among them).
func goConsume(t *testing.T, addr, topic string, from int64, maxBytes int, last int64) []int64 {
	t.Helper()
	r := kafkago.NewReader(kafkago.ReaderConfig{
		Brokers: []string{addr}, Topic: topic, Partition: 0,
		IsolationLevel: kafkago.ReadCommitted, MaxBytes: maxBytes, MaxWait: 50 * time.Millisecond,
	})
	defer r.Close()
	if err := r.SetOffset(from); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor(got, last))
		m, err := r.FetchMessage(ctx)
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return got
			}
			t.Fatalf("kafka-go: %v", err)
		}
		got = append(got, m.Offset)
	}
}

// saramaConsume reads partition 0 of topic with a real IBM/sarama
// partition consumer, IsolationLevel ReadCommitted, asking for maxBytes per
// partition (Consumer.Fetch.Default; the request-wide limit stays
// MaxResponseSize), from offset from, until no message comes for a while
// (waitFor).
func saramaConsume(t *testing.T, addr, topic string, from int64, maxBytes int32, last int64) []int64 {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	cfg.Consumer.Fetch.Default = maxBytes
	cfg.Consumer.MaxWaitTime = 50 * time.Millisecond
	cfg.Consumer.Return.Errors = true
	c, err := sarama.NewConsumer([]string{addr}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, 0, from)
	if err != nil {
		t.Fatalf("sarama from %d: %v", from, err)
	}
	defer pc.Close()
	var got []int64
	for {
		select {
		case m := <-pc.Messages():
			got = append(got, m.Offset)
		case err := <-pc.Errors():
			t.Fatalf("sarama: %v", err)
		case <-time.After(waitFor(got, last)):
			return got
		}
	}
}

// pythonConsume reads partition 0 of topic with a real kafka-python 2.0
// consumer (testdata/kafka_python_consume.py, Debian's python3-kafka)
// from offset from, asking for maxBytes per partition, and returns the
// offsets it delivered (it reads uncommitted: it has no other level).
func pythonConsume(t *testing.T, python, addr, topic string, from int64, maxBytes int, last int64) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "kafka_python_consume.py"), addr, topic,
		strconv.FormatInt(from, 10), strconv.Itoa(maxBytes), strconv.FormatInt(clientIdle.Milliseconds(), 10), strconv.FormatInt(last, 10))
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kafka-python: %v: %s", err, stderr)
	}
	return parseOffsets(t, string(out))
}

// needKafkaPython returns the python3 whose kafka module is kafka-python
// 2.0 with the snappy, lz4 and zstandard codecs (Debian's python3-kafka,
// python3-snappy, python3-lz4, python3-zstandard, which `make deps`
// installs); the test skips without it, and fails when CI=true.
func needKafkaPython(t *testing.T) string {
	t.Helper()
	const python = "/usr/bin/python3"
	out, err := exec.Command(python, "-c", "import kafka, snappy, lz4.frame, zstandard; print(kafka.__version__)").Output()
	if err == nil && !strings.HasPrefix(string(out), "2.0.") {
		err = fmt.Errorf("kafka-python %s, not 2.0", strings.TrimSpace(string(out)))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kafka-python 2.0 with its codecs is required (CI=true): %v; run `make deps`", err)
		}
		t.Skipf("kafka-python 2.0 with its codecs not installed (%v); run `make deps`", err)
	}
	return python
}

// engineClient is every offset the engine's variant v delivers from from,
// reading read_committed with per-partition fetches of maxBytes and kfake's
// aborted lists.
func engineClient(l *txnindex.Log, from int64, v txnindex.Variant, maxBytes int32, eachBatch bool) []int64 {
	var out []int64
	for _, r := range l.Delivered(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted, Variant: v,
		MaxBytes: maxBytes, EachBatch: eachBatch, AbortedToReadEnd: true}) {
		for o := r[0]; o <= r[1]; o++ {
			out = append(out, o)
		}
	}
	return out
}

// step is one write of a literal scenario: n records in producer p's
// transaction (opening it), its COMMIT or ABORT, or n plain records.
type step struct {
	p  int    // transactional producer 0 or 1; -1: the idempotent producer
	n  int    // records written
	op string // "data", "commit", "abort"
}

func data(p, n int) step { return step{p: p, n: n, op: "data"} }
func abort(p int) step   { return step{p: p, op: "abort"} }
func commit(p int) step  { return step{p: p, op: "commit"} }
func plain(n int) step   { return step{p: -1, n: n, op: "data"} }

// writeScenario writes steps to partition 0 of a new topic, one batch per
// data step, uncompressed unless codec says otherwise, and returns the
// topic.
func writeScenario(t *testing.T, b *broker, name string, steps []step, codec ...kgo.CompressionCodec) string {
	t.Helper()
	ctx := context.Background()
	topic := "lit-" + name
	admin := b.client(t)
	createTopic(t, admin, topic)
	if len(codec) == 0 {
		codec = []kgo.CompressionCodec{kgo.NoCompression()}
	}
	opts := []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(codec...)}
	var txns [2]*kgo.Client
	// A transaction a scenario leaves open must stay open until the last
	// client has read: once the coordinator aborts it at its timeout
	// (kgo's default is 40 s, which a workload whose LSO is pinned at its
	// start outlasts, every client waiting in vain for records), the LSO
	// moves and the clients read another log than the engine decided.
	// kfake accepts up to transaction.max.timeout.ms, 15 minutes.
	for i := range txns {
		txns[i] = b.client(t, append(opts, kgo.TransactionalID(topic+"-tx"+strconv.Itoa(i)), kgo.TransactionTimeout(10*time.Minute))...)
	}
	idem := b.client(t, opts...)
	var open [2]bool
	for i, s := range steps {
		switch {
		case s.op == "data":
			cl := idem
			if s.p >= 0 {
				cl = txns[s.p]
				if !open[s.p] {
					if err := cl.BeginTransaction(); err != nil {
						t.Fatal(err)
					}
					open[s.p] = true
				}
			}
			rs := make([]*kgo.Record, s.n)
			for j := range rs {
				rs[j] = &kgo.Record{Value: []byte(fmt.Sprintf("%s-%d-%d", name, i, j)), Partition: 0}
			}
			if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
		default:
			end := kgo.TryCommit
			if s.op == "abort" {
				end = kgo.TryAbort
			}
			if err := txns[s.p].EndTransaction(ctx, end); err != nil {
				t.Fatal(err)
			}
			open[s.p] = false
		}
	}
	return topic
}

// createTopic creates topic with one partition and records its id for
// rawFetch.
func createTopic(t *testing.T, admin *kgo.Client, topic string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), admin)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic: %v %+v", err, resp)
	}
	topicIDs.Store(topic, resp.Topics[0].TopicID)
}

// logUnchanged fails t when the broker's high watermark or LSO of topic
// is no longer l's: the clients then read another log than the engine
// decided (an open transaction timed out, say), and a mismatch between
// them says nothing about either. It is deferred, so it is not a helper:
// its failure names its own line.
func logUnchanged(t *testing.T, cl *kgo.Client, topic string, l *txnindex.Log) {
	p := rawFetch(t, cl, topic, 0, 1)
	if p.HighWatermark != l.HighWatermark || p.LastStableOffset != l.LastStableOffset {
		t.Errorf("%s: the log changed while the clients read it (HWM %d, now %d; LSO %d, now %d): the comparisons with the engine's decisions of the earlier log prove nothing",
			topic, l.HighWatermark, p.HighWatermark, l.LastStableOffset, p.LastStableOffset)
	}
}
