package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// clusterReadKeys are the requests cluster mode may send: the watcher's
// read-only list (live/live_test.go) grown by ListGroups, DescribeGroups,
// OffsetFetch, ConsumerGroupDescribe and DescribeShareGroupOffsets.
var clusterReadKeys = map[int16]bool{
	int16(kmsg.Metadata): true, int16(kmsg.ListOffsets): true, int16(kmsg.Fetch): true,
	int16(kmsg.DescribeProducers): true, int16(kmsg.ListTransactions): true, int16(kmsg.DescribeTransactions): true,
	int16(kmsg.DescribeConfigs): true, int16(kmsg.ApiVersions): true, int16(kmsg.SASLHandshake): true, int16(kmsg.SASLAuthenticate): true,
	int16(kmsg.ListGroups): true, int16(kmsg.DescribeGroups): true, int16(kmsg.OffsetFetch): true,
	int16(kmsg.ConsumerGroupDescribe): true, int16(kmsg.DescribeShareGroupOffsets): true,
}

// TestClusterDiagnoseScale, at scale through the CLI: three
// kfake brokers, 1,000 partitions over 10 topics, three transactions left
// open on three partitions with distinct transactional ids, a group with
// committed offsets. `diagnose --bootstrap --format json` lists all 1,000,
// names the three with their transactional ids and first offsets and the
// group behind each, finds the other 997 clear; kfake's own record of the
// requests shows only read APIs, as many as the formula gives at 100
// partitions and at 1,000: 21, plus 4 ApiVersions (at most 2 + 7·B per
// scan, B brokers: docs/cluster-mode.md).
func TestClusterDiagnoseScale(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 partitions")
	}
	// The formula (live.ScanCluster, docs/cluster-mode.md) with B = 3
	// brokers, all leading partitions (L = 3), each leading one stuck
	// partition (Ls = 3), every broker listing the open transactions
	// (Ct = 3: kfake lists every transaction on every broker), one group
	// coordinator (Gc = 1), and DescribeConfigs for the timeout:
	// R = 1 + 2·L + (Ls + B + Ct + B + Gc + 1), at most 2 + 7·B.
	const B, L, Ls, Ct, Gc = 3, 3, 3, 3, 1
	want := 1 + 2*L + (Ls + B + Ct + B + Gc + 1)
	for _, per := range []int32{100, 10} {
		n, reqs := clusterScale(t, per)
		apiVersions := reqs["ApiVersions"] // once per new connection
		if n-apiVersions != want || apiVersions > B+1 {
			t.Errorf("%d partitions: %d requests and %d ApiVersions (%v), want %d and at most %d", 10*per, n-apiVersions, apiVersions, reqs, want, B+1)
		}
		t.Logf("%d partitions: %d requests + %d ApiVersions %v", 10*per, n-apiVersions, apiVersions, reqs)
	}
}

// clusterScale runs the scenario with per partitions in each of 10 topics
// and returns the requests the CLI's scan sent.
func clusterScale(t *testing.T, per int32) (int, map[string]int) {
	topics := make([]string, 10)
	for i := range topics {
		topics[i] = fmt.Sprintf("t%d", i)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(per, topics...))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	open := []testfixture.OpenTxn{{Topic: "t1", Partition: 7 % per, Leader: 0, TxnID: "stuck-orders"},
		{Topic: "t4", Partition: 42 % per, Leader: 1, TxnID: "stuck-billing"},
		{Topic: "t9", Partition: per - 1, Leader: 2, TxnID: "stuck-audit"}}
	for _, o := range open {
		if err := c.MoveTopicPartition(o.Topic, o.Partition, o.Leader); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	plain := testfixture.KfakeClient(t, addrs)
	var recs []*kgo.Record
	for _, topic := range topics {
		for p := range per {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("seed")})
		}
	}
	if err := plain.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testfixture.LeaveOpen(t, addrs, plain, open, func(int) int { return 1 })
	// The group "billing" committed at each stuck LSO, as a simple
	// consumer does (generation -1): the scan finds it without joining.
	for _, o := range open {
		testfixture.CommitOffset(t, plain, "billing", o.Topic, o.Partition, o.First)
	}

	// From here on every request the brokers handle is the CLI's.
	var mu sync.Mutex
	reqs := map[string]int{}
	n := 0
	c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		n++
		reqs[kmsg.NameForKey(r.Key())]++
		if !clusterReadKeys[r.Key()] {
			t.Errorf("%d partitions: the scan sent %s, not a read", 10*per, kmsg.NameForKey(r.Key()))
		}
		return nil, nil, false
	})
	code, out, errOut := runArgs(t, "diagnose", "--bootstrap", strings.Join(addrs, ","), "--format", "json")
	if code != 0 { // open, not hanging: the coordinator still tracks them
		t.Fatalf("%d partitions: exit %d, stderr %s", 10*per, code, errOut)
	}
	var v struct {
		Partitions []struct {
			Topic         string `json:"topic"`
			Partition     int32  `json:"partition"`
			LSOLagOffsets int64  `json:"lso_lag_offsets"`
			Open          []struct {
				TransactionalID string `json:"transactional_id"`
				FirstOffset     int64  `json:"first_offset"`
			} `json:"open_transactions"`
			Groups []struct {
				Group string `json:"group"`
			} `json:"groups_behind"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %.500s", err, out)
	}
	if len(v.Partitions) != int(10*per) {
		t.Fatalf("%d partitions listed, the cluster has %d", len(v.Partitions), 10*per)
	}
	stuck := map[string]testfixture.OpenTxn{}
	for _, o := range open {
		stuck[fmt.Sprintf("%s-%d", o.Topic, o.Partition)] = o
	}
	found := 0
	for _, p := range v.Partitions {
		key := fmt.Sprintf("%s-%d", p.Topic, p.Partition)
		o, isStuck := stuck[key]
		switch {
		case !isStuck && (p.LSOLagOffsets != 0 || len(p.Open) != 0):
			t.Errorf("%s: lag %d, %d open; want clear", key, p.LSOLagOffsets, len(p.Open))
		case isStuck:
			found++
			if p.LSOLagOffsets == 0 || len(p.Open) != 1 || p.Open[0].TransactionalID != o.TxnID || p.Open[0].FirstOffset != o.First {
				t.Errorf("%s: %+v, want held by %s from %d", key, p, o.TxnID, o.First)
			}
			if len(p.Groups) != 1 || p.Groups[0].Group != "billing" {
				t.Errorf("%s: groups behind %+v, want billing", key, p.Groups)
			}
		}
	}
	if found != len(open) {
		t.Errorf("%d of the %d stuck partitions listed", found, len(open))
	}
	mu.Lock()
	defer mu.Unlock()
	return n, reqs
}
