package difftest

import (
	"fmt"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

func TestRecordLiteral(t *testing.T) {
	node, modules := needKafkaJS(t)
	b := newBroker(t)
	reader := b.client(t)
	brief := []step{data(0, 2), data(1, 2), data(0, 1), abort(1), data(0, 1), abort(0), plain(1)}
	tail := []step{data(1, 1), data(0, 1), plain(1), data(0, 1), abort(1), abort(0)}
	markers := []step{data(0, 2), commit(0), data(1, 1), abort(1), plain(1)}
	for _, c := range []struct {
		name  string
		steps []step
		from  int64
		mb    int
		eb    bool
	}{
		{"marker-order", brief, 0, 1 << 20, false},
		{"seek-two-open", brief, 4, 1 << 20, false},
		{"refetch-small", brief, 0, 1, false},
		{"refetch-small-eachbatch", brief, 0, 1, true},
		{"markers", markers, 0, 1 << 20, false},
		{"seek-two-open-small", brief, 4, 1, false},
		{"refetch-tail", tail, 0, 1 << 20, false},
		{"refetch-tail-eachbatch", tail, 0, 1 << 20, true},
	} {
		topic := writeScenario(t, b, c.name, c.steps)
		l, _ := readLog(t, reader, topic)
		js, crashed := jsConsume(t, node, modules, b.addr, topic, c.from, c.mb, c.eb)
		kg := goConsume(t, b.addr, topic, c.from, 1<<20)
		fmt.Printf("%s: kafkajs %v %v engine %v | kafka-go %v engine %v\\n", c.name, js, crashed, engineClient(l, c.from, txnindex.VariantKafkaJS, int32(c.mb), c.eb),
			kg, engineClient(l, c.from, txnindex.VariantKafkaGo, 1<<20, false))
	}
}
