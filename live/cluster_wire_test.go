package live

// What a cluster scan costs on the wire: bytes per scan, requests in flight
// per broker, and the check that a ListOffsets answer lists the partitions
// asked, in order.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkClusterScan scans 1,000 and 10,000 partitions (topics of 100
// partitions on three kfake brokers, three of them stuck, the groups
// behind) and reports the requests and bytes per scan; the request count
// does not change with the partitions.
// Its baseline, measured on the same cluster in the same run, is one
// Metadata request for all topics: what listing the partitions costs any
// admin tool, and the scan's own first request.
func BenchmarkClusterScan(b *testing.B) {
	for _, topics := range []int32{10, 100} {
		n := int(topics) * 100
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			s := newScenario(b, topics, 100)
			wire := &wireBytes{}
			cl := benchClient(b, s.addrs, kgo.WithHooks(wire))
			ctx := context.Background()
			if _, err := ScanCluster(ctx, cl, ScanOptions{}); err != nil { // connect
				b.Fatal(err)
			}
			b.Run("scan", func(b *testing.B) {
				wire.take()
				requests, scans := 0, 0
				for b.Loop() {
					scan, err := ScanCluster(ctx, cl, ScanOptions{})
					if err != nil {
						b.Fatal(err)
					}
					if len(scan.Partitions) != n || scan.Stuck != 3 {
						b.Fatalf("%d partitions, %d stuck", len(scan.Partitions), scan.Stuck)
					}
					requests = scan.RequestCount
					scans++
				}
				w, r := wire.take()
				b.ReportMetric(float64(requests), "requests/scan")
				b.ReportMetric(float64(w)/float64(scans), "sent-B/scan")
				b.ReportMetric(float64(r)/float64(scans), "received-B/scan")
			})
			b.Run("metadata", func(b *testing.B) {
				wire.take()
				reqs := 0
				for b.Loop() {
					req := kmsg.NewPtrMetadataRequest()
					resp, err := req.RequestWith(ctx, cl)
					if err != nil {
						b.Fatal(err)
					}
					if len(resp.Topics) != int(topics) {
						b.Fatalf("%d topics", len(resp.Topics))
					}
					reqs++
				}
				w, r := wire.take()
				b.ReportMetric(1, "requests/scan")
				b.ReportMetric(float64(w)/float64(reqs), "sent-B/scan")
				b.ReportMetric(float64(r)/float64(reqs), "received-B/scan")
			})
		})
	}
}

// wireBytes counts the bytes a client writes and reads.
type wireBytes struct{ w, r atomic.Int64 }

func (h *wireBytes) OnBrokerWrite(_ kgo.BrokerMetadata, _ int16, n int, _, _ time.Duration, _ error) {
	h.w.Add(int64(n))
}

func (h *wireBytes) OnBrokerRead(_ kgo.BrokerMetadata, _ int16, n int, _, _ time.Duration, _ error) {
	h.r.Add(int64(n))
}

func (h *wireBytes) take() (int64, int64) { return h.w.Swap(0), h.r.Swap(0) }

// inflight tracks, per broker, the requests written and not yet answered.
type inflight struct {
	mu       sync.Mutex
	now, max map[int32]int
}

func (h *inflight) OnBrokerWrite(m kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil && key != int16(kmsg.ApiVersions) {
		h.now[m.NodeID]++
		h.max[m.NodeID] = max(h.max[m.NodeID], h.now[m.NodeID])
	}
}

func (h *inflight) OnBrokerRead(m kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if key != int16(kmsg.ApiVersions) {
		h.now[m.NodeID]--
	}
}

func (h *inflight) reset() map[int32]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.max
	h.now, h.max = map[int32]int{}, map[int32]int{}
	return m
}

// TestClusterPerBroker: ScanCluster on a caller's client keeps at most
// PerBroker requests in flight to a broker. The brokers answer slowly
// (kfake runs control functions one at a time), so requests the scan sends
// together overlap: with a bound of 4 some broker has two in flight,
// which shows the count can see it; with 1, none does.
func TestClusterPerBroker(t *testing.T) {
	t.Parallel()
	s := newScenario(t, 3, 6)
	h := &inflight{}
	h.reset()
	cl := benchClient(t, s.addrs, kgo.WithHooks(h))
	ctx := context.Background()
	if _, err := ScanCluster(ctx, cl, ScanOptions{}); err != nil { // connect
		t.Fatal(err)
	}
	s.c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		s.c.KeepControl()
		time.Sleep(10 * time.Millisecond)
		return nil, nil, false
	})
	for _, bound := range []int{4, 1} {
		h.reset()
		scan, err := ScanCluster(ctx, cl, ScanOptions{PerBroker: bound})
		if err != nil {
			t.Fatal(err)
		}
		peak := h.reset()
		most := slices.Max(slices.Collect(maps.Values(peak)))
		switch {
		case scan.Stuck != 3:
			t.Fatalf("bound %d: %d stuck", bound, scan.Stuck)
		case bound == 1 && most != 1:
			t.Errorf("bound 1: %v in flight at most", peak)
		case bound == 4 && most < 2:
			t.Errorf("bound 4: %v in flight at most: the test cannot see the bound work", peak)
		}
		t.Logf("bound %d: at most %v in flight per broker", bound, peak)
	}
}

// TestClusterInOrder: an answer that lists the partitions in another order
// than asked is matched by name, not by position.
func TestClusterInOrder(t *testing.T) {
	ps := []*PartitionLag{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}}
	resp := kmsg.NewPtrListOffsetsResponse()
	for _, tp := range []struct {
		t string
		p []int32
	}{{"a", []int32{0, 1}}, {"b", []int32{0}}} {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = tp.t
		for _, p := range tp.p {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if !inOrder(ps, resp) {
		t.Fatal("the asked order is not in order")
	}
	resp.Topics[0].Partitions[0].Partition, resp.Topics[0].Partitions[1].Partition = 1, 0
	if inOrder(ps, resp) {
		t.Fatal("swapped partitions taken as in order")
	}
	resp.Topics[0].Partitions = resp.Topics[0].Partitions[:1]
	if inOrder(ps, resp) || inOrder(ps[:2], resp) {
		t.Fatal("a short answer taken as in order")
	}
}
