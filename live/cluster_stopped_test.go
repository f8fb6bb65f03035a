package live

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// stoppable is a kfake ListenFn whose listeners can be stopped one by one:
// the port closed and every connection it accepted cut, as when a broker's
// process dies. kfake does not notice, so its Metadata still names the
// stopped broker and the partitions it leads, as Kafka's does until the
// controller's session for the broker expires (broker.session.timeout.ms,
// 9 s by default in KRaft).
type stoppable struct {
	mu  sync.Mutex
	lns []*stopListener
}

func (s *stoppable) listen(network, addr string) (net.Listener, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	l := &stopListener{Listener: ln}
	s.mu.Lock()
	s.lns = append(s.lns, l)
	s.mu.Unlock()
	return l, nil
}

// stop stops the broker listening at addr.
func (s *stoppable) stop(t *testing.T, addr string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lns {
		if l.Addr().String() == addr {
			l.stop()
			return
		}
	}
	t.Fatalf("no listener at %s", addr)
}

type stopListener struct {
	net.Listener
	mu      sync.Mutex
	stopped bool
	conns   []net.Conn
}

func (l *stopListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns = append(l.conns, c)
	return c, nil
}

func (l *stopListener) stop() {
	l.mu.Lock()
	l.stopped = true
	conns := l.conns
	l.mu.Unlock()
	l.Listener.Close()
	for _, c := range conns {
		c.Close()
	}
}

// TestClusterBrokerStopped: three kfake brokers, one of them stopped after
// the workload (its port refuses connections, its connections are cut),
// the scan seeded with all three as an operator lists them. The scan
// reports the stopped broker, lists its partitions as unknown, still reads
// every partition of the other two and names their stuck ones with their
// transactional ids and first offsets, and calls no transaction hanging for
// want of the stopped broker's answer; the text says which broker and why.
func TestClusterBrokerStopped(t *testing.T) {
	t.Parallel()
	ln := &stoppable{}
	s := newScenario(t, 3, 6, kfake.ListenFn(ln.listen))
	const down = 2
	ln.stop(t, s.addrs[down])
	cl, err := NewCluster(Config{Brokers: s.addrs, DialTimeout: 2 * time.Second, Now: func() time.Time { return time.Now().Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	scan, err := cl.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Brokers) != 3 {
		t.Fatalf("brokers %+v: Metadata should still list the stopped one", scan.Brokers)
	}
	for _, b := range scan.Brokers {
		if (b.ID == down) != (b.Err != "") {
			t.Errorf("broker %d: error %q", b.ID, b.Err)
		}
	}
	led := 0
	for _, p := range scan.Partitions {
		pi := s.c.PartitionInfo(p.Topic, p.Partition)
		switch {
		case p.Leader == down:
			led++
			if !strings.Contains(p.Err, "broker 2 unreachable") || p.HighWatermark != -1 {
				t.Errorf("%s-%d on the stopped broker: %+v", p.Topic, p.Partition, p)
			}
		case p.Err != "":
			t.Errorf("%s-%d on a live broker: %s", p.Topic, p.Partition, p.Err)
		case p.HighWatermark != pi.HighWatermark || p.LastStableOffset != pi.LastStableOffset:
			t.Errorf("%s-%d: HWM %d LSO %d; kfake has %d %d", p.Topic, p.Partition, p.HighWatermark, p.LastStableOffset, pi.HighWatermark, pi.LastStableOffset)
		}
	}
	if led == 0 || scan.Unknown != led || scan.Stuck != 2 || scan.Clear != 18-led-2 || scan.Hanging != 0 {
		t.Fatalf("%d led by broker %d: %d unknown, %d stuck, %d clear, %d hanging", led, down, scan.Unknown, scan.Stuck, scan.Clear, scan.Hanging)
	}
	for _, st := range s.stuck[:2] {
		i := slices.IndexFunc(scan.Partitions, func(p PartitionLag) bool { return p.Topic == st.topic && p.Partition == st.partition })
		if i < 0 || i >= 2 {
			t.Fatalf("%s-%d ranked %d, want among the first two", st.topic, st.partition, i)
		}
		o := scan.Partitions[i].Open
		if len(o) != 1 || o[0].FirstOffset != s.first[st] || o[0].TransactionalID != st.txnID || o[0].Hanging {
			t.Errorf("%s-%d: %+v", st.topic, st.partition, o)
		}
	}
	var sb strings.Builder
	if err := scan.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	text := sb.String()
	for _, want := range []string{"2 stuck (0 hanging), " + itoa(int64(led)) + " unknown", "\nbroker 2 (127.0.0.1:", "connection refused", "\nUNKNOWN "} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	t.Logf("broker %d: %s; %d requests %v", down, scan.Brokers[down].Err, scan.RequestCount, scan.Requests)
}
