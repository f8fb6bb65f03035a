package live

// ScanCluster's first round (cluster.go): Metadata, then one ListOffsets per
// leader for the high watermark and one for the last stable offset.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadata asks for every topic (never creating one) and returns the
// partitions to scan, unknown ones already marked.
func (s *scanner) metadata(ctx context.Context, out *ClusterScan) ([]*PartitionLag, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil // all topics
	req.AllowAutoTopicCreation = false
	// Through the client rather than one broker: kgo learns the brokers
	// from the answer, which Broker(id) needs, and retries on another
	// seed if the first is down.
	mctx, cancel := context.WithTimeout(ctx, 2*s.o.RequestTimeout)
	defer cancel()
	s.count(req.Key())
	kresp, err := s.cl.Request(mctx, req)
	if err != nil && ctx.Err() == nil {
		kresp, err = s.metadataFallback(ctx, req, err)
	}
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.MetadataResponse)
	for _, b := range resp.Brokers {
		s.brokers = append(s.brokers, b.NodeID)
		s.sem[b.NodeID] = make(chan struct{}, s.o.PerBroker)
		bs := BrokerStatus{ID: b.NodeID, Host: b.Host, Port: b.Port}
		if b.Rack != nil {
			bs.Rack = *b.Rack
		}
		out.Brokers = append(out.Brokers, bs)
	}
	slices.Sort(s.brokers)
	slices.SortFunc(out.Brokers, func(a, b BrokerStatus) int { return cmp.Compare(a.ID, b.ID) })
	s.topicIDs = map[string][16]byte{}
	n := 0
	for _, t := range resp.Topics {
		n += len(t.Partitions)
	}
	// One allocation for all of them; parts points into it and never
	// outgrows it.
	all := make([]PartitionLag, 0, n)
	var parts []*PartitionLag
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		name := *t.Topic
		if (t.IsInternal && !s.o.Internal) || (s.o.Topics != nil && !s.o.Topics.MatchString(name)) {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			s.note("topic %q: Metadata answered %v; its partitions are not scanned", name, err)
			continue
		}
		out.Topics++
		s.topicIDs[name] = t.TopicID
		for _, mp := range t.Partitions {
			all = append(all, PartitionLag{Topic: name, Partition: mp.Partition, Leader: mp.Leader, HighWatermark: -1, LastStableOffset: -1,
				Open: []ClusterTxn{}, Groups: []GroupBehind{}})
			p := &all[len(all)-1]
			switch err := kerr.ErrorForCode(mp.ErrorCode); {
			case mp.Leader < 0:
				p.Err = "no leader"
				if err != nil {
					p.Err += " (" + err.Error() + ")"
				}
			case err != nil && !errors.Is(err, kerr.ReplicaNotAvailable):
				// REPLICA_NOT_AVAILABLE only says a follower is
				// missing; the leader still answers.
				p.Err = "Metadata: " + err.Error()
			case s.sem[mp.Leader] == nil:
				p.Err = fmt.Sprintf("leader %d is not among the brokers Metadata listed", mp.Leader)
			}
			parts = append(parts, p)
		}
	}
	for i := range out.Brokers {
		for _, p := range parts {
			if p.Err == "" && p.Leader == out.Brokers[i].ID {
				out.Brokers[i].Leads++
			}
		}
	}
	return parts, nil
}

// listOffsets reads, per leader, the high watermark and then the LSO of all
// its partitions: one ListOffsets each (timestamp -1 is the latest offset,
// which Kafka answers with the isolation's bound: the high watermark
// read_uncommitted, the LSO read_committed). The high watermark is read
// first so that the LSO, read later, cannot be found above an earlier high
// watermark by a transaction that began in between: what lag remains was
// there when the LSO was read.
func (s *scanner) listOffsets(ctx context.Context, parts []*PartitionLag) {
	ids, m := byLeader(parts)
	eachBroker(ids, func(b int32) {
		ps := m[b]
		hwm, err := s.listOffsetsOne(ctx, b, ps, 0)
		if err != nil {
			for _, p := range ps {
				p.Err = err.Error()
			}
			return
		}
		lso, err := s.listOffsetsOne(ctx, b, ps, 1)
		if err != nil {
			for _, p := range ps {
				p.Err = err.Error()
			}
			return
		}
		for i, p := range ps {
			switch {
			case hwm[i].err != "":
				p.Err = "ListOffsets(read_uncommitted): " + hwm[i].err
			case lso[i].err != "":
				p.Err = "ListOffsets(read_committed): " + lso[i].err
			default:
				p.HighWatermark, p.LastStableOffset = hwm[i].off, lso[i].off
				p.LSOLagOffsets = max(p.HighWatermark-p.LastStableOffset, 0)
			}
		}
	})
}

type offsetAnswer struct {
	off int64
	err string
}

