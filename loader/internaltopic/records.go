package internaltopic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// The broker's internal topics.
const (
	ConsumerOffsetsTopic  = "__consumer_offsets"
	TransactionStateTopic = "__transaction_state"

	// DefaultConsumerOffsetsPartitions is offsets.topic.num.partitions'
	// default, DefaultTransactionStatePartitions
	// transaction.state.log.num.partitions'.
	DefaultConsumerOffsetsPartitions  = 50
	DefaultTransactionStatePartitions = 50
)

// Bounds Kafka itself enforces on what these records hold.
const (
	// MaxStringLen is the longest string Kafka's generated readers accept
	// ("string field ... had invalid length", length > 0x7fff), for the
	// compact strings of flexible versions as for int16-prefixed ones.
	MaxStringLen = 0x7fff
	// MaxTxnPartitions bounds the partitions of one transaction, far
	// above any cluster's partition count; the value's bytes bound it
	// already (4 bytes a partition), this bounds the work.
	MaxTxnPartitions = 1 << 20
)

// Supported value versions: OffsetCommitValue 0-4 (v4 is Kafka 4.1's,
// KAFKA-19141), TransactionLogValue 0-1 (KIP-915).
const (
	maxOffsetCommitValueVersion = 4
	maxTxnLogValueVersion       = 1
)

// PartitionFor returns the partition of an internal topic with n
// partitions that holds key: the group coordinator's and the transaction
// coordinator's partitionFor, Utils.abs(key.hashCode) % n, with Java's
// String.hashCode over the key's UTF-16 code units (invalid UTF-8 bytes
// count as U+FFFD, as Java decodes them). n <= 0 returns -1.
func PartitionFor(key string, n int32) int32 {
	if n <= 0 {
		return -1
	}
	var h int32
	for _, r := range key {
		if r1, r2 := utf16.EncodeRune(r); r1 != '\uFFFD' {
			h = 31*h + r1
			h = 31*h + r2
		} else {
			h = 31*h + r
		}
	}
	// Utils.abs maps Integer.MIN_VALUE to 0 (Math.abs would keep it
	// negative).
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % n
}

// OffsetsRecordKind is what a __consumer_offsets record holds, from the
// int16 its key starts with (the key version, since KIP-848 the record
// type of CoordinatorRecordType).
type OffsetsRecordKind uint8

// Record kinds.
const (
	KindOffsetCommit  OffsetsRecordKind = iota // key version 0 or 1: OffsetCommitKey
	KindGroupMetadata                          // key version 2: GroupMetadataKey (a classic group's membership)
	KindOtherGroup                             // key version 3 to 24: consumer, share and streams group records (KIP-848 and later; groupRecordTypes)
	KindUnknown                                // a record type no Kafka release writes: skipped, as the coordinator skips it (KIP-915)
)

// OffsetsRecord is one decoded __consumer_offsets record.
type OffsetsRecord struct {
	Kind       OffsetsRecordKind
	KeyVersion int16
	Group      string // offset commits and group metadata
	Topic      string // offset commits
	Partition  int32  // offset commits
	Tombstone  bool   // null value: delete the key
	// GroupKind is the protocol of the group a KindOtherGroup or
	// KindGroupMetadata record belongs to; KindRecord marks the record
	// that defines the group and its kind (GroupMetadata,
	// ConsumerGroupMetadata, ShareGroupMetadata, StreamsGroupMetadata).
	GroupKind  txnindex.GroupKind
	KindRecord bool
	TypeName   string // the record type's name, "GroupMetadata"; "" for an unknown type

	// The OffsetCommitValue, for an offset commit that is no tombstone.
	ValueVersion    int16
	Offset          int64
	LeaderEpoch     int32 // -1 before v3
	Metadata        string
	CommitTimestamp int64
	ExpireTimestamp int64 // v1 only, else -1
}

// DecodeOffsetsRecord decodes a __consumer_offsets record with kmsg's
// OffsetCommitKey/OffsetCommitValue (and GroupMetadataKey for a group's
// metadata record, whose value is not needed here). value is nil for a
// tombstone. The newer group types have their group id read from the key
// (decodeGroupRecord), their values left alone; a type no release writes
// is KindUnknown, which the group coordinator skips too (KIP-915).
func DecodeOffsetsRecord(key, value []byte) (OffsetsRecord, error) {
	var r OffsetsRecord
	if key == nil {
		return r, errors.New("null key (GroupMetadataManager: \"Group metadata/offset entry key should not be null\")")
	}
	if len(key) < 2 {
		return r, fmt.Errorf("key of %d bytes: want at least the 2-byte version", len(key))
	}
	r.KeyVersion = int16(binary.BigEndian.Uint16(key))
	r.Tombstone = value == nil
	switch {
	case r.KeyVersion < 0:
		return r, fmt.Errorf("key version %d: want 0 or more", r.KeyVersion)
	case r.KeyVersion <= 1:
		r.Kind = KindOffsetCommit
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return r, fmt.Errorf("OffsetCommitKey v%d of %d bytes: truncated or a bad string length", r.KeyVersion, len(key))
		}
		r.Group, r.Topic, r.Partition = k.Group, k.Topic, k.Partition
	case r.KeyVersion == 2:
		r.Kind = KindGroupMetadata
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return r, fmt.Errorf("GroupMetadataKey of %d bytes: truncated or a bad string length", len(key))
		}
		r.Group = k.Group
		r.GroupKind, r.KindRecord, r.TypeName = txnindex.GroupClassic, true, "GroupMetadata"
		return r, nil
	default:
		return decodeGroupRecord(r, key)
	}
	if r.Tombstone {
		return r, nil
	}
	// GroupMetadataManager.readOffsetMessageValue: "Unknown offset
	// message version" past the highest.
	var err error
	if r.ValueVersion, err = valueVersion(value, "OffsetCommitValue", maxOffsetCommitValueVersion); err != nil {
		return r, err
	}
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(value); err != nil {
		return r, fmt.Errorf("OffsetCommitValue v%d of %d bytes: truncated or a bad length", r.ValueVersion, len(value))
	}
	if len(v.Metadata) > MaxStringLen {
		return r, fmt.Errorf("OffsetCommitValue v%d: metadata of %d bytes, longer than the %d a string may hold", r.ValueVersion, len(v.Metadata), MaxStringLen)
	}
	r.Offset, r.Metadata, r.CommitTimestamp = v.Offset, v.Metadata, v.CommitTimestamp
	r.LeaderEpoch, r.ExpireTimestamp = -1, -1
	if r.ValueVersion >= 3 {
		r.LeaderEpoch = v.LeaderEpoch
	}
	if r.ValueVersion == 1 {
		r.ExpireTimestamp = v.ExpireTimestamp
	}
	return r, nil
}

