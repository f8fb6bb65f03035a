package difftest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/txnindex"
)

const clientWorkloads = 16

// randomSteps is a random interleaving of two transactional producers'
// transactions (committed, aborted, one sometimes left open) and plain
// records.
func randomSteps(r *rand.Rand) []step {
	var steps []step
	var open [2]bool
	for range 8 + r.IntN(16) {
		p := r.IntN(2)
		switch op := r.IntN(10); {
		case op < 5:
			steps = append(steps, data(p, 1+r.IntN(3)))
			open[p] = true
		case op < 8 && open[p]:
			if r.IntN(3) == 0 {
				steps = append(steps, commit(p))
			} else {
				steps = append(steps, abort(p))
			}
			open[p] = false
		case op >= 8:
			steps = append(steps, plain(1+r.IntN(2)))
		}
	}
	leave := r.IntN(4) == 0
	for p := range open {
		if open[p] && !(leave && p == 0) {
			steps = append(steps, abort(p))
		}
	}
	return steps
}

// TestDifferentialClients: on random transactional workloads written to
// kfake, uncompressed or with each codec, what the engine's kafkajs and
// kafka-go variants say a read_committed consumer receives (from the log
// start and from a random seek, often into an aborted transaction) equals
// what real kafkajs 2.2.4, kafka-go v0.4.50 and kafka-python 2.0.2 consumers deliver: kafkajs
// with one batch per fetch and with 1 MiB per fetch, eachMessage and
// eachBatch, kafka-python 2.0.2 (one batch and 1 MiB per fetch); IBM/sarama
// equals the Java variant. The limits are per partition only: kfake omits the aborted
// list from a response the request-wide limit cuts (01_fetch.go), which
// Apache Kafka does not.
func TestDifferentialClients(t *testing.T) {
	if testing.Short() {
		t.Skip("talks to a kfake broker; skipped with -short")
	}
	node, modules := needKafkaJS(t)
	python := needKafkaPython(t)
	b := newBroker(t)
	reader := b.client(t)
	seed := seedOffset(t)
	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}
	var leaked, markers, runs, seeksIntoAborted atomic.Int64
	t.Run("workloads", func(t *testing.T) {
		for i := range clientWorkloads {
			t.Run(fmt.Sprintf("c%02d", i), func(t *testing.T) {
				t.Parallel()
				r := rand.New(rand.NewPCG(seed+uint64(i), 4242))
				codec := codecs[i%len(codecs)]
				topic := writeScenario(t, b, fmt.Sprintf("rnd%02d", i), randomSteps(r), codec)
				l, _ := readLog(t, reader, topic)
				// Checked last, and after a failure too, which it may explain.
				defer logUnchanged(t, reader, topic, l)
				java := func(from int64) []int64 { return engineDelivered(l, from, txnindex.VariantJava) }
				// From the start, and a seek into an aborted transaction
				// (past its first record, where another may be open too)
				// or, when none was aborted, anywhere.
				seek := int64(r.IntN(int(l.LogEndOffset) + 1))
				for _, tx := range l.Txns {
					if tx.State == txnindex.TxnAborted && r.IntN(2) == 0 {
						seek = min(tx.FirstOffset+1, tx.LastDataOffset)
						seeksIntoAborted.Add(1)
						break
					}
				}
				for _, from := range []int64{0, seek} {
					want := engineClient(l, from, txnindex.VariantKafkaGo, 1<<20, false)
					if got := goConsume(t, b.addr, topic, from, 1<<20, lastOf(want)); !slices.Equal(got, want) {
						t.Fatalf("%s from %d: kafka-go %v, variant %v", topic, from, got, want)
					}
					markers.Add(int64(len(engineClient(l, from, txnindex.VariantKafkaGo, 1<<20, false)) - len(java(from))))
					for _, mb := range []int{1, 1 << 20} {
						want := engineClient(l, from, txnindex.VariantKafkaPython, int32(mb), false)
						if got := pythonConsume(t, python, b.addr, topic, from, mb, lastOf(want)); !slices.Equal(got, want) {
							t.Fatalf("%s from %d, %d bytes: kafka-python %v, variant %v", topic, from, mb, got, want)
						}
					}
					// Sarama filters as the Java consumer does (consumer.go
					// parseResponse: entries sorted by first offset, popped
					// up to each batch's last offset).
					for _, mb := range []int32{1, 1 << 20} {
						if got := saramaConsume(t, b.addr, topic, from, mb, lastOf(java(from))); !slices.Equal(got, java(from)) {
							t.Fatalf("%s from %d, %d bytes: sarama %v, java variant %v", topic, from, mb, got, java(from))
						}
					}
					for _, mb := range []int{1, 1 << 20} {
						for _, eb := range []bool{false, true} {
							if eb && mb == 1 {
								continue
							}
							want := engineClient(l, from, txnindex.VariantKafkaJS, int32(mb), eb)
							got, crashed := jsConsume(t, node, modules, b.addr, topic, from, mb, eb, lastOf(want))
							if !slices.Equal(got, want) {
								t.Fatalf("%s from %d, %d bytes, eachBatch %v: kafkajs %v (crashed %v), variant %v\nlog %v", topic, from, mb, eb, got, crashed, want, l.Batches)
							}
							for _, o := range got {
								if !slices.Contains(java(from), o) {
									leaked.Add(1)
								}
							}
							runs.Add(1)
						}
					}
				}
			})
		}
	})
	if leaked.Load() == 0 || markers.Load() == 0 || seeksIntoAborted.Load() == 0 {
		t.Fatalf("no workload made kafkajs leak (%d), kafka-go hand over a marker (%d) or sought into an aborted transaction (%d): the test proves nothing", leaked.Load(), markers.Load(), seeksIntoAborted.Load())
	}
	t.Logf("%d kafkajs runs; %d aborted records kafkajs delivered; %d more records from kafka-go than Kafka's rule; %d seeks into aborted transactions", runs.Load(), leaked.Load(), markers.Load(), seeksIntoAborted.Load())
}