func (s *scanner) listOffsetsOne(ctx context.Context, b int32, ps []*PartitionLag, iso int8) ([]offsetAnswer, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, iso
	byTopic(ps, func(topic string) {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		req.Topics = append(req.Topics, rt)
	}, func(i int, p *PartitionLag) {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p.Partition, -1, -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	})
	kresp, err := s.send(ctx, b, req)
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.ListOffsetsResponse)
	out := make([]offsetAnswer, len(ps))
	answer := func(rp *kmsg.ListOffsetsResponseTopicPartition) offsetAnswer {
		a := offsetAnswer{off: rp.Offset}
		if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
			a.err = err.Error()
		}
		return a
	}
	// Brokers answer in the order asked, partition for partition: match
	// by position, which at 3,000 partitions a broker saves a map of
	// them; fall back to a lookup for one that does not.
	if inOrder(ps, resp) {
		i := 0
		for t := range resp.Topics {
			for j := range resp.Topics[t].Partitions {
				out[i] = answer(&resp.Topics[t].Partitions[j])
				i++
			}
		}
		return out, nil
	}
	type tp struct {
		t string
		p int32
	}
	got := make(map[tp]offsetAnswer, len(ps))
	for t := range resp.Topics {
		for j := range resp.Topics[t].Partitions {
			rp := &resp.Topics[t].Partitions[j]
			got[tp{resp.Topics[t].Topic, rp.Partition}] = answer(rp)
		}
	}
	for i, p := range ps {
		a, ok := got[tp{p.Topic, p.Partition}]
		if !ok {
			a.err = fmt.Sprintf("broker %d's answer lacks the partition", b)
		}
		out[i] = a
	}
	return out, nil
}

// inOrder reports whether a ListOffsets answer lists exactly ps, in order.
func inOrder(ps []*PartitionLag, resp *kmsg.ListOffsetsResponse) bool {
	i := 0
	for t := range resp.Topics {
		for _, rp := range resp.Topics[t].Partitions {
			if i >= len(ps) || ps[i].Topic != resp.Topics[t].Topic || ps[i].Partition != rp.Partition {
				return false
			}
			i++
		}
	}
	return i == len(ps)
}

// metadataFallback asks each seed, then each broker of the previous scan
// (those that answered it first), for the Metadata the client's own
// request could not get. kgo sends Metadata to a broker it picks among all
// it knows, the advertised ones included: once most of those were
// unreachable, almost every scan failed, and the error named the bootstrap
// list although the seed answered. A broker that fails here is marked
// down (named in the scan's Brokers, sent nothing more); when none
// answers, the error names each one tried and why.
func (s *scanner) metadataFallback(ctx context.Context, req *kmsg.MetadataRequest, first error) (kmsg.Response, error) {
	type target struct {
		name string
		id   int32 // -1 for a seed
		br   *kgo.Broker
	}
	var ts []target
	for i, br := range s.cl.SeedBrokers() {
		name := fmt.Sprintf("seed %d", i+1)
		if i < len(s.o.seeds) {
			name = "seed " + s.o.seeds[i]
		}
		ts = append(ts, target{name, -1, br})
	}
	known := slices.Clone(s.o.known)
	down := func(b BrokerStatus) int {
		if b.Err != "" {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(known, func(a, b BrokerStatus) int { return cmp.Compare(down(a), down(b)) })
	for _, b := range known {
		ts = append(ts, target{fmt.Sprintf("broker %d (%s)", b.ID, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))), b.ID, s.cl.Broker(int(b.ID))})
	}
	// kgo's error names the address it dialed: the broker of the
	// previous scan there is the one that did not answer.
	var oe *net.OpError
	if errors.As(first, &oe) && oe.Addr != nil {
		for _, b := range known {
			if net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))) == oe.Addr.String() {
				s.markDown(ctx, b.ID, first)
				s.note("broker %d (%s) did not answer Metadata (%v); the scan went on with the brokers that answer", b.ID, oe.Addr, first)
			}
		}
	}
	var tried []string
	for _, t := range ts {
		rctx, cancel := context.WithTimeout(ctx, s.o.RequestTimeout)
		s.count(req.Key())
		resp, err := t.br.Request(rctx, req)
		cancel()
		if err == nil {
			if len(tried) > 0 {
				s.note("Metadata was answered by %s after %s did not answer", t.name, strings.Join(tried, "; "))
			}
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if t.id >= 0 {
			s.markDown(ctx, t.id, err)
		}
		tried = append(tried, fmt.Sprintf("%s: %v", t.name, err))
	}
	if len(tried) == 0 {
		return nil, first
	}
	return nil, &noAnswerError{tried: strings.Join(tried, "; "), first: first}
}

// noAnswerError is metadataFallback's failure: each broker tried and why,
// wrapping the client's own error, which a lone seed's failure already
// says (it is not printed twice).
type noAnswerError struct {
	tried string
	first error
}

func (e *noAnswerError) Error() string {
	if strings.Contains(e.tried, e.first.Error()) {
		return "no broker answered Metadata (" + e.tried + ")"
	}
	return "no broker answered Metadata (" + e.tried + "): " + e.first.Error()
}

func (e *noAnswerError) Unwrap() error { return e.first }
