package internaltopic

import (
	"fmt"
	"slices"

	"github.com/txnscope/txnscope/txnindex"
)

// groupRecordType is one of the group coordinator's record types past the
// classic ones (CoordinatorRecordType, the apiKey of the
// group-coordinator's *Key.json message definitions): the first int16 of
// the key, then the key's fields, the group id first in every one.
type groupRecordType struct {
	name string
	kind txnindex.GroupKind
	// defines: the record whose key names the group and whose tombstone
	// deletes it (the group's metadata record).
	defines bool
}

// groupRecordTypes are the types 3 to 24 of __consumer_offsets, indexed
// by type. 3 to 8 are KIP-848's consumer groups, 9 to 15 KIP-932's share
// groups, 16 a consumer group's regular-expression subscription, 17 on
// KIP-1071's streams groups (StreamsGroupMetadata 17 to
// StreamsGroupTargetAssignmentResolvedTopicIds 24).
var groupRecordTypes = [...]groupRecordType{
	3:  {"ConsumerGroupMetadata", txnindex.GroupConsumer, true},
	4:  {"ConsumerGroupPartitionMetadata", txnindex.GroupConsumer, false},
	5:  {"ConsumerGroupMemberMetadata", txnindex.GroupConsumer, false},
	6:  {"ConsumerGroupTargetAssignmentMetadata", txnindex.GroupConsumer, false},
	7:  {"ConsumerGroupTargetAssignmentMember", txnindex.GroupConsumer, false},
	8:  {"ConsumerGroupCurrentMemberAssignment", txnindex.GroupConsumer, false},
	9:  {"ShareGroupPartitionMetadata", txnindex.GroupShare, false},
	10: {"ShareGroupMemberMetadata", txnindex.GroupShare, false},
	11: {"ShareGroupMetadata", txnindex.GroupShare, true},
	12: {"ShareGroupTargetAssignmentMetadata", txnindex.GroupShare, false},
	13: {"ShareGroupTargetAssignmentMember", txnindex.GroupShare, false},
	14: {"ShareGroupCurrentMemberAssignment", txnindex.GroupShare, false},
	15: {"ShareGroupStatePartitionMetadata", txnindex.GroupShare, false},
	16: {"ConsumerGroupRegularExpression", txnindex.GroupConsumer, false},
	17: {"StreamsGroupMetadata", txnindex.GroupStreams, true},
	18: {"a streams group record", txnindex.GroupStreams, false},
	19: {"a streams group record", txnindex.GroupStreams, false},
	20: {"a streams group record", txnindex.GroupStreams, false},
	21: {"a streams group record", txnindex.GroupStreams, false},
	22: {"a streams group record", txnindex.GroupStreams, false},
	23: {"a streams group record", txnindex.GroupStreams, false},
	24: {"StreamsGroupTargetAssignmentResolvedTopicIds", txnindex.GroupStreams, false},
}

// decodeGroupRecord fills r, whose key version (record type) is 3 or
// more, from the key: the type's group and kind, the group id its key
// begins with. A type past the table is KindUnknown with nothing read
// (CoordinatorLoaderImpl skips an UnknownRecordTypeException, KIP-915).
// The value is not decoded: only the group's existence and kind are used.
func decodeGroupRecord(r OffsetsRecord, key []byte) (OffsetsRecord, error) {
	if int(r.KeyVersion) >= len(groupRecordTypes) {
		r.Kind = KindUnknown
		return r, nil
	}
	t := groupRecordTypes[r.KeyVersion]
	r.Kind, r.GroupKind, r.KindRecord, r.TypeName = KindOtherGroup, t.kind, t.defines, t.name
	w := wire{b: key, off: 2}
	r.Group = w.str("group id")
	if w.err != nil {
		return r, fmt.Errorf("%s key (type %d) of %d bytes: %v", t.name, r.KeyVersion, len(key), w.err)
	}
	return r, nil
}

// replayKind applies a group's metadata record to the kinds: a value
// makes the group of its kind; a tombstone deletes the group, if it is
// still of that kind. Online migration between the classic and the
// KIP-848 protocol (KIP-848's "upgrade") writes the old kind's tombstone
// and the new kind's record, in either order.
func (g *GroupOffsets) replayKind(r OffsetsRecord) {
	if !r.KindRecord {
		return
	}
	if !r.Tombstone {
		g.Kinds[r.Group] = r.GroupKind
	} else if g.Kinds[r.Group] == r.GroupKind {
		delete(g.Kinds, r.Group)
	}
}

// kindOf is a group's kind: from its metadata record, else classic.
func (g *GroupOffsets) kindOf(group string) txnindex.GroupKind {
	if k, ok := g.Kinds[group]; ok {
		return k
	}
	return txnindex.GroupClassic
}

// GroupsOfKind returns the groups with a live metadata record of kind k,
// sorted.
func (g *GroupOffsets) GroupsOfKind(k txnindex.GroupKind) []string {
	var out []string
	for n, kk := range g.Kinds {
		if kk == k {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// countOther counts a record of a newer group type, or of an unknown one.
func (s *Stats) countOther(r OffsetsRecord) {
	s.OtherRecords++
	if r.Kind == KindUnknown {
		s.UnknownRecords++
		return
	}
	switch r.GroupKind {
	case txnindex.GroupConsumer:
		s.ConsumerGroupRecords++
	case txnindex.GroupShare:
		s.ShareGroupRecords++
	case txnindex.GroupStreams:
		s.StreamsGroupRecords++
	}
}
