package live

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
)

// joinConsumerGroup makes group a KIP-848 consumer group of one member
// subscribed to topic (ConsumerGroupHeartbeat until it is assigned the
// partition) and commits off on partition 0 as that member.
func joinConsumerGroup(t *testing.T, cl *kgo.Client, topic, group string, off int64) {
	t.Helper()
	ctx := context.Background()
	member, epoch := "member-"+group, int32(0)
	for range 20 {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, member, epoch, 60000
		req.SubscribedTopicNames = []string{topic}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		kresp, err := cl.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		resp := kresp.(*kmsg.ConsumerGroupHeartbeatResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
		if resp.MemberID != nil {
			member = *resp.MemberID
		}
		epoch = resp.MemberEpoch
		if a := resp.Assignment; a != nil && len(a.Topics) > 0 {
			break
		}
	}
	testfixture.CommitMemberOffset(t, cl, group, member, epoch, topic, 0, off)
}

// shareGroupAt makes group a share group whose start offset on topic's
// partition 0 is start (AlterShareGroupOffsets creates it), with
// share.isolation.level set to level unless "".
func shareGroupAt(t *testing.T, cl *kgo.Client, topic, group string, start int64, level string) {
	t.Helper()
	ctx := context.Background()
	req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	req.GroupID = group
	rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
	rp.Partition, rp.StartOffset = 0, start
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := cl.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(kresp.(*kmsg.AlterShareGroupOffsetsResponse).ErrorCode); err != nil {
		t.Fatalf("share group %s: %v", group, err)
	}
	if level == "" {
		return
	}
	ac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "share.isolation.level", &level
	r.Configs = append(r.Configs, cfg)
	ac.Resources = append(ac.Resources, r)
	aresp, err := cl.Request(ctx, ac)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range aresp.(*kmsg.IncrementalAlterConfigsResponse).Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("share.isolation.level of %s: %v", group, err)
		}
	}
}

// TestLiveGroupKinds: on a kfake broker a transaction stays open while a
// classic group, a KIP-848 consumer group and two share groups (one
// read_committed, one with Kafka's default) sit at its LSO. The watcher's
// update and a cluster scan's diagnosis name each group's kind, the
// consumer group's member assigned the partition (ConsumerGroupDescribe),
// and place the share groups by their isolation level
// (DescribeShareGroupOffsets, DescribeConfigs); every request is on the
// read-only list, and the new ones were sent.
func TestLiveGroupKinds(t *testing.T) {
	t.Parallel()
	c, addr := cluster(t, "gk", 1)
	plain := client(t, addr, kgo.DefaultProduceTopic("gk"), kgo.ClientID("gk-consumer"))
	produce(t, plain, 3)
	h := txnClient(t, addr, "gk", "gk-holder")
	if err := h.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	first := produce(t, h, 2) - 1
	produce(t, plain, 2)
	testfixture.CommitOffset(t, plain, "old-app", "gk", 0, first)
	joinConsumerGroup(t, plain, "gk", "new-app", first)
	shareGroupAt(t, plain, "gk", "share-rc", first, "read_committed")
	shareGroupAt(t, plain, "gk", "share-ru", first-1, "")

	var (
		mu   sync.Mutex
		keys = map[int16]int{}
	)
	c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		keys[r.Key()]++
		mu.Unlock()
		return nil, nil, false
	})
	w := dial(t, Config{Brokers: []string{addr}, Topic: "gk"})
	u := settle(t, w)
	p := u.Partitions[0]
	if p.EngineLSO != first {
		t.Fatalf("LSO %d, want %d", p.EngineLSO, first)
	}
	var behind []string
	for _, g := range p.Groups {
		behind = append(behind, fmt.Sprintf("%s %s [%s]", g.Group, g.Kind, strings.Join(g.Members, ",")))
	}
	if got, want := strings.Join(behind, "|"), "new-app consumer [gk-consumer]|old-app classic []"; got != want {
		t.Errorf("groups behind %q, want %q", got, want)
	}
	checkShares := func(what string, d *diagnosis.Diagnosis) {
		t.Helper()
		var shares []string
		for _, s := range d.ShareGroups {
			shares = append(shares, fmt.Sprintf("%s@%d %s held=%v blocked=%v", s.Group, s.StartOffset, s.Isolation, s.Held, s.Blocked))
		}
		want := fmt.Sprintf("share-rc@%d read_committed held=true blocked=true|share-ru@%d read_uncommitted held=false blocked=false", first, first-1)
		if got := strings.Join(shares, "|"); got != want || d.ShareGroupsSource != "DescribeShareGroupOffsets" {
			t.Errorf("%s: share_groups %q from %q, want %q", what, got, d.ShareGroupsSource, want)
		}
		var kinds []string
		for _, k := range d.GroupsByKind {
			kinds = append(kinds, fmt.Sprintf("%s:%s/%s", k.Kind, strings.Join(k.Groups, "+"), strings.Join(k.Affected, "+")))
		}
		if got, want := strings.Join(kinds, " "), "consumer:new-app/new-app classic:old-app/old-app share:share-rc+share-ru/share-rc"; got != want {
			t.Errorf("%s: groups_by_kind %s, want %s", what, got, want)
		}
	}
	checkShares("watch", p.Diagnosis)
	var out bytes.Buffer
	if err := NewPrinter(&out, false).Print(u); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf(`consumer group "new-app" committed %d: BLOCKED`, first), fmt.Sprintf(`share group "share-rc" at start offset %d (read_committed): BLOCKED`, first)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("watch text lacks %q:\n%s", want, out.String())
		}
	}

	d, err := newTestCluster(t, addr).DiagnosePartition(context.Background(), "gk", 0, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkShares("cluster scan", d)
	mu.Lock()
	defer mu.Unlock()
	for k, n := range keys {
		if !clusterReadOnlyKeys[k] {
			t.Errorf("sent %s (key %d) %d times: not a read-only API", kmsg.NameForKey(k), k, n)
		}
	}
	for _, k := range []kmsg.Key{kmsg.ConsumerGroupDescribe, kmsg.DescribeShareGroupOffsets, kmsg.DescribeConfigs} {
		if keys[int16(k)] == 0 {
			t.Errorf("never sent %s: %v", k.Name(), keys)
		}
	}
}

