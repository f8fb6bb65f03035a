package live

// The groups of every kind behind a stuck partition, read-only: ListGroups
// v5 names each group's kind (GroupType, KIP-848); ConsumerGroupDescribe
// says which members of a KIP-848 consumer group are assigned the
// partition; DescribeShareGroupOffsets gives a KIP-932 share group's start
// offset on it, and DescribeConfigs its share.isolation.level, which says
// whether the LSO holds it. A broker that does not know a request (older
// than the KIP, or kfake without it) is said in a note, and the rest of the
// scan stands.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// groupKind is a listed group's kind: ListGroups v5's GroupType; before
// v5 (no GroupType) a group of protocol type "consumer" or "" is classic,
// the only kind such a broker holds offsets for.
func groupKind(g kmsg.ListGroupsResponseGroup) txnindex.GroupKind {
	if k, ok := txnindex.ParseGroupKind(g.GroupType); ok {
		return k
	}
	if g.ProtocolType == "share" {
		return txnindex.GroupShare
	}
	if g.GroupType == "" && (g.ProtocolType == "consumer" || g.ProtocolType == "") {
		return txnindex.GroupClassic
	}
	return ""
}

// errUnsupported marks a request the broker does not support: kgo refuses
// to send a request whose key the broker's ApiVersions did not list
// (kgo's errBrokerTooOld, unexported), and a broker answers a version it
// does not know with UNSUPPORTED_VERSION.
type errUnsupported struct{ name string }

func (e errUnsupported) Error() string {
	return e.name + " is not supported by the broker (older than its KIP)"
}

// sendOptional is send for a request a broker may not support: that is
// an errUnsupported, not the broker down, and is not counted (nothing was
// sent).
func (s *scanner) sendOptional(ctx context.Context, b int32, req kmsg.Request) (kmsg.Response, error) {
	release, err := s.acquire(ctx, b)
	if err != nil {
		return nil, err
	}
	defer release()
	rctx, cancel := context.WithTimeout(ctx, s.o.RequestTimeout)
	defer cancel()
	resp, err := s.cl.Broker(int(b)).Request(rctx, req)
	if err != nil && strings.Contains(err.Error(), "broker is too old") {
		return nil, errUnsupported{kmsg.NameForKey(req.Key())}
	}
	s.count(req.Key())
	if err != nil {
		return nil, s.markDown(ctx, b, err)
	}
	return resp, nil
}

// unsupportedCode reports a top-level error code that means the request is
// not supported.
func unsupportedCode(code int16, name string) error {
	if code == kerr.UnsupportedVersion.Code || code == kerr.InvalidRequest.Code {
		return errUnsupported{name}
	}
	return kerr.ErrorForCode(code)
}

// byKind returns, per coordinator, the listed groups of kind k.
func byKind(groups map[int32][]kmsg.ListGroupsResponseGroup, k txnindex.GroupKind) map[int32][]string {
	out := map[int32][]string{}
	for b, gs := range groups {
		for _, g := range gs {
			if groupKind(g) == k {
				out[b] = append(out[b], g.Group)
			}
		}
	}
	return out
}

// brokerIDs is the keys of m with a group, sorted.
func brokerIDs(m map[int32][]string) []int32 {
	var ids []int32
	for b, gs := range m {
		if len(gs) > 0 {
			ids = append(ids, b)
		}
	}
	slices.Sort(ids)
	return ids
}

// assignedMembers asks each coordinator of a KIP-848 consumer group with
// ConsumerGroupDescribe which members are assigned which partitions of
// parts: group -> "topic-partition" -> member client ids.
func (s *scanner) assignedMembers(ctx context.Context, groups map[int32][]kmsg.ListGroupsResponseGroup, parts []*PartitionLag) map[string]map[string][]string {
	want := byKind(groups, txnindex.GroupConsumer)
	out := map[string]map[string][]string{}
	var mu sync.Mutex
	byID := map[[16]byte]string{}
	for t, id := range s.topicIDs {
		byID[id] = t
	}
	wanted := map[string]bool{}
	for _, p := range parts {
		wanted[fmt.Sprintf("%s-%d", p.Topic, p.Partition)] = true
	}
	eachBroker(brokerIDs(want), func(b int32) {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = want[b]
		kresp, err := s.sendOptional(ctx, b, req)
		var resp *kmsg.ConsumerGroupDescribeResponse
		if err == nil {
			resp = kresp.(*kmsg.ConsumerGroupDescribeResponse)
		}
		if err != nil {
			s.note("ConsumerGroupDescribe on broker %d: %v: the members of its consumer groups (KIP-848) are not shown", b, err)
			return
		}
		for _, g := range resp.Groups {
			if err := unsupportedCode(g.ErrorCode, "ConsumerGroupDescribe"); err != nil {
				s.note("ConsumerGroupDescribe of group %q on broker %d: %v", g.Group, b, err)
				continue
			}
			m := map[string][]string{}
			for _, mem := range g.Members {
				for _, tp := range mem.Assignment.TopicPartitions {
					name := tp.Topic
					if name == "" {
						name = byID[tp.TopicID]
					}
					for _, p := range tp.Partitions {
						if k := fmt.Sprintf("%s-%d", name, p); wanted[k] {
							m[k] = append(m[k], mem.ClientID)
						}
					}
				}
			}
			mu.Lock()
			out[g.Group] = m
			mu.Unlock()
		}
	})
	return out
}

