package live

// The consumer groups behind a stuck partition (cluster.go): ListGroups on
// every broker, then OffsetFetch on each group's coordinator.

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// listGroups asks every broker for the groups it coordinates.
func (s *scanner) listGroups(ctx context.Context) map[int32][]kmsg.ListGroupsResponseGroup {
	out := map[int32][]kmsg.ListGroupsResponseGroup{}
	var mu sync.Mutex
	eachBroker(s.brokers, func(b int32) {
		kresp, err := s.send(ctx, b, kmsg.NewPtrListGroupsRequest())
		if err == nil {
			err = kerr.ErrorForCode(kresp.(*kmsg.ListGroupsResponse).ErrorCode)
		}
		if err != nil {
			s.note("ListGroups on broker %d: %v: the groups it coordinates are not shown", b, err)
			return
		}
		var gs []kmsg.ListGroupsResponseGroup
		for _, g := range kresp.(*kmsg.ListGroupsResponse).Groups {
			// Consumer groups commit offsets (classic and KIP-848
			// ones alike), and so do KIP-1071 streams groups; an
			// empty protocol type is a group that only ever committed
			// (simple consumers, kafka-consumer-groups
			// --reset-offsets). Share groups keep a share-partition
			// state instead (shareStates). Connect groups keep no
			// offsets OffsetFetch can read.
			switch g.ProtocolType {
			case "consumer", "", "streams", "share":
				gs = append(gs, g)
			}
		}
		slices.SortFunc(gs, func(a, b kmsg.ListGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
		mu.Lock()
		out[b] = gs
		mu.Unlock()
	})
	if n := claimedOnce(out); n > 0 {
		s.note("ListGroups: %d groups were listed by more than one broker: each is asked of the lowest broker id that lists it", n)
	}
	return out
}

// offsetFetch lists, on each stuck partition, the groups whose committed
// offset is at or below its LSO (fetchOffsets): a read_committed group
// there cannot pass the LSO until the transaction ends.
func (s *scanner) offsetFetch(ctx context.Context, groups map[int32][]kmsg.ListGroupsResponseGroup, stuck []*PartitionLag) {
	type tp struct {
		t string
		p int32
	}
	byTP := map[tp]*PartitionLag{}
	for _, p := range stuck {
		byTP[tp{p.Topic, p.Partition}] = p
	}
	for _, c := range s.fetchOffsets(ctx, groups, stuck) {
		p := byTP[tp{c.topic, c.partition}]
		if p == nil || c.offset < 0 || c.offset > p.LastStableOffset {
			continue
		}
		p.Groups = append(p.Groups, GroupBehind{Group: c.group.Group, State: c.group.GroupState, Coordinator: c.coordinator, Committed: c.offset,
			LagOffsets: p.HighWatermark - c.offset, BehindLSO: true, Blocked: c.offset == p.LastStableOffset, Kind: groupKind(c.group)})
	}
	for _, p := range stuck {
		p.Groups, p.GroupsTotal = capGroups(p.Groups, s.o.Limit)
	}
}

// committedOffset is one group's committed offset on one partition, as its
// coordinator answered OffsetFetch.
type committedOffset struct {
	coordinator int32
	group       kmsg.ListGroupsResponseGroup
	topic       string
	partition   int32
	offset      int64 // -1: the group has no offset there
}

// fetchOffsets reads, per coordinator, the committed offsets of all its
// groups on parts (OffsetFetch v8+ carries many groups, KIP-709), as an
// admin fetch (no member id, epoch -1): no group is joined. Failures become
// notes; what was read is returned: of the groups and partitions asked
// about, each once, where the group has an offset.
func (s *scanner) fetchOffsets(ctx context.Context, groups map[int32][]kmsg.ListGroupsResponseGroup, parts []*PartitionLag) []committedOffset {
	var topics []string
	for _, p := range parts {
		if !slices.Contains(topics, p.Topic) {
			topics = append(topics, p.Topic)
		}
	}
	byID := map[[16]byte]string{}
	for _, t := range topics {
		byID[s.topicIDs[t]] = t
	}
	reqTopics := func() []kmsg.OffsetFetchRequestGroupTopic {
		var rts []kmsg.OffsetFetchRequestGroupTopic
		for _, t := range topics {
			rt := kmsg.NewOffsetFetchRequestGroupTopic()
			rt.Topic, rt.TopicID = t, s.topicIDs[t] // v8-9 by name, v10+ by id
			for _, p := range parts {
				if p.Topic == t {
					rt.Partitions = append(rt.Partitions, p.Partition)
				}
			}
			rts = append(rts, rt)
		}
		return rts
	}
	type gtp struct {
		g, t string
		p    int32
	}
	asked := map[gtp]bool{}
	for _, p := range parts {
		asked[gtp{t: p.Topic, p: p.Partition}] = true
	}
	var (
		mu   sync.Mutex
		out  []committedOffset
		have = map[gtp]bool{}
	)
	add := func(b int32, g kmsg.ListGroupsResponseGroup, topic string, part int32, committed int64) {
		k := gtp{g.Group, topic, part}
		if committed < 0 || !asked[gtp{t: topic, p: part}] {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !have[k] {
			have[k] = true
			out = append(out, committedOffset{coordinator: b, group: g, topic: topic, partition: part, offset: committed})
		}
	}
	// Share groups commit no offsets: OffsetFetch is for the others.
	committers := map[int32][]kmsg.ListGroupsResponseGroup{}
	for b, gs := range groups {
		for _, g := range gs {
			if groupKind(g) != txnindex.GroupShare {
				committers[b] = append(committers[b], g)
			}
		}
	}
	ids := make([]int32, 0, len(committers))
	for b := range committers {
		ids = append(ids, b)
	}
	slices.Sort(ids)
	eachBroker(ids, func(b int32) {
		gs := committers[b]
		req := kmsg.NewPtrOffsetFetchRequest()
		for _, g := range gs {
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group, rg.MemberEpoch, rg.Topics = g.Group, -1, reqTopics()
			req.Groups = append(req.Groups, rg)
		}
		kresp, err := s.send(ctx, b, req)
		if err != nil {
			s.note("OffsetFetch on broker %d: %v: its groups are not shown", b, err)
			return
		}
		resp := kresp.(*kmsg.OffsetFetchResponse)
		if resp.GetVersion() < 8 {
			// The broker predates KIP-709 (Kafka 3.0): the groups
			// were not encoded; ask one group at a time.
			s.offsetFetchEach(ctx, b, gs, reqTopics(), add)
			return
		}
		byName := make(map[string]*kmsg.ListGroupsResponseGroup, len(gs))
		for i := range gs {
			byName[gs[i].Group] = &gs[i]
		}
		for _, rg := range resp.Groups {
			g := byName[rg.Group]
			if err := kerr.ErrorForCode(rg.ErrorCode); err != nil || g == nil {
				if err != nil {
					s.note("OffsetFetch of group %q on broker %d: %v", rg.Group, b, err)
				}
				continue
			}
			for _, t := range rg.Topics {
				name := t.Topic
				if name == "" {
					name = byID[t.TopicID]
				}
				for _, rp := range t.Partitions {
					if rp.ErrorCode == 0 {
						add(b, *g, name, rp.Partition, rp.Offset)
					}
				}
			}
		}
	})
	slices.SortFunc(out, func(a, b committedOffset) int {
		return cmp.Or(strings.Compare(a.group.Group, b.group.Group), strings.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	return out
}

// offsetFetchEach is OffsetFetch for brokers before v8, one group a request.
func (s *scanner) offsetFetchEach(ctx context.Context, b int32, gs []kmsg.ListGroupsResponseGroup, topics []kmsg.OffsetFetchRequestGroupTopic,
	add func(int32, kmsg.ListGroupsResponseGroup, string, int32, int64)) {
	for _, g := range gs {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = g.Group
		for _, t := range topics {
			rt := kmsg.NewOffsetFetchRequestTopic()
			rt.Topic, rt.Partitions = t.Topic, t.Partitions
			req.Topics = append(req.Topics, rt)
		}
		kresp, err := s.send(ctx, b, req)
		if err != nil {
			s.note("OffsetFetch of group %q on broker %d: %v", g.Group, b, err)
			return
		}
		resp := kresp.(*kmsg.OffsetFetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			s.note("OffsetFetch of group %q on broker %d: %v", g.Group, b, err)
			continue
		}
		for _, t := range resp.Topics {
			for _, rp := range t.Partitions {
				if rp.ErrorCode == 0 {
					add(b, g, t.Topic, rp.Partition, rp.Offset)
				}
			}
		}
	}
}
