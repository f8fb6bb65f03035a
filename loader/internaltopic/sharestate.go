package internaltopic

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// ShareGroupStateTopic is KIP-932's share coordinator's topic: the
// durable state of every share-partition, keyed by group, topic id and
// partition.
const ShareGroupStateTopic = "__share_group_state"

// The record types of __share_group_state (the share coordinator's
// CoordinatorRecordType): a snapshot of a share-partition's whole state,
// and an update on top of the last snapshot.
const (
	ShareSnapshotType int16 = 0
	ShareUpdateType   int16 = 1
)

// shareBatchBytes is the least a state batch takes: first and last
// offset, delivery state, delivery count, its tagged-field count.
const shareBatchBytes = 8 + 8 + 1 + 2 + 1

// ShareStateRecord is one decoded __share_group_state record.
type ShareStateRecord struct {
	KeyType int16
	// Unknown: a key type other than ShareSnapshot or ShareUpdate, skipped
	// as the coordinator skips it (KIP-915).
	Unknown   bool
	Group     string
	TopicID   loader.UUID
	Partition int32
	Tombstone bool
	// The value's fields (ShareSnapshotValue, ShareUpdateValue v0).
	SnapshotEpoch int32
	StateEpoch    int32 // -1 in an update, which does not carry it
	LeaderEpoch   int32
	// StartOffset is the share-partition start offset; -1 in an update
	// that leaves it where it was.
	StartOffset int64
	// StateBatches counts the in-flight state batches the value lists.
	StateBatches int
}

// DecodeShareStateRecord decodes a __share_group_state record from the
// share coordinator's message definitions (ShareSnapshotKey/Value,
// ShareUpdateKey/Value; kmsg has no type for them). Keys are not
// flexible: the type, then the group id, the topic id and the partition.
// Values are version 0, flexible: SnapshotEpoch (int32 since Kafka 4.1;
// 4.0's preview release wrote a uint16 and is not read), StateEpoch (a
// snapshot only), LeaderEpoch, StartOffset, in a snapshot the
// CreateTimestamp and WriteTimestamp KAFKA-18170 added, then the state
// batches and tagged fields (KIP-1226's DeliveryCompleteCount is one). A
// snapshot without the two timestamps, as written before KAFKA-18170, is
// read too.
func DecodeShareStateRecord(key, value []byte) (ShareStateRecord, error) {
	var r ShareStateRecord
	if key == nil {
		return r, errors.New("null key (a share coordinator record always has one)")
	}
	if len(key) < 2 {
		return r, fmt.Errorf("key of %d bytes: want at least the 2-byte type", len(key))
	}
	r.KeyType = int16(binary.BigEndian.Uint16(key))
	name := "ShareSnapshotKey"
	switch r.KeyType {
	case ShareSnapshotType:
	case ShareUpdateType:
		name = "ShareUpdateKey"
	default:
		r.Unknown = true
		return r, nil
	}
	w := wire{b: key, off: 2}
	r.Group = w.str("group id")
	r.TopicID = w.uuid("topic id")
	r.Partition = w.int32("partition")
	w.end(name)
	if w.err != nil {
		return r, fmt.Errorf("%s of %d bytes: %v", name, len(key), w.err)
	}
	if value == nil {
		r.Tombstone = true
		return r, nil
	}
	vname := "ShareSnapshotValue"
	if r.KeyType == ShareUpdateType {
		vname = "ShareUpdateValue"
	}
	if _, err := valueVersion(value, vname, 0); err != nil {
		return r, err
	}
	err := r.decodeValue(value, true)
	if err != nil && r.KeyType == ShareSnapshotType {
		if r.decodeValue(value, false) == nil {
			err = nil
		}
	}
	if err != nil {
		return r, fmt.Errorf("%s v0 of %d bytes: %v", vname, len(value), err)
	}
	if r.StartOffset < -1 || r.KeyType == ShareSnapshotType && r.StartOffset < 0 {
		return r, fmt.Errorf("%s v0: start offset %d, want 0 or more (-1 only in an update)", vname, r.StartOffset)
	}
	return r, nil
}

