package live

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLiveBoundedWindow keeps five batches while a long transaction spans
// the window start, then aborts it: the dropped batches' open transaction
// is carried over as a seed, so the engine still agrees with the broker on
// the LSO, the aborted lists and the delivered offsets. A second watcher
// started with --last inside that transaction learns it from
// DescribeProducers.
func TestLiveBoundedWindow(t *testing.T) {
	t.Parallel()
	_, addr := cluster(t, "win", 1)
	a, b := txnClient(t, addr, "win", "short"), txnClient(t, addr, "win", "long")
	bounded := dial(t, Config{Brokers: []string{addr}, Topic: "win", MaxBatches: 5})
	check := func(w *Watcher, what string) Update {
		t.Helper()
		u := settle(t, w)
		if len(u.Mismatches) > 0 {
			dumpWatcher(t, w, u)
			t.Fatalf("%s: %v", what, u.Mismatches)
		}
		return u
	}
	if err := b.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	longFirst := produce(t, b, 1)
	for i := range 6 {
		end := kgo.TryCommit
		if i%2 == 1 {
			end = kgo.TryAbort
		}
		txn(t, a, 1, end)
		check(bounded, "while the long transaction is open")
	}
	u := check(bounded, "open")
	p := u.Partitions[0]
	if p.Batches != 5 || p.Dropped == 0 || p.WindowStart <= longFirst || p.EngineLSO != longFirst || p.ListedLSO != longFirst {
		t.Fatalf("window %d-%d, %d batches, %d dropped, LSO engine %d broker %d, long transaction from %d",
			p.WindowStart, p.WindowEnd, p.Batches, p.Dropped, p.EngineLSO, p.ListedLSO, longFirst)
	}
	late := dial(t, Config{Brokers: []string{addr}, Topic: "win", Last: 3})
	if u := check(late, "--last 3"); u.Partitions[0].EngineLSO != longFirst || u.Partitions[0].WindowStart <= longFirst {
		t.Fatalf("--last: %+v", u.Partitions[0])
	}
	produce(t, b, 1)
	if err := b.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	txn(t, a, 2, kgo.TryCommit)
	for _, w := range []*Watcher{bounded, late} {
		u := check(w, "after the abort")
		if p := u.Partitions[0]; p.EngineLSO != p.HighWatermark || p.ListedLSO != p.HighWatermark {
			t.Fatalf("after the abort: %+v", p)
		}
	}
}

// TestLiveACLDenied: a user who may describe the topic but not read it
// gets a clear "not authorized" error instead of retries.
func TestLiveACLDenied(t *testing.T) {
	t.Parallel()
	_, addr := cluster(t, "acl", 1, kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser(MechanismPlain, "admin", "admin-pass"),
		kfake.User(MechanismPlain, "peek", "peek-pass", kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: "acl",
			Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationDescribe, Allow: true}))
	start := time.Now()
	w, err := Dial(context.Background(), Config{Brokers: []string{addr}, Topic: "acl", From: -1, SASL: &SASL{Mechanism: MechanismPlain, User: "peek", Password: "peek-pass"}})
	if err == nil {
		defer w.Close()
		err = w.Run(context.Background(), func(Update) {})
	}
	if !errors.Is(err, ErrDenied) || time.Since(start) > 5*time.Second {
		t.Fatalf("%v after %s", err, time.Since(start))
	}
	t.Logf("%v", err)
}

// TestLiveReconnect stops the broker under a running watcher and starts
// one on the same port: the watcher reports the failure in an update,
// backs off, and resumes.
func TestLiveReconnect(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c1, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(1, "rc"))
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	w := dial(t, Config{Brokers: []string{addr}, Topic: "rc", Poll: 20 * time.Millisecond, DialTimeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	failed, recovered := false, false
	var c2 *kfake.Cluster
	err = w.Run(ctx, func(u Update) {
		switch {
		case u.Err != "" && !failed:
			failed = true
			c2, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(1, "rc"))
			if err != nil {
				t.Errorf("restart: %v", err)
				cancel()
			}
		case u.Err == "" && failed:
			recovered = true
			cancel()
		case u.Err == "" && c1 != nil:
			c1.Close()
			c1 = nil
		}
	})
	if c2 != nil {
		c2.Close()
	}
	if !failed || !recovered {
		t.Fatalf("failed %v, recovered %v: %v", failed, recovered, err)
	}
}

// TestLiveCatchUp reads a backlog a batch or two per fetch and two fetches
// per poll, so that the read_uncommitted window, the read_committed
// consumer and the broker's HWM are out of step for many polls: no
// comparison may report a difference that is only the catch-up.
func TestLiveCatchUp(t *testing.T) {
	t.Parallel()
	_, addr := cluster(t, "catch", 1)
	a, b := txnClient(t, addr, "catch", "ca"), txnClient(t, addr, "catch", "cb")
	idem := client(t, addr, kgo.DefaultProduceTopic("catch"))
	if err := b.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		produce(t, b, 1)
		end := kgo.TryCommit
		if i%3 == 1 {
			end = kgo.TryAbort
		}
		txn(t, a, 1+i%2, end)
		produce(t, idem, 1)
		if i == 4 {
			if err := b.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
				t.Fatal(err)
			}
			if err := b.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, maxBatches := range []int{0, 4} {
		catchUp(t, addr, maxBatches)
	}
	if err := b.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}

func catchUp(t *testing.T, addr string, maxBatches int) {
	w := dial(t, Config{Brokers: []string{addr}, Topic: "catch", MaxBatches: maxBatches})
	w.maxBytes, w.fetchesPerPoll = 100, 2
	polls := 0
	for {
		u, err := w.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		polls++
		if len(u.Mismatches) > 0 {
			dumpWatcher(t, w, u)
			t.Fatalf("poll %d: %v", polls, u.Mismatches)
		}
		p := u.Partitions[0]
		if !p.Unsettled && p.WindowEnd == p.ListedHWM && p.CommittedPosition >= p.EngineLSO {
			if p.EngineLSO != p.ListedLSO || len(p.Open) != 1 || p.Open[0].TransactionalID != "cb" {
				t.Fatalf("caught up: %+v", p)
			}
			break
		}
		if polls > 200 {
			t.Fatalf("not caught up after %d polls: %+v", polls, p)
		}
	}
	if polls < 5 {
		t.Fatalf("caught up in %d polls: the test does not exercise catch-up", polls)
	}
	t.Logf("max batches %d: caught up in %d polls", maxBatches, polls)
}
