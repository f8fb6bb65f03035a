package live

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/hostilebroker"
	"github.com/txnscope/txnscope/txnindex"
)

// TestClusterScanHostileClaims: brokers that claim far more than a scan
// asked about. What a scan keeps of each answer is bounded by its own
// request: the partitions it asked about, each once, and per partition
// at most txnindex.ListCap open transactions and groups behind, the rest
// counted. (A DescribeProducers answer of 1,000 partitions × 1,000
// producers made `diagnose --bootstrap` allocate 4.35 GB; 2,000 brokers
// each claiming one group over 2,000 partitions made 4,000,000
// groups_behind entries.)
func TestClusterScanHostileClaims(t *testing.T) {
	cases := []struct {
		name       string
		parts      int32
		claims     hostilebroker.Claims
		open       int // open transactions kept per partition
		openTotal  int
		groups     int // groups behind kept per partition
		groupTotal int
		maxAlloc   uint64
	}{
		{name: "1,000 open producers on every partition, twice, and on partitions not asked about",
			parts: 100, claims: hostilebroker.Claims{OpenProducers: 1000, Everywhere: true},
			open: txnindex.ListCap, openTotal: 1000, maxAlloc: 120 << 20},
		{name: "60 brokers each claiming one group over every partition, twice",
			parts: 300, claims: hostilebroker.Claims{Nodes: 60, Groups: []string{"g"}, Everywhere: true, OpenProducers: 1},
			open: 1, openTotal: 1, groups: 1, groupTotal: 1, maxAlloc: 200 << 20},
		{name: "300 groups on every partition",
			parts: 20, claims: hostilebroker.Claims{Groups: groupNames(300), OpenProducers: 1},
			open: 1, openTotal: 1, groups: txnindex.ListCap, groupTotal: 300, maxAlloc: 100 << 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := hostilebroker.New(t, "claims", tc.parts)
			b.HWM, b.LSO, b.Claims = 5000, 10, tc.claims
			b.Claims.LastWrite = time.Now().Add(-time.Hour).UnixMilli()
			cl, err := NewCluster(Config{Brokers: []string{b.Addr()}, DialTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			o := ScanOptions{Topics: regexp.MustCompile("^claims$"), MaxTxnTimeout: 15 * time.Minute}
			// A first scan connects to every node; the second is measured.
			if _, err := cl.Scan(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			var s *ClusterScan
			alloc := allocDuring(func() { s, err = cl.Scan(context.Background(), o) })
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(s)
			t.Logf("scan allocated %d MiB; its JSON is %d bytes", alloc>>20, len(js))
			if len(s.Partitions) != int(tc.parts) || s.Stuck != int(tc.parts) {
				t.Fatalf("%d partitions, %d stuck: want %d, all stuck", len(s.Partitions), s.Stuck, tc.parts)
			}
			for i := range s.Partitions {
				p := &s.Partitions[i]
				if len(p.Open) != tc.open || p.OpenTotal != tc.openTotal {
					t.Fatalf("%s-%d: %d open transactions listed of %d; want %d of %d", p.Topic, p.Partition, len(p.Open), p.OpenTotal, tc.open, tc.openTotal)
				}
				if len(p.Groups) != tc.groups || p.GroupsTotal != tc.groupTotal {
					t.Fatalf("%s-%d: %d groups behind listed of %d; want %d of %d", p.Topic, p.Partition, len(p.Groups), p.GroupsTotal, tc.groups, tc.groupTotal)
				}
				if p.PinnedBy == nil || p.PinnedBy.ProducerID != 1000 || p.PinnedBy.FirstOffset != 10 {
					t.Fatalf("%s-%d: pinned by %+v, want producer 1000 from offset 10", p.Topic, p.Partition, p.PinnedBy)
				}
			}
			if alloc > tc.maxAlloc {
				t.Errorf("the scan allocated %d MiB, more than %d", alloc>>20, tc.maxAlloc>>20)
			}
			// The partition's diagnosis says how many there are.
			d := s.Diagnosis(&s.Partitions[0])
			if len(d.OpenTransactions) != tc.open || d.OpenTransactionsTotal != tc.openTotal {
				t.Errorf("diagnosis lists %d open transactions of %d; want %d of %d", len(d.OpenTransactions), d.OpenTransactionsTotal, tc.open, tc.openTotal)
			}
			if len(d.ConsumerGroups) != tc.groups || d.ConsumerGroupsTotal != tc.groupTotal {
				t.Errorf("diagnosis lists %d groups of %d; want %d of %d", len(d.ConsumerGroups), d.ConsumerGroupsTotal, tc.groups, tc.groupTotal)
			}
		})
	}
}

func groupNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("group-%04d", i)
	}
	return out
}