// decodeValue reads a value after its version; timestamps says whether a
// snapshot carries CreateTimestamp and WriteTimestamp.
func (r *ShareStateRecord) decodeValue(value []byte, timestamps bool) error {
	w := wire{b: value, off: 2}
	r.SnapshotEpoch = w.int32("snapshot epoch")
	r.StateEpoch = -1
	if r.KeyType == ShareSnapshotType {
		r.StateEpoch = w.int32("state epoch")
	}
	r.LeaderEpoch = w.int32("leader epoch")
	r.StartOffset = w.int64("start offset")
	if r.KeyType == ShareSnapshotType && timestamps {
		w.int64("create timestamp")
		w.int64("write timestamp")
	}
	r.StateBatches = w.compactArray("state batches", shareBatchBytes)
	for range r.StateBatches {
		first, last := w.int64("batch first offset"), w.int64("batch last offset")
		w.int8("delivery state")
		w.int16("delivery count")
		w.skipTags("state batch")
		if w.err == nil && last < first {
			w.fail("state batch %d-%d: last offset below first", first, last)
		}
	}
	w.skipTags("value")
	w.end("the value")
	return w.err
}

// topicIDText is Kafka's text form of a topic id (Uuid.toString).
func topicIDText(id loader.UUID) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ShareStates are the share-partition states read from __share_group_state
// partitions, as the share coordinator loads them.
type ShareStates struct {
	// States are the live share-partitions, ordered by group, topic id
	// and partition; Topic is left "" (the records name topics by id:
	// Internal.Evidence resolves the names).
	States     []txnindex.ShareGroupState
	Partitions []int32
	Stats      Stats
	Damage     []*loader.FormatError

	byKey map[shareKey]txnindex.ShareGroupState
}

type shareKey struct {
	group     string
	topic     loader.UUID
	partition int32
}

// ReadShareGroupState replays a __share_group_state partition as
// ShareCoordinatorShard.replay does, from the log start offset to the log
// end: a snapshot replaces the share-partition's state, an update moves
// its start offset when it carries one (-1 leaves it) and its leader
// epoch, a tombstone (the share group's state deleted) removes it. The
// coordinator writes no transactions here; l is built from p when nil.
func ReadShareGroupState(p *loader.Partition, l *txnindex.Log) (*ShareStates, error) {
	if err := checkTopic(p, ShareGroupStateTopic); err != nil {
		return nil, err
	}
	if l == nil {
		l = p.Build()
	}
	s := &ShareStates{byKey: map[shareKey]txnindex.ShareGroupState{}, Partitions: []int32{p.Input.Partition}}
	src := source(p)
	var dmg damage
	replay := func(r ShareStateRecord, offset int64) { s.replay(r, src, offset) }
	if err := replayRecords(p, l, &s.Stats, &dmg, DecodeShareStateRecord, replay); err != nil {
		return nil, err
	}
	s.Damage = dmg.done()
	s.finish()
	return s, nil
}

func (s *ShareStates) replay(r ShareStateRecord, src string, offset int64) {
	k := shareKey{r.Group, r.TopicID, r.Partition}
	switch {
	case r.Unknown:
		s.Stats.OtherRecords++
		s.Stats.UnknownRecords++
		return
	case r.Tombstone:
		s.Stats.Tombstones++
		delete(s.byKey, k)
		return
	}
	cur, ok := s.byKey[k]
	if r.KeyType == ShareSnapshotType || !ok {
		cur = txnindex.ShareGroupState{Group: r.Group, TopicID: topicIDText(r.TopicID), Partition: r.Partition,
			StartOffset: r.StartOffset, StateEpoch: r.StateEpoch, Source: src, RecordOffset: offset}
	} else if r.StartOffset >= 0 {
		cur.StartOffset, cur.RecordOffset = r.StartOffset, offset
	}
	cur.LeaderEpoch = r.LeaderEpoch
	if cur.StartOffset < 0 {
		// An update before any snapshot that does not move the start
		// offset says nothing of where the group is.
		return
	}
	s.byKey[k] = cur
}

// Merge adds o's partitions to s.
func (s *ShareStates) Merge(o *ShareStates) {
	if s.byKey == nil {
		s.byKey = map[shareKey]txnindex.ShareGroupState{}
	}
	for k, v := range o.byKey {
		s.byKey[k] = v
	}
	for _, p := range o.Partitions {
		s.Partitions = addPartition(s.Partitions, p)
	}
	s.Stats.add(o.Stats)
	s.Damage = append(s.Damage, o.Damage...)
	s.finish()
}

func (s *ShareStates) finish() {
	s.States = slices.SortedFunc(maps.Values(s.byKey), func(a, b txnindex.ShareGroupState) int {
		if c := txnindex.CompareShareStates(a, b); c != 0 {
			return c
		}
		if a.TopicID < b.TopicID {
			return -1
		}
		if a.TopicID > b.TopicID {
			return 1
		}
		return 0
	})
}
