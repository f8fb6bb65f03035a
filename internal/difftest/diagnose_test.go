package difftest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnoseStuckLSOOnBroker leaves a transaction open while other
// producers commit and abort, and checks that the diagnosis of what the
// broker holds names the pinning producer and first offset, reports the LSO
// ListOffsets(read_committed) gives, and prints the abort command with that
// start offset; after the producer aborts, the LSO moves and the diagnosis
// is clear.
func TestDiagnoseStuckLSOOnBroker(t *testing.T) {
	b := newBroker(t)
	ctx := context.Background()
	topic := "stuck"
	admin := b.client(t)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, rt)
	cresp, err := req.RequestWith(ctx, admin)
	if err != nil || cresp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v", err)
	}
	topicIDs.Store(topic, cresp.Topics[0].TopicID)
	start, hang := testtool.StuckPartition(t, b.addr, topic)

	l, _ := readLog(t, admin, topic)
	lso, _ := testtool.ListOffsets(t, admin, topic)
	if l.LastStableOffset != lso || lso != start {
		t.Fatalf("engine LSO %d, ListOffsets(read_committed) %d, open transaction starts at %d", l.LastStableOffset, lso, start)
	}
	d := present.Diagnose(l, diagnosis.Options{Now: time.Now(), Position: 0, Bootstrap: b.addr})
	if d.PinnedBy == nil || d.PinnedBy.FirstOffset != start || len(d.OpenTransactions) != 1 {
		t.Fatalf("diagnosis: %+v", d)
	}
	want := fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic %s --partition 0 --start-offset %d", b.addr, topic, start)
	if d.PinnedBy.AbortCommand != want || d.PinnedBy.State != diagnosis.StateOpen || d.PinnedBy.Discards.Records != 3 {
		t.Errorf("pinned by %+v", d.PinnedBy)
	}
	// Seen from far in the future the same transaction is late by the
	// broker's rule; with no coordinator evidence read, hanging is not
	// confirmed, and an operator must look (Alert).
	if late := present.Diagnose(l, diagnosis.Options{Now: time.Now().Add(time.Hour), Position: -1}); late.PinnedBy == nil || late.PinnedBy.State != diagnosis.StateLate || !late.Alert() || late.Hanging() {
		t.Errorf("an hour later: %+v", late.PinnedBy)
	}
	// Who did it: the producer id the broker's DescribeProducers reports.
	if pid := testtool.TxnStartProducer(t, admin, topic, start); txnindex.ProducerID(pid) != d.PinnedBy.ProducerID {
		t.Errorf("DescribeProducers shows producer %d open at %d, the diagnosis %d", pid, start, d.PinnedBy.ProducerID)
	}

	if err := hang.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	l, _ = readLog(t, admin, topic)
	lso, _ = testtool.ListOffsets(t, admin, topic)
	d = present.Diagnose(l, diagnosis.Options{Now: time.Now(), Position: -1})
	if d.PinnedBy != nil || lso != l.HighWatermark || l.LastStableOffset != lso {
		t.Fatalf("after abort: LSO %d (broker %d), HWM %d, pinned by %+v", l.LastStableOffset, lso, l.HighWatermark, d.PinnedBy)
	}
	if !strings.Contains(present.Runbook(d), "clear") {
		t.Errorf("runbook: %s", present.Runbook(d))
	}
}
