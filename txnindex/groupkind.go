package txnindex

import (
	"cmp"
	"slices"
	"strings"
)

// GroupKind is which of Kafka's group protocols a group uses. The group
// coordinator keeps every kind in __consumer_offsets and tells them apart
// by the type of the group's metadata record (CoordinatorRecordType):
// GroupMetadata for a classic group, ConsumerGroupMetadata for a KIP-848
// consumer group, ShareGroupMetadata for a KIP-932 share group,
// StreamsGroupMetadata for a KIP-1071 streams group.
type GroupKind string

// Group kinds, as ListGroups v5 names them (GroupType).
const (
	GroupClassic  GroupKind = "classic"
	GroupConsumer GroupKind = "consumer"
	GroupShare    GroupKind = "share"
	GroupStreams  GroupKind = "streams"
)

// GroupKinds are the kinds in the order reports list them.
var GroupKinds = []GroupKind{GroupConsumer, GroupClassic, GroupStreams, GroupShare}

// ParseGroupKind reads a kind as ListGroups v5 and kafka-groups.sh write
// it ("Classic", "consumer", ...); "" and ok false for any other.
func ParseGroupKind(s string) (GroupKind, bool) {
	k := GroupKind(strings.ToLower(s))
	if slices.Contains(GroupKinds, k) {
		return k, true
	}
	return "", false
}

// ShareIsolation is a share group's share.isolation.level (KIP-932, the
// dynamic group config KAFKA-16729 added): read_committed share groups
// acquire records only up to the LSO, so an open transaction holds them
// as it holds a read_committed consumer; read_uncommitted ones are bounded
// by the high watermark and not held.
type ShareIsolation string

// Share isolation levels; ShareIsolationUnknown when no group config was
// read (no __cluster_metadata in the log dir, DescribeConfigs refused).
const (
	ShareReadCommitted    ShareIsolation = "read_committed"
	ShareReadUncommitted  ShareIsolation = "read_uncommitted"
	ShareIsolationUnknown ShareIsolation = ""
	// DefaultShareIsolation is share.isolation.level's default: share
	// groups read uncommitted unless configured otherwise.
	DefaultShareIsolation = ShareReadUncommitted
)

// ShareGroupState is one share group's state on one partition, as its
// share coordinator serves it (ReadShareGroupState,
// DescribeShareGroupOffsets): the share-partition start offset (SPSO),
// below which every record is acknowledged or archived.
type ShareGroupState struct {
	Group string `json:"group"`
	// TopicID is Kafka's text form of the topic id the state is keyed by
	// (base64 URL, no padding); Topic its name where known.
	TopicID     string `json:"topic_id,omitempty"`
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	StartOffset int64  `json:"start_offset"`
	StateEpoch  int32  `json:"state_epoch"`
	LeaderEpoch int32  `json:"leader_epoch"`
	// Source says where it was read: "__share_group_state-3" with
	// RecordOffset the offset of the record that set the start offset,
	// or "DescribeShareGroupOffsets on broker 1" with RecordOffset -1.
	Source       string `json:"source"`
	RecordOffset int64  `json:"source_offset"`
}

