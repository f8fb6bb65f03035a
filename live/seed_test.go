package live

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
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
// sentinel matches a -1 standing for an unknown value (an offset, an epoch)
// in a runbook, not the "-1" inside a date such as 2026-01-10, which the
// last write eleven months back makes on some days.
var sentinel = regexp.MustCompile(`(^|[^0-9A-Za-z-])-1\b`)

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

	check := func(w *Watcher, cut string, state diagnosis.OpenTxnState, rule, why string) {
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
		if r.State != state || r.HangingRule != rule || !strings.Contains(r.Reason, why) || r.TransactionalID != "old-tx" {
			t.Errorf("state %s rule %q id %q: %s; want %s %q %q", r.State, r.HangingRule, r.TransactionalID, r.Reason, state, rule, why)
		}
		if r.CoordinatorEpoch != 3 || r.CoordinatorEpochSource != "DescribeProducers answer of broker 0" || !strings.HasSuffix(r.AbortByProducerCommand, "--coordinator-epoch 3") {
			t.Errorf("coordinator epoch %d from %q: %s", r.CoordinatorEpoch, r.CoordinatorEpochSource, r.AbortByProducerCommand)
		}
		want := fmt.Sprintf("the DescribeProducers answer of broker 0: the transaction began at offset %d, %s", first, cut)
		if !r.BeganBeforeLogStart || !strings.HasPrefix(r.StartEvidence, want) {
			t.Errorf("start evidence %q, want %q...", r.StartEvidence, want)
		}
		if rb := present.Runbook(d); !strings.Contains(rb, fmt.Sprintf("began at offset %d, %s", first, cut)) || sentinel.MatchString(rb) {
			t.Errorf("runbook:\n%s", rb)
		}
	}
	// kfake's coordinator still lists the partition in the Ongoing
	// transaction: by KIP-664 its marker is still to come (late by the
	// broker's rule, not hanging), the words of a log dir's join.
	check(dial(t, Config{Brokers: []string{addr}, Topic: "seed", From: first + 2}), fmt.Sprintf("before offset %d, where the data read here starts", first+2),
		diagnosis.StateLate, txnindex.RulePartitionListed, "no write for 330d, longer than transaction.max.timeout.ms plus the broker's 5m, so the broker calls it late (ProducerStateManager.hasLateTransaction), but not hanging (KIP-664)")

	// The coordinator forgets the id (TRANSACTIONAL_ID_NOT_FOUND, as after
	// transactional.id.expiration.ms): hanging by KIP-664's step 2, aged
	// from the last write DescribeProducers reported.
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
	check(dial(t, Config{Brokers: []string{addr}, Topic: "seed"}), fmt.Sprintf("before the log start %d (deleted by retention)", first+2),
		diagnosis.StateHanging, txnindex.RuleCoordinatorDead, "hanging whatever its age (KIP-664): the coordinator of \"old-tx\" has expired it (Dead): DescribeTransactions answers TransactionalIdNotFound and no marker will come; last write 330d ago")
}

// TestLiveJoinTwoMoments: the watcher reads the partition, then the
// coordinator. A coordinator that says CompleteCommit for a transaction
// the partition still shows open means, offline, "hanging whatever its
// age"; live, the transaction may have ended between the two reads, so
// one younger than transaction.max.timeout.ms keeps its state (named with
// its transactional id) and one older is hanging by rule
// coordinator_complete, as find-hanging judges it.
func TestLiveJoinTwoMoments(t *testing.T) {
	t.Parallel()
	c, addr := cluster(t, "two", 1)
	h := txnClient(t, addr, "two", "young")
	if err := h.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	first := produce(t, h, 1)
	produce(t, client(t, addr, kgo.DefaultProduceTopic("two")), 1)
	w := dial(t, Config{Brokers: []string{addr}, Topic: "two"})
	u := settle(t, w)
	if len(u.Partitions[0].Open) != 1 {
		t.Fatalf("open %+v", u.Partitions[0].Open)
	}
	o := u.Partitions[0].Open[0]
	c.ControlKey(int16(kmsg.DescribeTransactions), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.DescribeTransactionsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range req.TransactionalIDs {
			s := kmsg.NewDescribeTransactionsResponseTransactionState()
			s.TransactionalID, s.State, s.ProducerID, s.ProducerEpoch, s.StartTimestamp = id, "CompleteCommit", o.ProducerID, o.ProducerEpoch, -1
			resp.TransactionStates = append(resp.TransactionStates, s)
		}
		return resp, nil, true
	})
	for _, tc := range []struct {
		name string
		now  func() time.Time
		want diagnosis.OpenTxnState
		rule string
		why  string
	}{
		{"young", time.Now, diagnosis.StateOpen, "", "the coordinator then said CompleteCommit, but it was read after the partition"},
		{"old", func() time.Time { return time.Now().Add(time.Hour) }, diagnosis.StateHanging, txnindex.RuleCoordinatorComplete, "hanging whatever its age (KIP-664)"},
	} {
		u := settle(t, dial(t, Config{Brokers: []string{addr}, Topic: "two", Now: tc.now}))
		d := u.Partitions[0].Diagnosis
		if d == nil || d.PinnedBy == nil || d.PinnedBy.FirstOffset != first {
			t.Fatalf("%s: diagnosis %+v", tc.name, d)
		}
		r := d.PinnedBy
		if r.State != tc.want || r.HangingRule != tc.rule || r.TransactionalID != "young" || r.CoordinatorState != "CompleteCommit" || !strings.Contains(r.Reason, tc.why) {
			t.Errorf("%s: state %s rule %q id %q coordinator %q: %s", tc.name, r.State, r.HangingRule, r.TransactionalID, r.CoordinatorState, r.Reason)
		}
	}
}
