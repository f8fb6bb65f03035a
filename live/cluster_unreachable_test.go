package live

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/hostilebroker"
)

// deadAddr is a loopback port nothing listens on (connections refused).
func deadAddr(t *testing.T) (string, int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	p, _ := strconv.Atoi(port)
	return host, int32(p)
}

// TestClusterScanMostBrokersDown: a cluster whose Metadata advertises
// three brokers at closed ports beside the one that answers (and leads
// every partition). kgo sends each scan's Metadata to a broker it picks
// among those it knows, so scans failed for good within a few rounds,
// the error naming the seed. Every scan must now succeed, and one whose
// Metadata went to a dead broker names it; once the seed is gone too,
// the error names every broker tried. kgo mostly keeps to the broker
// that answered last, so the scans go on (up to 100, each a few
// milliseconds of loopback) until one has gone to a dead broker.
func TestClusterScanMostBrokersDown(t *testing.T) {
	b := hostilebroker.New(t, "orders", 3)
	b.HWM = 5
	dead := map[string]bool{}
	for id := int32(1); id <= 3; id++ {
		host, port := deadAddr(t)
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID, br.Host, br.Port = id, host, port
		b.MoreBrokers = append(b.MoreBrokers, br)
		dead[strconv.Itoa(int(id))] = true
	}
	cl, err := NewCluster(Config{Brokers: []string{b.Addr()}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	named := 0
	for i := 0; i < 100 && (i < 12 || named == 0); i++ {
		s, err := cl.Scan(context.Background(), ScanOptions{})
		if err != nil {
			t.Fatalf("scan %d: %v", i, err)
		}
		if s.Clear != 3 {
			t.Errorf("scan %d: %d partitions clear, want 3", i, s.Clear)
		}
		for _, br := range s.Brokers {
			if br.Err != "" {
				if !dead[strconv.Itoa(int(br.ID))] {
					t.Errorf("scan %d: broker %d, which answers, marked down: %s", i, br.ID, br.Err)
				}
				named++
			}
		}
		if len(s.Notes) > 0 {
			t.Logf("scan %d: %q", i, s.Notes)
		}
	}
	if named == 0 {
		t.Errorf("no scan named a dead broker")
	}
	b.Close()
	_, err = cl.Scan(context.Background(), ScanOptions{})
	if err == nil {
		t.Fatal("a scan with every broker down succeeded")
	}
	t.Logf("all down: %v", err)
	for _, want := range []string{"seed " + b.Addr(), "broker 1 (", "broker 2 (", "broker 3 ("} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q: %v", want, err)
		}
	}
}
