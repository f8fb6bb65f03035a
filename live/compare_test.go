package live

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// TestCompareDeliveredClipsAtPosition: the engine's delivered offsets are
// compared only below the committed position kgo reached, a range crossing
// it cut there; an offset kgo delivered and the engine did not is named.
func TestCompareDeliveredClipsAtPosition(t *testing.T) {
	p := &txnindex.Partition{Topic: "t", LogStartOffset: -1, HighWatermark: -1}
	add := func(base, last int64, pid txnindex.ProducerID, attrs int16, ct txnindex.ControlType) {
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: base, LastOffset: last, ProducerID: pid, Magic: 2, Attributes: attrs,
			Control: ct, Records: int32(last - base + 1), Size: 100, BaseSequence: -1, CoordinatorEpoch: -1}.Batch())
	}
	add(0, 1, -1, 0, txnindex.ControlNone)
	add(2, 4, 7, txnindex.AttrTransactional, txnindex.ControlNone)
	add(5, 5, 7, txnindex.AttrTransactional|txnindex.AttrControl, txnindex.ControlAbort)
	add(6, 9, -1, 0, txnindex.ControlNone)
	l := txnindex.Build(p)
	// Delivered: 0-1 and 6-9; kgo reached 8.
	if m := compareDelivered(l, 0, 8, [][2]int64{{0, 1}, {6, 7}}); m != "" {
		t.Errorf("agreeing offsets: %s", m)
	}
	m := compareDelivered(l, 0, 8, [][2]int64{{0, 4}, {6, 7}})
	if !strings.Contains(m, "the engine delivers 0-1,6-7, kgo's read_committed filter on the broker's responses delivered 0-4,6-7") {
		t.Errorf("differing offsets: %q", m)
	}
}

// TestCompareAbortedNamesALostEntry: a read_committed response that carries
// producer 7's aborted batch without listing it differs from the engine's
// list, and the difference says what it means for consumers.
func TestCompareAbortedNamesALostEntry(t *testing.T) {
	var raw []byte
	for _, b := range []testfixture.Batch{{Base: 0, PID: -1, Ctrl: -1, N: 2}, {Base: 2, PID: 7, Txn: true, Ctrl: -1, N: 3}, {Base: 5, PID: 7, Txn: true, Ctrl: 0}, {Base: 6, PID: -1, Ctrl: -1, N: 1}} {
		raw = append(raw, b.Encode()...)
	}
	bs, err := loader.ParseRecordSet(raw, "")
	if err != nil {
		t.Fatal(err)
	}
	l := txnindex.Build(&txnindex.Partition{Topic: "t", Batches: bs, LogStartOffset: -1, HighWatermark: -1})
	lost := &kmsg.FetchResponseTopicPartition{RecordBatches: raw, AbortedTransactions: []kmsg.FetchResponseTopicPartitionAbortedTransaction{}}
	m := compareAborted(l, committedFetch{offset: 0, resp: lost}, 0, 1<<20)
	for _, want := range []string{"broker only [], engine only [(producer 7, first offset 2)]", "the leader's .txnindex lacks the engine's entries", "read_committed consumers receive those transactions' records"} {
		if !strings.Contains(m, want) {
			t.Errorf("%q lacks %q", m, want)
		}
	}
	listed := &kmsg.FetchResponseTopicPartition{RecordBatches: raw, AbortedTransactions: []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 2}}}
	if m := compareAborted(l, committedFetch{offset: 0, resp: listed}, 0, 1<<20); m != "" {
		t.Errorf("agreeing lists: %q", m)
	}
}