// TxnStateRecord is one decoded __transaction_state record.
type TxnStateRecord struct {
	KeyVersion int16
	// Unknown is set for a key version other than 0: TransactionLog.read
	// returns UnknownKeyVersion for it and the coordinator skips it.
	Unknown         bool
	TransactionalID string
	Tombstone       bool
	ValueVersion    int16
	// State is the decoded value; its TransactionalID is set, Source and
	// Offset are left to the caller.
	State txnindex.TxnCoordinatorState
}

// DecodeTxnStateRecord decodes a __transaction_state record with kmsg's
// TxnMetadataKey/TxnMetadataValue, into what TransactionLog.read makes of
// it: partitions are dropped in Empty, a state id TransactionState.fromId
// rejects is an error.
func DecodeTxnStateRecord(key, value []byte) (TxnStateRecord, error) {
	var r TxnStateRecord
	if key == nil {
		return r, errors.New("null key (TransactionStateManager: \"Transaction state log's key should not be null\")")
	}
	if len(key) < 2 {
		return r, fmt.Errorf("key of %d bytes: want at least the 2-byte version", len(key))
	}
	r.KeyVersion = int16(binary.BigEndian.Uint16(key))
	if r.KeyVersion != 0 {
		r.Unknown = true
		return r, nil
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return r, fmt.Errorf("TxnMetadataKey of %d bytes: truncated or a bad string length", len(key))
	}
	r.TransactionalID = k.TransactionalID
	if value == nil {
		r.Tombstone = true
		return r, nil
	}
	// TransactionLog.read: UnknownValueVersion past the highest.
	var err error
	if r.ValueVersion, err = valueVersion(value, "TxnMetadataValue", maxTxnLogValueVersion); err != nil {
		return r, err
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return r, fmt.Errorf("TxnMetadataValue v%d of %d bytes: truncated or a bad length", r.ValueVersion, len(value))
	}
	st := txnindex.TxnStatus(v.State)
	if !st.Valid() {
		return r, fmt.Errorf("TxnMetadataValue v%d: transaction state id %d, want 0-7 (TransactionState.fromId: \"Unknown transaction state id\")", r.ValueVersion, int8(v.State))
	}
	s := txnindex.TxnCoordinatorState{
		TransactionalID: r.TransactionalID, ProducerID: txnindex.ProducerID(v.ProducerID), ProducerEpoch: v.ProducerEpoch,
		PreviousProducerID: txnindex.ProducerID(v.PreviousProducerID), NextProducerID: txnindex.ProducerID(v.NextProducerID),
		NextProducerEpoch: v.NextProducerEpoch, ClientTransactionVersion: v.ClientTransactionVersion,
		State: st, TimeoutMs: v.TimeoutMillis, StartTimestamp: v.StartTimestamp, LastUpdateTimestamp: v.LastUpdateTimestamp,
	}
	if st != txnindex.TxnStatusEmpty {
		n := 0
		for _, t := range v.Topics {
			n += len(t.Partitions)
		}
		if n > MaxTxnPartitions {
			return r, fmt.Errorf("TxnMetadataValue v%d: %d partitions, more than %d", r.ValueVersion, n, MaxTxnPartitions)
		}
		s.Partitions = make([]txnindex.TopicPartition, 0, n)
		for _, t := range v.Topics {
			if len(t.Topic) > MaxStringLen {
				return r, fmt.Errorf("TxnMetadataValue v%d: topic name of %d bytes, longer than the %d a string may hold", r.ValueVersion, len(t.Topic), MaxStringLen)
			}
			for _, p := range t.Partitions {
				s.Partitions = append(s.Partitions, txnindex.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		s.SortPartitions()
	}
	r.State = s
	return r, nil
}

// valueVersion reads the 2-byte version that begins a record value named
// what, and refuses one outside 0..max.
func valueVersion(value []byte, what string, max int16) (int16, error) {
	if len(value) < 2 {
		return 0, fmt.Errorf("%s of %d bytes: want at least the 2-byte version", what, len(value))
	}
	v := int16(binary.BigEndian.Uint16(value))
	if v < 0 || v > max {
		return v, fmt.Errorf("%s version %d: want 0-%d", what, v, max)
	}
	return v, nil
}
