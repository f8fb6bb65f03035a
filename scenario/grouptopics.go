package scenario

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// Encoders of the group coordinator's newer records, the share
// coordinator's and the KRaft metadata records a diagnosis reads, written
// here from the message definitions' fields (kmsg has no types for them)
// and apart from the readers in loader/internaltopic, so that tests check
// those readers against a second reading of the schemas.

// More of the broker's internal topics.
const (
	ShareGroupStateTopic = "__share_group_state"
	ClusterMetadataTopic = "__cluster_metadata"
)

// TopicID is the topic id Build writes in a partition's
// partition.metadata for topic, in Kafka's text form.
func TopicID(topic string) string { return topicID(topic) }

// GroupRecord is a __consumer_offsets record of one of the newer group
// types (typ 3 on: ConsumerGroupMetadata 3, ShareGroupMetadata 11,
// StreamsGroupMetadata 17, ...): the int16 type, the group id, and for
// the member-keyed types a member id; its value a version 0 with an empty
// body (the readers use the key alone). tombstone writes a null value.
func GroupRecord(typ int16, group string, tombstone bool) InternalRecord {
	k := binary.BigEndian.AppendUint16(nil, uint16(typ))
	k = appendString(k, group)
	switch typ {
	case 5, 7, 8, 10, 13, 14, 19, 21, 22: // member-keyed: GroupId, MemberId
		k = appendString(k, "member-1")
	case 16: // GroupId, RegularExpression
		k = appendString(k, "orders.*")
	}
	r := InternalRecord{Key: k}
	if !tombstone {
		r.Value = []byte{0, 0, 0}
	}
	return r
}

// ShareSnapshotRecord is a __share_group_state ShareSnapshot: key type 0,
// group id, topic id, partition; value v0 (flexible): snapshot epoch,
// state epoch, leader epoch, start offset, create and write timestamps
// (KAFKA-18170), the state batches, no tagged field.
func ShareSnapshotRecord(group, topicID string, partition int32, stateEpoch int32, startOffset int64) InternalRecord {
	v := binary.BigEndian.AppendUint16(nil, 0)
	v = binary.BigEndian.AppendUint32(v, 1) // snapshot epoch
	v = binary.BigEndian.AppendUint32(v, uint32(stateEpoch))
	v = binary.BigEndian.AppendUint32(v, 0) // leader epoch
	v = binary.BigEndian.AppendUint64(v, uint64(startOffset))
	v = binary.BigEndian.AppendUint64(v, 1_767_225_600_000) // create timestamp
	v = binary.BigEndian.AppendUint64(v, 1_767_225_600_000) // write timestamp
	v = appendStateBatches(v, startOffset)
	v = append(v, 0) // tagged fields
	return InternalRecord{Key: shareKey(0, group, topicID, partition), Value: v}
}

// ShareUpdateRecord is a ShareUpdate: key type 1; value v0: snapshot
// epoch, leader epoch, start offset (-1 leaves it), the state batches,
// and KIP-1226's DeliveryCompleteCount as tagged field 0.
func ShareUpdateRecord(group, topicID string, partition int32, startOffset int64) InternalRecord {
	v := binary.BigEndian.AppendUint16(nil, 0)
	v = binary.BigEndian.AppendUint32(v, 1) // snapshot epoch
	v = binary.BigEndian.AppendUint32(v, 0) // leader epoch
	v = binary.BigEndian.AppendUint64(v, uint64(startOffset))
	v = appendStateBatches(v, max(startOffset, 0))
	v = append(v, 1, 0, 4)                  // one tagged field: tag 0, 4 bytes
	v = binary.BigEndian.AppendUint32(v, 3) // DeliveryCompleteCount
	return InternalRecord{Key: shareKey(1, group, topicID, partition), Value: v}
}

// ShareStateTombstone deletes a share-partition's state.
func ShareStateTombstone(group, topicID string, partition int32) InternalRecord {
	return InternalRecord{Key: shareKey(0, group, topicID, partition)}
}

func shareKey(typ int16, group, topicID string, partition int32) []byte {
	k := binary.BigEndian.AppendUint16(nil, uint16(typ))
	k = appendString(k, group)
	k = append(k, mustUUID(topicID)...)
	return binary.BigEndian.AppendUint32(k, uint32(partition))
}

// appendStateBatches writes one in-flight batch from start, acquired
// once: first offset, last offset, delivery state 0 (available), delivery
// count 1, no tagged field; as a compact array.
func appendStateBatches(v []byte, start int64) []byte {
	v = append(v, 2) // one element
	v = binary.BigEndian.AppendUint64(v, uint64(start))
	v = binary.BigEndian.AppendUint64(v, uint64(start+1))
	v = append(v, 0)
	v = binary.BigEndian.AppendUint16(v, 1)
	return append(v, 0)
}

// TopicRecord is a KRaft TopicRecord (type 2, v0): frame version 1, the
// type and version as unsigned varints, the name as a compact string, the
// topic id, no tagged field.
func TopicRecord(name, topicID string) InternalRecord {
	v := []byte{1, 2, 0}
	v = appendCompactString(v, &name)
	v = append(v, mustUUID(topicID)...)
	return InternalRecord{Value: append(v, 0)}
}

// ConfigRecord is a KRaft ConfigRecord (type 4, v0): resource type (2 a
// topic, 32 a group), resource name, config name, value (nil deletes).
func ConfigRecord(resourceType int8, resource, name string, value *string) InternalRecord {
	v := []byte{1, 4, 0, byte(resourceType)}
	v = appendCompactString(v, &resource)
	v = appendCompactString(v, &name)
	v = appendCompactString(v, value)
	return InternalRecord{Value: append(v, 0)}
}

// GroupConfigRecord sets a group config (ConfigResource.Type GROUP).
func GroupConfigRecord(group, name, value string) InternalRecord {
	return ConfigRecord(32, group, name, &value)
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendCompactString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(*s)+1))
	return append(b, *s...)
}

func mustUUID(s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		panic(fmt.Sprintf("scenario: topic id %q: %v", s, err))
	}
	return b
}