// shareRead is what the share groups' coordinators answered: the groups'
// start offsets on the partitions asked, and their isolation levels.
type shareRead struct {
	answered bool // some coordinator answered DescribeShareGroupOffsets
	states   []txnindex.ShareGroupState
	levels   map[string]txnindex.ShareIsolation
	coordOf  map[string]int32 // the broker that answered DescribeConfigs for the group
}

// readShares asks each coordinator of a share group for its groups' start
// offsets on parts (DescribeShareGroupOffsets) and their
// share.isolation.level (DescribeConfigs of the GROUP resources); nil
// when no share group is listed.
func (s *scanner) readShares(ctx context.Context, groups map[int32][]kmsg.ListGroupsResponseGroup, parts []*PartitionLag) *shareRead {
	want := byKind(groups, txnindex.GroupShare)
	if len(want) == 0 {
		return nil
	}
	var mu sync.Mutex
	r := &shareRead{levels: map[string]txnindex.ShareIsolation{}, coordOf: map[string]int32{}}
	byTopic := map[string][]int32{}
	for _, p := range parts {
		byTopic[p.Topic] = append(byTopic[p.Topic], p.Partition)
	}
	eachBroker(brokerIDs(want), func(b int32) {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		for _, g := range want[b] {
			rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
			rg.GroupID = g
			for _, t := range slices.Sorted(maps.Keys(byTopic)) {
				rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
				rt.Topic, rt.Partitions = t, byTopic[t]
				rg.Topics = append(rg.Topics, rt)
			}
			req.Groups = append(req.Groups, rg)
		}
		kresp, err := s.sendOptional(ctx, b, req)
		if err != nil {
			s.note("DescribeShareGroupOffsets on broker %d: %v: its share groups (KIP-932) are not shown", b, err)
			return
		}
		mu.Lock()
		r.answered = true
		mu.Unlock()
		src := fmt.Sprintf("DescribeShareGroupOffsets on broker %d", b)
		for _, g := range kresp.(*kmsg.DescribeShareGroupOffsetsResponse).Groups {
			if err := unsupportedCode(g.ErrorCode, "DescribeShareGroupOffsets"); err != nil {
				s.note("DescribeShareGroupOffsets of group %q on broker %d: %v", g.GroupID, b, err)
				continue
			}
			for _, t := range g.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 || p.StartOffset < 0 {
						continue // no state: the group has not read the partition
					}
					mu.Lock()
					r.states = append(r.states, txnindex.ShareGroupState{Group: g.GroupID, Topic: t.Topic, Partition: p.Partition,
						StartOffset: p.StartOffset, StateEpoch: -1, LeaderEpoch: p.LeaderEpoch, Source: src, RecordOffset: -1})
					mu.Unlock()
				}
			}
		}
		lv := s.shareIsolation(ctx, b, want[b])
		mu.Lock()
		for g, l := range lv {
			r.levels[g], r.coordOf[g] = l, b
		}
		mu.Unlock()
	})
	return r
}

// place is the share groups on one partition against its LSO. DescribeConfigs
// lists a group's effective level, the default included: a group it did not
// list has its level unknown.
func (r *shareRead) place(topic string, partition int32, lso int64) []txnindex.SharePosition {
	if r == nil || !r.answered {
		return nil
	}
	ps := txnindex.PlaceShareGroups(r.states, topic, partition, lso, r.levels, false,
		"unknown: DescribeConfigs of the group did not answer (Kafka's default share.isolation.level is read_uncommitted, which the LSO does not hold)")
	for i := range ps {
		if sp := &ps[i]; sp.Isolation != txnindex.ShareIsolationUnknown {
			sp.IsolationSource = fmt.Sprintf("DescribeConfigs on broker %d", r.coordOf[sp.Group])
		}
	}
	if ps == nil {
		ps = []txnindex.SharePosition{}
	}
	return ps
}

// shareIsolation reads groups' share.isolation.level with DescribeConfigs
// (GROUP resources, KIP-932's dynamic group configs) on broker b, by group;
// a group it could not describe is left out.
func (s *scanner) shareIsolation(ctx context.Context, b int32, groups []string) map[string]txnindex.ShareIsolation {
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, g := range groups {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName, r.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, g, []string{"share.isolation.level"}
		req.Resources = append(req.Resources, r)
	}
	kresp, err := s.sendOptional(ctx, b, req)
	if err != nil {
		s.note("DescribeConfigs of share groups on broker %d: %v: their isolation level is unknown", b, err)
		return nil
	}
	out := map[string]txnindex.ShareIsolation{}
	for _, r := range kresp.(*kmsg.DescribeConfigsResponse).Resources {
		if r.ErrorCode != 0 {
			s.note("DescribeConfigs of share group %q on broker %d: %v", r.ResourceName, b, kerr.ErrorForCode(r.ErrorCode))
			continue
		}
		for _, c := range r.Configs {
			switch {
			case c.Name != "share.isolation.level":
			case c.Value != nil:
				out[r.ResourceName] = txnindex.ShareIsolation(*c.Value)
			case c.Source == kmsg.ConfigSourceDefaultConfig:
				// A default listed without its value (Kafka sends
				// the value; kfake sends none): the default.
				out[r.ResourceName] = txnindex.DefaultShareIsolation
			}
		}
	}
	return out
}

// writeShareGroups writes a stuck partition's share groups, as diagnose's
// runbook does (present.ShareLine).
func writeShareGroups(sb *strings.Builder, ss []txnindex.SharePosition) {
	for _, s := range ss {
		fmt.Fprintf(sb, "  %s\n", present.ShareLine(s))
	}
}
