package live

// The scanner's request plumbing for ScanCluster (cluster.go): one request
// to one broker at a time, bounded per broker, counted, and a broker that
// fails once is marked down for the rest of the scan.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// scanner is the state of one scan.
type scanner struct {
	cl  *kgo.Client
	o   ScanOptions
	now time.Time

	sem map[int32]chan struct{} // per broker, filled by metadata before any concurrency

	mu    sync.Mutex
	reqs  map[string]int
	down  map[int32]error
	notes []string

	brokers  []int32             // every broker of the Metadata answer
	topicIDs map[string][16]byte // for OffsetFetch v10, which names topics by id
}

func (s *scanner) note(format string, args ...any) {
	s.mu.Lock()
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *scanner) downErr(b int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down[b]
}

// send issues one request to one broker: it waits for one of the broker's
// PerBroker slots, bounds the request by RequestTimeout, and marks the
// broker down on a transport failure, after which nothing more is sent to
// it in this scan (a dead broker costs one timeout, not one per phase).
// kgo's Broker.Request does not retry.
func (s *scanner) send(ctx context.Context, b int32, req kmsg.Request) (kmsg.Response, error) {
	release, err := s.acquire(ctx, b)
	if err != nil {
		return nil, err
	}
	defer release()
	rctx, cancel := context.WithTimeout(ctx, s.o.RequestTimeout)
	defer cancel()
	s.count(req.Key())
	resp, err := s.cl.Broker(int(b)).Request(rctx, req)
	if err != nil {
		return nil, s.markDown(ctx, b, err)
	}
	return resp, nil
}

func (s *scanner) acquire(ctx context.Context, b int32) (func(), error) {
	if err := s.downErr(b); err != nil {
		return nil, err
	}
	sem := s.sem[b]
	if sem == nil {
		return nil, fmt.Errorf("broker %d is not in the Metadata answer", b)
	}
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := s.downErr(b); err != nil { // it failed while we waited
		<-sem
		return nil, err
	}
	return func() { <-sem }, nil
}

func (s *scanner) count(key int16) {
	s.mu.Lock()
	s.reqs[kmsg.NameForKey(key)]++
	s.mu.Unlock()
}

// markDown records a broker's failure and returns the error that names it.
func (s *scanner) markDown(ctx context.Context, b int32, err error) error {
	if ctx.Err() != nil {
		return err // the scan was cancelled, the broker did nothing wrong
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down[b] == nil {
		s.down[b] = fmt.Errorf("broker %d unreachable: %w", b, err)
	}
	return s.down[b]
}

// byLeader groups partitions by leader, in broker id order.
func byLeader(ps []*PartitionLag) ([]int32, map[int32][]*PartitionLag) {
	m := map[int32][]*PartitionLag{}
	for _, p := range ps {
		if p.Err == "" {
			m[p.Leader] = append(m[p.Leader], p)
		}
	}
	ids := make([]int32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, m
}

// eachBroker runs fn for each broker concurrently and waits.
func eachBroker(ids []int32, fn func(b int32)) {
	var wg sync.WaitGroup
	for _, b := range ids {
		wg.Go(func() { fn(b) })
	}
	wg.Wait()
}

// byTopic builds the topics of a request from ps: it calls topic once per
// topic, in the order the topics first appear in ps, and part for each
// partition with the index of its topic among those calls.
func byTopic(ps []*PartitionLag, topic func(name string), part func(i int, p *PartitionLag)) {
	ti := map[string]int{}
	for _, p := range ps {
		i, ok := ti[p.Topic]
		if !ok {
			i = len(ti)
			ti[p.Topic] = i
			topic(p.Topic)
		}
		part(i, p)
	}
}
