package difftest

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/txnindex"
)

// TestClientsLiteralScenarios writes the literal logs of txnindex's
// TestClientVariantsLiteral to kfake (each data step one batch, producer 0
// and 1 transactional, -1 idempotent) and reads each back with real kafkajs
// 2.2.4 and segmentio/kafka-go v0.4.50 read_committed consumers: each must
// deliver the list recorded here, which txnindex's table holds too, and the
// engine's variant must predict it. The fetches ask for a per-partition
// limit only: kfake leaves the aborted list out of a response that the
// request-wide limit cuts (01_fetch.go breaks out before its lookup),
// which Apache Kafka's broker does not; with "1" byte per partition each
// fetch returns one batch (KIP-74's first batch whole). kfake lists only
// the aborted transactions that begin below the end of the returned data,
// hence AbortedToReadEnd in engineClient.
func TestClientsLiteralScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("talks to a kfake broker; skipped with -short")
	}
	node, modules := needKafkaJS(t)
	python := needKafkaPython(t)
	b := newBroker(t)
	reader := b.client(t)
	// Producer 0's transaction at 0-1, 4, 6 (ABORT at 7), producer 1's at
	// 2-3 (ABORT at 5), a plain record at 8: the aborted list is in
	// marker order, 1's entry (first offset 2) before 0's (0).
	markerOrder := []step{data(0, 2), data(1, 2), data(0, 1), abort(1), data(0, 1), abort(0), plain(1)}
	// 1's transaction at 0 (ABORT at 4), 0's at 1 and 3 (ABORT at 5), a
	// plain record at 2: the tail after 2 is filtered out.
	filteredTail := []step{data(1, 1), data(0, 1), plain(1), data(0, 1), abort(1), abort(0)}
	markers := []step{data(0, 2), commit(0), data(1, 1), abort(1), plain(1)}
	all := func(from, to int64) (o []int64) {
		for ; from <= to; from++ {
			o = append(o, from)
		}
		return o
	}
	for _, c := range []struct {
		name      string
		steps     []step
		codec     kgo.CompressionCodec
		from      int64
		maxBytes  int
		eachBatch bool
		kafkajs   []int64
		crashed   bool // kafkajs cannot decompress
		kafkago   []int64
	}{
		{"MarkerOrderedAbortedList", markerOrder, kgo.NoCompression(), 0, 1 << 20, false, []int64{0, 1, 8}, false, all(0, 8)},
		{"SeekIntoTwoOpenAbortedTransactions", markerOrder, kgo.NoCompression(), 4, 1 << 20, false, []int64{4, 8}, false, all(4, 8)},
		{"SeekIntoTwoOpenAbortedTransactionsOneBatchPerFetch", markerOrder, kgo.NoCompression(), 4, 1, false, []int64{4, 8}, false, all(4, 8)},
		{"OneBatchPerFetchKfakeLists", markerOrder, kgo.NoCompression(), 0, 1, false, []int64{4, 8}, false, all(0, 8)},
		{"RefetchAfterFilteredTail", filteredTail, kgo.NoCompression(), 0, 1 << 20, false, []int64{2, 3}, false, all(0, 5)},
		{"EachBatchPassesFilteredTail", filteredTail, kgo.NoCompression(), 0, 1 << 20, true, []int64{2}, false, all(0, 5)},
		{"MarkersDelivered", markers, kgo.NoCompression(), 0, 1 << 20, false, []int64{0, 1, 5}, false, all(0, 5)},
		{"SnappyBatchFailsTheFetch", markers, kgo.SnappyCompression(), 0, 1 << 20, false, nil, true, all(0, 5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			topic := writeScenario(t, b, c.name, c.steps, c.codec)
			l, _ := readLog(t, reader, topic)
			js, crashed := jsConsume(t, node, modules, b.addr, topic, c.from, c.maxBytes, c.eachBatch, lastOf(c.kafkajs))
			if !slices.Equal(js, c.kafkajs) || crashed != c.crashed {
				t.Errorf("kafkajs delivered %v (crashed %v), recorded %v (crashed %v)", js, crashed, c.kafkajs, c.crashed)
			}
			if got := engineClient(l, c.from, txnindex.VariantKafkaJS, int32(c.maxBytes), c.eachBatch); !slices.Equal(got, c.kafkajs) {
				t.Errorf("kafkajs variant %v, recorded %v", got, c.kafkajs)
			}
			kg := goConsume(t, b.addr, topic, c.from, 1<<20, lastOf(c.kafkago))
			if !slices.Equal(kg, c.kafkago) {
				t.Errorf("kafka-go delivered %v, recorded %v", kg, c.kafkago)
			}
			if got := engineClient(l, c.from, txnindex.VariantKafkaGo, 1<<20, false); !slices.Equal(got, c.kafkago) {
				t.Errorf("kafka-go variant %v, recorded %v", got, c.kafkago)
			}
			// kafka-python reads uncommitted to the high watermark and
			// hands over the markers: here, as kafka-go, every offset.
			if kp := pythonConsume(t, python, b.addr, topic, c.from, c.maxBytes, lastOf(c.kafkago)); !slices.Equal(kp, c.kafkago) {
				t.Errorf("kafka-python delivered %v, recorded %v", kp, c.kafkago)
			}
			if got := engineClient(l, c.from, txnindex.VariantKafkaPython, int32(c.maxBytes), false); !slices.Equal(got, c.kafkago) {
				t.Errorf("kafka-python variant %v, recorded %v", got, c.kafkago)
			}
		})
	}
}

// TestKafkaPythonHasNoReadCommitted: kafka-python 2.0 refuses an
// isolation_level setting, so it cannot be asked to read committed
// (KafkaConsumer.__init__'s check of unknown configs).
func TestKafkaPythonHasNoReadCommitted(t *testing.T) {
	python := needKafkaPython(t)
	out, err := exec.Command(python, filepath.Join("testdata", "kafka_python_consume.py"), "CHECK_ISOLATION", "127.0.0.1:1").Output()
	if err != nil || !strings.Contains(string(out), "KafkaConfigurationError: Unrecognized configs: {'isolation_level'}") {
		t.Fatalf("kafka-python with isolation_level: %q (%v)", out, err)
	}
}
