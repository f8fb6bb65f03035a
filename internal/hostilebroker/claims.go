package hostilebroker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Claims are answers of a cluster that claims far more than it holds: a
// scan's DescribeProducers, ListGroups and OffsetFetch answered with as many
// entries as a test asks for, every node of Metadata at this one address.
// The zero value claims nothing (the healthy answers of Default).
type Claims struct {
	// Nodes, above 1, is how many brokers Metadata advertises: ids 0 to
	// Nodes-1, all at this broker's address, node 0 leading every
	// partition. Each answers as this one does.
	Nodes int32
	// OpenProducers, when above 0, is how many producers DescribeProducers
	// lists with a transaction open on each partition it answers:
	// producer ids 1000 to 1000+OpenProducers-1 (the same on every
	// partition), their transactions beginning at LSO, LSO+1, … (the
	// first pins the LSO), last written at LastWrite.
	OpenProducers int
	LastWrite     int64
	// Everywhere: DescribeProducers and OffsetFetch answer every
	// partition of each topic asked about and as many it does not have,
	// each listed twice, whatever partitions were asked for.
	Everywhere bool
	// Groups are the consumer groups every node's ListGroups lists (each
	// claiming to coordinate them all); OffsetFetch answers each group
	// asked about with Committed on every partition it answers.
	Groups    []string
	Committed int64
}

type answerKey struct{ key, version int16 }

// claimed is the Claims' answer to req, nil when they claim nothing of it.
func (b *Broker) claimed(req kmsg.Request) *Reply {
	c := &b.Claims
	switch req := req.(type) {
	case *kmsg.DescribeProducersRequest:
		if c.OpenProducers <= 0 {
			return nil
		}
		return b.cached(req, func() kmsg.Response { return b.describeProducers(req) })
	case *kmsg.ListGroupsRequest:
		if len(c.Groups) == 0 {
			return nil
		}
		resp := kmsg.NewPtrListGroupsResponse()
		for _, g := range c.Groups {
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group, lg.ProtocolType, lg.GroupState = g, "consumer", "Stable"
			resp.Groups = append(resp.Groups, lg)
		}
		return &Reply{Resp: resp}
	case *kmsg.OffsetFetchRequest:
		if len(c.Groups) == 0 {
			return nil
		}
		return &Reply{Resp: b.offsetFetch(req)}
	}
	return nil
}

// cached answers req with resp(), encoded once per version when the answer
// does not depend on the partitions asked for.
func (b *Broker) cached(req kmsg.Request, resp func() kmsg.Response) *Reply {
	if !b.Claims.Everywhere {
		return &Reply{Resp: resp()}
	}
	k := answerKey{req.Key(), req.GetVersion()}
	if raw, ok := b.answers.Load(k); ok {
		return &Reply{Raw: raw.([]byte)}
	}
	r := resp()
	r.SetVersion(req.GetVersion())
	raw := r.AppendTo(nil)
	b.answers.Store(k, raw)
	return &Reply{Raw: raw}
}

// partitionsOf is the partitions an answer lists for asked: asked, or with
// Everywhere every partition of the topic and as many that it does not
// have, each twice.
func (b *Broker) partitionsOf(asked []int32) []int32 {
	if !b.Claims.Everywhere {
		return asked
	}
	out := make([]int32, 0, 4*b.Partitions)
	for i := range 2 * b.Partitions {
		out = append(out, i, i)
	}
	return out
}

func (b *Broker) describeProducers(req *kmsg.DescribeProducersRequest) kmsg.Response {
	resp := kmsg.NewPtrDescribeProducersResponse()
	for _, rt := range req.Topics {
		t := kmsg.NewDescribeProducersResponseTopic()
		t.Topic = rt.Topic
		for _, id := range b.partitionsOf(rt.Partitions) {
			p := kmsg.NewDescribeProducersResponseTopicPartition()
			p.Partition = id
			p.ActiveProducers = make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, b.Claims.OpenProducers)
			for i := range p.ActiveProducers {
				ap := &p.ActiveProducers[i]
				*ap = kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = 1000+int64(i), 0, 0
				ap.LastTimestamp, ap.CoordinatorEpoch = b.Claims.LastWrite, 0
				ap.CurrentTxnStartOffset = max(b.LSO, 0) + int64(i)
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

func (b *Broker) offsetFetch(req *kmsg.OffsetFetchRequest) kmsg.Response {
	resp := kmsg.NewPtrOffsetFetchResponse()
	part := func(id int32) kmsg.OffsetFetchResponseGroupTopicPartition {
		p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = id, b.Claims.Committed, -1
		return p
	}
	for _, rg := range req.Groups {
		g := kmsg.NewOffsetFetchResponseGroup()
		g.Group = rg.Group
		for _, rt := range rg.Topics {
			t := kmsg.NewOffsetFetchResponseGroupTopic()
			t.Topic, t.TopicID = rt.Topic, rt.TopicID
			for _, id := range b.partitionsOf(rt.Partitions) {
				t.Partitions = append(t.Partitions, part(id))
			}
			g.Topics = append(g.Topics, t)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}