// TestLiveGroupKindsUnsupported: a broker that does not support
// ConsumerGroupDescribe or DescribeShareGroupOffsets (older than KIP-848's
// and KIP-932's releases: kgo does not send a request the broker's
// ApiVersions left out) costs the scan a note each, not the broker: the
// other groups are still read and the broker is not called down.
func TestLiveGroupKindsUnsupported(t *testing.T) {
	t.Parallel()
	// A broker that lists groups by kind (ListGroups v5) but serves
	// neither describe request.
	v := kversion.V4_1_0()
	v.SetMaxKeyVersion(int16(kmsg.ConsumerGroupDescribe), -1)
	v.SetMaxKeyVersion(int16(kmsg.DescribeShareGroupOffsets), -1)
	c, addr := cluster(t, "gu", 1, kfake.MaxVersions(v))
	plain := client(t, addr, kgo.DefaultProduceTopic("gu"))
	produce(t, plain, 2)
	h := txnClient(t, addr, "gu", "gu-holder")
	if err := h.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	first := produce(t, h, 1)
	produce(t, plain, 1)
	testfixture.CommitOffset(t, plain, "old-app", "gu", 0, first)
	// It lists groups of the newer kinds, which it cannot describe.
	c.ControlKey(int16(kmsg.ListGroups), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.ListGroupsRequest)
		resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
		for _, n := range []struct{ g, pt, gt string }{{"old-app", "", ""}, {"new-app", "consumer", "consumer"}, {"shared", "share", "share"}} {
			g := kmsg.NewListGroupsResponseGroup()
			g.Group, g.ProtocolType, g.GroupType, g.GroupState = n.g, n.pt, n.gt, "Empty"
			resp.Groups = append(resp.Groups, g)
		}
		return resp, nil, true
	})
	s, err := newTestCluster(t, addr).Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(s.Notes, "\n")
	for _, want := range []string{"ConsumerGroupDescribe on broker 0: ConsumerGroupDescribe is not supported by the broker",
		"DescribeShareGroupOffsets on broker 0: DescribeShareGroupOffsets is not supported by the broker"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	for _, b := range s.Brokers {
		if b.Err != "" {
			t.Errorf("broker %d called down: %s", b.ID, b.Err)
		}
	}
	var found bool
	for _, p := range s.Partitions {
		for _, g := range p.Groups {
			found = found || g.Group == "old-app" && g.Committed == first
		}
		if p.ShareGroups != nil {
			t.Errorf("share groups %+v from a broker that cannot describe them", p.ShareGroups)
		}
	}
	if !found {
		t.Errorf("old-app not read after the unsupported requests: %+v", s.Partitions)
	}
}

func newTestCluster(t *testing.T, addr string) *Cluster {
	t.Helper()
	cl, err := NewCluster(Config{Brokers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}
