package live

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// TestLiveGroups: on a real kfake broker a transaction stays open while
// three groups have committed offsets: "app" at the LSO, "audit" two
// records below it, "ahead" at the high watermark (a read_uncommitted
// consumer). The watcher's update lists app (blocked) and audit (2
// records to go) as held up, in groups_behind and in the diagnosis's
// consumer_groups (ahead placed past the LSO), prints them in watch's
// words, and reads them with ListGroups and OffsetFetch only, never
// joining a group. Before anything is stuck, it sends neither.
func TestLiveGroups(t *testing.T) {
	t.Parallel()
	c, addr := cluster(t, "grp", 1)
	plain := client(t, addr, kgo.DefaultProduceTopic("grp"))
	produce(t, plain, 3)
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
	take := func() map[int16]int {
		mu.Lock()
		defer mu.Unlock()
		k := keys
		keys = map[int16]int{}
		return k
	}
	w := dial(t, Config{Brokers: []string{addr}, Topic: "grp"})
	settle(t, w)
	if k := take(); k[int16(kmsg.ListGroups)] > 0 || k[int16(kmsg.OffsetFetch)] > 0 {
		t.Errorf("nothing is stuck, yet the watcher read the groups: %v", k)
	}

	h := txnClient(t, addr, "grp", "holder")
	if err := h.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	first := produce(t, h, 2) - 1
	hwm := produce(t, plain, 2) + 1
	testfixture.CommitOffset(t, plain, "app", "grp", 0, first)
	testfixture.CommitOffset(t, plain, "audit", "grp", 0, first-2)
	testfixture.CommitOffset(t, plain, "ahead", "grp", 0, hwm)
	take()

	u := settle(t, w)
	p := u.Partitions[0]
	if p.EngineLSO != first || p.HighWatermark != hwm {
		t.Fatalf("LSO %d HWM %d, want %d %d", p.EngineLSO, p.HighWatermark, first, hwm)
	}
	var behind []string
	for _, g := range p.Groups {
		behind = append(behind, fmt.Sprintf("%s@%d blocked=%v lag=%d", g.Group, g.Committed, g.Blocked, g.LagOffsets))
	}
	if got, want := strings.Join(behind, "|"), fmt.Sprintf("app@%d blocked=true lag=%d|audit@%d blocked=false lag=%d", first, hwm-first, first-2, hwm-first+2); got != want {
		t.Errorf("groups behind %q, want %q", got, want)
	}
	d := p.Diagnosis
	var placed []string
	for _, g := range d.ConsumerGroups {
		placed = append(placed, fmt.Sprintf("%s %d behind=%v blocked=%v records=%d", g.Group, g.Offset, g.BehindLSO, g.Blocked, g.RecordsToLSO))
	}
	if got, want := strings.Join(placed, "|"), fmt.Sprintf("ahead %d behind=false blocked=false records=0|app %d behind=true blocked=true records=0|audit %d behind=true blocked=false records=2", hwm, first, first-2); got != want || d.GroupsSource != "OffsetFetch" {
		t.Errorf("consumer_groups %q from %q, want %q", got, d.GroupsSource, want)
	}
	var out bytes.Buffer
	if err := NewPrinter(&out, false).Print(u); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf(`group "app" committed %d: BLOCKED: waiting at the LSO`, first), fmt.Sprintf(`group "audit" committed %d: 2 records to receive before the LSO`, first-2)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("watch text lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), `"ahead"`) {
		t.Errorf("watch text lists a group past the LSO:\n%s", out.String())
	}
	k := take()
	if k[int16(kmsg.ListGroups)] == 0 || k[int16(kmsg.OffsetFetch)] == 0 {
		t.Errorf("requests %v: the groups were not read with ListGroups and OffsetFetch", k)
	}
	for key, n := range k {
		if !clusterReadOnlyKeys[key] {
			t.Errorf("sent %s %d times: not a read-only API", kmsg.NameForKey(key), n)
		}
	}
	if err := h.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}