// CompareShareStates orders states by group, topic, partition.
func CompareShareStates(a, b ShareGroupState) int {
	return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// SharePosition places a share group's start offset on a partition against
// its LSO. A share group's consumers acquire records from the start
// offset on; with share.isolation.level=read_committed the share-partition
// leader fetches up to the LSO only (the fetch is read_committed, as
// SharePartition's fetch isolation says), so the group cannot acquire past
// an open transaction's first offset. With read_uncommitted it reads to
// the high watermark and is not held.
type SharePosition struct {
	ShareGroupState
	Isolation ShareIsolation `json:"isolation_level"`
	// IsolationSource says where the level was read ("__cluster_metadata",
	// "DescribeConfigs", "default: no group config set"), or why it is
	// unknown.
	IsolationSource string `json:"isolation_level_source"`
	// BehindLSO: StartOffset <= LSO, the group has not got past where the
	// LSO is held.
	BehindLSO bool `json:"behind_lso"`
	// Held: BehindLSO and read_committed: the open transaction holds the
	// group back. MayBeHeld: BehindLSO with the level unknown.
	Held      bool `json:"held"`
	MayBeHeld bool `json:"may_be_held,omitempty"`
	// Blocked: Held with the start offset at the LSO: the group has
	// acknowledged everything it may acquire and receives nothing until
	// the LSO moves.
	Blocked      bool  `json:"blocked"`
	OffsetsToLSO int64 `json:"offsets_to_lso"`
}

// PlaceShareGroups returns the share groups' states on topic/partition
// placed against lso, by group. isolation gives each group's level; known
// says the group configs were read at all (a group absent from isolation
// then has the default level), else every level is unknown.
func PlaceShareGroups(states []ShareGroupState, topic string, partition int32, lso int64, isolation map[string]ShareIsolation, known bool, source string) []SharePosition {
	var out []SharePosition
	for _, s := range states {
		if s.Topic != topic || s.Partition != partition {
			continue
		}
		p := SharePosition{ShareGroupState: s, IsolationSource: source}
		switch lvl, ok := isolation[s.Group]; {
		case ok:
			p.Isolation = lvl
		case known:
			p.Isolation, p.IsolationSource = DefaultShareIsolation, "default (share.isolation.level not set for the group)"
		}
		if s.StartOffset <= lso && s.StartOffset >= 0 {
			p.BehindLSO, p.OffsetsToLSO = true, lso-s.StartOffset
			switch p.Isolation {
			case ShareReadCommitted:
				p.Held, p.Blocked = true, s.StartOffset == lso
			case ShareIsolationUnknown:
				p.MayBeHeld = true
			}
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b SharePosition) int { return CompareShareStates(a.ShareGroupState, b.ShareGroupState) })
	return out
}

// GroupKindCount is how many groups of one kind read a partition, and
// which; Affected are those an open transaction holds up (behind the LSO,
// and for share groups read_committed or of unknown level). The lists name
// the first ListCap (a diagnosis's limit) by name; GroupsTotal and
// AffectedTotal count them all.
type GroupKindCount struct {
	Kind          GroupKind `json:"kind"`
	Groups        []string  `json:"groups"`
	Affected      []string  `json:"affected"`
	GroupsTotal   int       `json:"groups_total"`
	AffectedTotal int       `json:"affected_total"`
}

// GroupsByKind counts the groups of each kind among gs (their Kind; ""
// when unknown) and ss (share groups), naming them and those held up: a
// group with a committed offset at or below the LSO, a share group held
// or perhaps held (its level unknown). Kinds with no group are left out;
// nil when there is no group at all.
func GroupsByKind(gs []GroupPosition, ss []SharePosition) []GroupKindCount {
	by := map[GroupKind]*GroupKindCount{}
	get := func(k GroupKind) *GroupKindCount {
		c := by[k]
		if c == nil {
			c = &GroupKindCount{Kind: k, Groups: []string{}, Affected: []string{}}
			by[k] = c
		}
		return c
	}
	for _, g := range gs {
		c := get(g.Kind)
		c.Groups = append(c.Groups, g.Group)
		if g.BehindLSO {
			c.Affected = append(c.Affected, g.Group)
		}
	}
	for _, s := range ss {
		c := get(GroupShare)
		c.Groups = append(c.Groups, s.Group)
		if s.Held || s.MayBeHeld {
			c.Affected = append(c.Affected, s.Group)
		}
	}
	var out []GroupKindCount
	for _, k := range append(slices.Clone(GroupKinds), "") {
		if c := by[k]; c != nil {
			c.Groups, c.Affected = slices.Compact(c.Groups), slices.Compact(c.Affected)
			c.GroupsTotal, c.AffectedTotal = len(c.Groups), len(c.Affected)
			out = append(out, *c)
		}
	}
	return out
}
