package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/txnindex"
)

// TestDiagnoseLiveJoin: on a kfake broker, producer "hang" leaves a
// transaction open on stuck-0 (testtool.StuckPartition), group orders-app
// commits its offset at the LSO and audit one below (OffsetCommit as a
// simple consumer, generation -1). `diagnose --bootstrap --topic
// --partition` with no PATH names the transactional id pinning the LSO
// (pinned_by.transactional_id), its coordinator state and rule, and the
// groups behind the LSO, read through read-only requests only. kfake's
// coordinator lists the partition in the Ongoing transaction, so by
// KIP-664 it is not hanging (its marker is still to come): exit 0.
func TestDiagnoseLiveJoin(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	const topic = "stuck"
	start, _ := testtool.StuckPartition(t, addr, topic)
	admin, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	lso, hwm := testtool.ListOffsets(t, admin, topic)
	if lso != start || hwm <= lso {
		t.Fatalf("LSO %d HWM %d, open transaction at %d", lso, hwm, start)
	}
	testfixture.CommitOffset(t, admin, "orders-app", topic, 0, lso)
	testfixture.CommitOffset(t, admin, "audit", topic, 0, lso-1)
	testfixture.CommitOffset(t, admin, "uncommitted-reader", topic, 0, hwm)

	// Only read-only requests reach the broker.
	var (
		mu   sync.Mutex
		keys []int16
	)
	c.Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		keys = append(keys, r.Key())
		mu.Unlock()
		return nil, nil, false
	})
	code, js, errOut := runArgs(t, "diagnose", "--bootstrap", addr, "--topic", topic, "--partition", "0", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got joinJSON
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Partitions) != 1 || got.Partitions[0].PinnedBy == nil {
		t.Fatalf("%s", js)
	}
	p := got.Partitions[0]
	if b := p.PinnedBy; b.TransactionalID != "hang" || b.CoordinatorState != "Ongoing" || b.HangingRule != txnindex.RulePartitionListed || b.FirstOffset != start || b.State != "open" {
		t.Errorf("pinned_by %+v", b)
	}
	var gs []string
	for _, g := range p.Groups {
		gs = append(gs, g.Group+" "+boolWord(g.Behind, "behind")+" "+boolWord(g.Blocked, "blocked"))
	}
	if want := "audit behind -|orders-app behind blocked"; strings.Join(gs, "|") != want {
		t.Errorf("groups %q, want %q (a group past the LSO is not held)", gs, want)
	}
	mu.Lock()
	sent := slices.Clone(keys)
	mu.Unlock()
	if !slices.Contains(sent, 16) || !slices.Contains(sent, 9) || !slices.Contains(sent, 65) {
		t.Errorf("requests %v lack ListGroups, OffsetFetch or DescribeTransactions", sent)
	}
	for _, k := range sent {
		if !readOnlyDiagnoseKeys[k] {
			t.Errorf("diagnose sent %s, not a read-only request", kmsg.NameForKey(k))
		}
	}

	code, text, errOut := runArgs(t, "diagnose", "--bootstrap", addr, "--topic", topic, "--partition", "0")
	if code != 0 {
		t.Fatalf("text: exit %d: %s", code, errOut)
	}
	for _, w := range []string{`pinned by transactional id "hang" (coordinator state Ongoing`, `group "orders-app" committed ` + itoa(lso) + `: BLOCKED`, `group "audit" committed`} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
}

// readOnlyDiagnoseKeys: Metadata, ListOffsets, DescribeProducers,
// ListTransactions, DescribeTransactions, DescribeConfigs, ListGroups,
// OffsetFetch, ApiVersions.
var readOnlyDiagnoseKeys = map[int16]bool{3: true, 2: true, 61: true, 66: true, 65: true, 32: true, 16: true, 9: true, 18: true}

// TestDiagnoseLiveConnFlags: `diagnose --bootstrap --topic --partition`
// reaches the cluster with the connection flags it accepts, as cluster mode
// does (they were once parsed and then ignored): a bad SASL mechanism or a
// certificate without its key is a usage error, before any dial.
func TestDiagnoseLiveConnFlags(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--sasl-mechanism", "bogus"}, "--sasl-mechanism must be"},
		{[]string{"--tls-cert", "client.pem"}, "--tls-cert and --tls-key go together"},
	} {
		args := append([]string{"diagnose", "--bootstrap", "127.0.0.1:1", "--topic", "t", "--partition", "0", "--dial-timeout", "500ms"}, tc.flags...)
		if code, _, errOut := runArgs(t, args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", tc.flags, code, exitUsage, tc.want, errOut)
		}
	}
}
