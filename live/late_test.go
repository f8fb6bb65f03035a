package live

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
)

// TestLiveLateFromTheLogAlone: when DescribeProducers is denied, the open
// transaction is judged from the log alone: an hour old, it is late by
// the broker's rule (ProducerStateManager.hasLateTransaction), not
// hanging, since no coordinator was heard; OpenTxn.Late says an operator
// must look (watch --once exits 3 on it).
func TestLiveLateFromTheLogAlone(t *testing.T) {
	t.Parallel()
	c, addr := cluster(t, "late", 1)
	h := txnClient(t, addr, "late", "stuck-producer")
	if err := h.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, h, 2)
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeProducers}, Err: kerr.TopicAuthorizationFailed, Count: -1})
	w := dial(t, Config{Brokers: []string{addr}, Topic: "late", Now: func() time.Time { return time.Now().Add(time.Hour) }})
	u := settle(t, w)
	if len(u.Partitions) != 1 || len(u.Partitions[0].Open) != 1 {
		t.Fatalf("update %+v", u)
	}
	o := u.Partitions[0].Open[0]
	if !o.Late || o.Hanging || o.EngineState != string(diagnosis.StateLate) {
		t.Errorf("open transaction %+v: want late from the log alone, not hanging", o)
	}
}
