package live

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// TestLiveSeedsFromProducerState: a transaction's records lie before the
// window (--from past them, then retention past them), so only the
// leader's producer state knows it. DescribeProducers (kfake's answer, its
// last write time set eleven months back and its coordinator epoch to 3, as
// a production broker would report them; kfake reports the transaction's
// start and 0) seeds it as a producer snapshot seeds a log dir: the
// diagnosis ages it from that last write (hanging by the age rule, not
// "last write unknown"), the producer-id abort carries coordinator epoch 3
// with DescribeProducers as its evidence, and where it began is said as
// the window or the retention cut it.
func TestLiveSeedsFromProducerState(t *testing.T) {
	t.Parallel()
	c, addr := cluster(t, "seed", 1)
	h := txnClient(t, addr, "seed", "old-tx")
	plain := client(t, addr, kgo.DefaultProduceTopic("seed"))
	produce(t, plain, 1)
	if err := h.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	first := produce(t, h, 2) - 1
	produce(t, plain, 3)

	ctx := context.Background()
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = "seed", []int32{0}
	req.Topics = append(req.Topics, rt)
	real, err := req.RequestWith(ctx, plain)
	if err != nil || len(real.Topics) != 1 || len(real.Topics[0].Partitions) != 1 || len(real.Topics[0].Partitions[0].ActiveProducers) != 1 {
		t.Fatalf("DescribeProducers: %v %+v", err, real)
	}
	lastWrite := time.Now().Add(-330 * 24 * time.Hour).UnixMilli()
	ap := &real.Topics[0].Partitions[0].ActiveProducers[0]
	ap.LastTimestamp, ap.CoordinatorEpoch = lastWrite, 3
	if ap.CurrentTxnStartOffset != first {
		t.Fatalf("DescribeProducers says the transaction began at %d, not %d", ap.CurrentTxnStartOffset, first)
	}
	c.ControlKey(int16(kmsg.DescribeProducers), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := r.ResponseKind().(*kmsg.DescribeProducersResponse)
		resp.Topics = real.Topics
		return resp, nil, true
	})

	check := func(w *Watcher, cut string) {
		t.Helper()
		u := settle(t, w)
		d := u.Partitions[0].Diagnosis
		if d == nil || d.PinnedBy == nil {
			t.Fatalf("diagnosis %+v", d)
		}
		r := d.PinnedBy
		day := int64(24 * time.Hour / time.Millisecond)
		if !r.Seeded || r.FirstOffset != first || r.LastTimestamp != lastWrite || r.AgeUnknown || r.AgeMs < 329*day || r.AgeMs > 331*day {
			t.Errorf("seeded %v first %d last write %d age %d ms unknown %v; want from %d, last write %d", r.Seeded, r.FirstOffset, r.LastTimestamp, r.AgeMs, r.AgeUnknown, first, lastWrite)
		}
		if r.State != txnindex.StateHanging || r.HangingRule != txnindex.RuleAge || !strings.Contains(r.Reason, "wrote nothing for 330d") {
			t.Errorf("state %s rule %q: %s", r.State, r.HangingRule, r.Reason)
		}
		if r.CoordinatorEpoch != 3 || r.CoordinatorEpochSource != "DescribeProducers answer of broker 0" || !strings.HasSuffix(r.AbortByProducerCommand, "--coordinator-epoch 3") {
			t.Errorf("coordinator epoch %d from %q: %s", r.CoordinatorEpoch, r.CoordinatorEpochSource, r.AbortByProducerCommand)
		}
		want := fmt.Sprintf("the DescribeProducers answer of broker 0: the transaction began at offset %d, %s", first, cut)
		if !r.BeganBeforeLogStart || !strings.HasPrefix(r.StartEvidence, want) {
			t.Errorf("start evidence %q, want %q...", r.StartEvidence, want)
		}
		if rb := d.Runbook(); !strings.Contains(rb, fmt.Sprintf("began at offset %d, %s", first, cut)) || strings.Contains(rb, "-1") {
			t.Errorf("runbook:\n%s", rb)
		}
	}
	check(dial(t, Config{Brokers: []string{addr}, Topic: "seed", From: first + 2}), fmt.Sprintf("before offset %d, where the data read here starts", first+2))

	// Retention (DeleteRecords) moves the log start past the transaction's
	// records: a window at the log start seeds it, and the text says the
	// log start cut it, as for a log dir seeded from its .snapshot.
	dreq := kmsg.NewPtrDeleteRecordsRequest()
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = "seed"
	dp := kmsg.NewDeleteRecordsRequestTopicPartition()
	dp.Partition, dp.Offset = 0, first+2
	dt.Partitions = append(dt.Partitions, dp)
	dreq.Topics = append(dreq.Topics, dt)
	if _, err := dreq.RequestWith(ctx, plain); err != nil {
		t.Fatal(err)
	}
	check(dial(t, Config{Brokers: []string{addr}, Topic: "seed"}), fmt.Sprintf("before the log start %d (deleted by retention)", first+2))
}
