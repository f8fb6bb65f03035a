// Package txnindex is txnscope's domain: the batches of a Kafka partition,
// the aborted-transaction index the broker keeps for them, and the
// read_committed algorithm that decides, for every offset, what a consumer
// receives and why.
//
// It has three layers, each modelled on the code that does the job for real:
//
//   - Build replays a partition's batches the way the broker's producer state
//     does (ProducerAppendInfo, ProducerStateManager, UnifiedLog): it tracks
//     each producer's ongoing transaction, rebuilds the .txnindex entries of
//     every segment with the last stable offset Kafka records in each, and
//     computes the LSO.
//   - (*Log).Fetch answers a Fetch the way LocalLog.read does: one segment per
//     fetch, bytes up to the LSO or high watermark, the first batch whole
//     (KIP-74), and the aborted-transaction list collected segment by segment
//     with the broker's early stop.
//   - Consumer applies the Java consumer's CompletedFetch filter to a fetch
//     response, batch by batch: the aborted producer-id set, the queue of
//     aborted transactions ordered by first offset, the ABORT marker that
//     removes a producer, control batches never delivered. librdkafka and
//     franz-go are modelled as named variants where their rules differ.
//
// Three clients do not follow Kafka's rule; Decisions plays each from its
// source (clients.go has the details): VariantKafkaGo, kafka-go 0.4.x, whose
// read.go readFetchResponseHeaderV10 never uses the aborted list and whose
// message_reader.go never tests the control bit; VariantKafkaJS, kafkajs
// 2.2.4, whose src/consumer/filterAbortedMessages.js moves one aborted-list
// entry per record, in marker order, and whose src/consumer/runner.js
// (processEachMessage, handleBatch) refetches a filtered tail;
// VariantKafkaPython, kafka-python 2.0, whose kafka/consumer/fetcher.py
// (Fetcher.__init__, _unpack_message_set) reads uncommitted and yields
// control records.
//
// (*Log).Decisions chains the two: it plays a consumer fetching from a
// position to the end of the log, and yields one Decision per run of offsets
// that share a verdict, in offset order, without materialising the offsets.
//
// A pass costs a few times what merely handing out one Decision per batch
// does (BenchmarkDecideFloor; the Decide row of docs/benchmarks.md), and nothing per
// batch is kept for it beyond the 64-byte Batch. What it pays per batch is
// only what the consumer does per batch: the Java consumer peeks at the
// head of its aborted-transaction queue (CompletedFetch's
// consumeAbortedTransactionsUpTo) and looks the producer up in its aborted
// set (isBatchAborted), so a pass keeps the queue's head in a field and the
// set's common producers in direct-mapped slots; a fetch's extent, which the
// broker computes from the segment's byte positions, is found by binary
// search over batches that lie end to end (FetchInto), not by adding up
// every batch's size; and Decision.Txn, which the consumer does not need
// but the reasons do, comes from a cursor whose common case is inline in
// the per-batch step.
//
// The package uses only the standard library and reads nothing but the
// io interfaces it is handed; loading files is package loader's job. Its API
// is internal to txnscope.
package txnindex

import (
	"fmt"
	"math"
)

// ProducerID is a Kafka producer id. It has its own type so that it cannot be
// passed where an offset is expected without the compiler noticing.
type ProducerID int64

// NoProducerID is the producer id of batches written without one
// (RecordBatch.NO_PRODUCER_ID).
const NoProducerID ProducerID = -1

// Compression is a batch's compression codec (attribute bits 0-2).
type Compression uint8

// The codecs Kafka knows; ids 5-7 are rejected by the broker.
const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4
)

// String returns the codec name kafka-dump-log.sh prints.
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionSnappy:
		return "snappy"
	case CompressionLZ4:
		return "lz4"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("unknown(%d)", uint8(c))
}

// TimestampType is attribute bit 3.
type TimestampType uint8

// Timestamp types. Legacy magic-0 messages have none.
const (
	CreateTime      TimestampType = 0
	LogAppendTime   TimestampType = 1
	NoTimestampType TimestampType = 2
)

// String returns the name kafka-dump-log.sh prints.
func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// ControlType is the type in a control record's key.
type ControlType int16

// Control record types (ControlRecordType.java). Anything else is Unknown.
const (
	ControlNone           ControlType = -2 // not a control batch, or a control batch with no records
	ControlUnknown        ControlType = -1
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
)

// String returns the upper-case name Kafka uses.
func (c ControlType) String() string {
	switch c {
	case ControlNone:
		return "NONE"
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	case ControlLeaderChange:
		return "LEADER_CHANGE"
	case ControlSnapshotHeader:
		return "SNAPSHOT_HEADER"
	case ControlSnapshotFooter:
		return "SNAPSHOT_FOOTER"
	case ControlKRaftVersion:
		return "KRAFT_VERSION"
	case ControlKRaftVoters:
		return "KRAFT_VOTERS"
	}
	return "UNKNOWN"
}

// ParseControlType maps a control key's type id as ControlRecordType.fromTypeId
// does: unknown ids become ControlUnknown.
func ParseControlType(id int16) ControlType {
	if id >= int16(ControlAbort) && id <= int16(ControlKRaftVoters) {
		return ControlType(id)
	}
	return ControlUnknown
}

// Attribute bits of a v2 batch. Only the low byte is interpreted
// (DefaultRecordBatch.attributes casts to byte).
const (
	AttrCompressionMask = 0x07
	AttrTimestampType   = 0x08
	AttrTransactional   = 0x10
	AttrControl         = 0x20
	AttrDeleteHorizon   = 0x40 // KIP-534: baseTimestamp holds the delete horizon
)

// Batch is one record batch (or, for magic 0/1, one shallow log entry) as
// Kafka stores it, plus where it was found. It holds the 61-byte v2 header
// and the control marker; records are decoded elsewhere, on demand.
//
// A loaded partition keeps one Batch per batch for the whole timeline, so it
// is packed into 64 bytes (TestBatchSize) using the widths Kafka itself
// uses: the position is an int32 (FileRecords and the .index store int32
// positions; a segment is smaller than 2 GiB), the last offset is kept as
// the int32 lastOffsetDelta of the v2 header, only the low byte of the
// attributes is kept (DefaultRecordBatch.attributes casts to byte), and
// magic, control type and attributes share one uint16. The end-transaction
// marker's coordinator epoch shares the baseSequence slot: the broker
// writes markers with baseSequence -1 (RecordBatch.NO_SEQUENCE,
// MemoryRecords.writeEndTransactionalMarker), so a batch whose sequence is -1
// or 0 keeps both; for any other sequence the epoch is dropped and
// CoordinatorEpoch reports -1 (such a control batch was not written by a
// broker).
//
// Fields whose width is Kafka's are exported; the rest are read with the
// methods of the same name and written with the Set methods. BatchFields is
// the unpacked form for literals.
type Batch struct {
	BaseOffset           int64
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           ProducerID
	PartitionLeaderEpoch int32
	Records              int32 // recordsCount; 0 for a batch emptied by compaction
	Size                 int32 // bytes on disk, LOG_OVERHEAD included
	Segment              int32 // index into Partition.Segments; -1 when not from a segment
	ProducerEpoch        int16

	flags           uint16 // attributes low byte | magic<<8 | (control+2)<<10 | flagEpoch | flagSeqZero
	position        int32  // byte position of the batch in its segment (or capture record set); -1 unknown
	lastOffsetDelta int32
	seq             int32 // baseSequence, or the coordinator epoch when flagEpoch is set
}

// Layout of Batch.flags.
const (
	flagAttrMask     = 0x00ff
	flagMagicShift   = 8
	flagMagicMask    = 0x3 << flagMagicShift
	flagControlShift = 10
	flagControlMask  = 0xf << flagControlShift
	flagEpoch        = 1 << 14 // seq holds the coordinator epoch; the base sequence is -1 (or 0 with flagSeqZero)
	flagSeqZero      = 1 << 15
)

// BatchFields is a Batch unpacked, one field per header field, for building
// batches with literals: BatchFields{...}.Batch().
type BatchFields struct {
	BaseOffset           int64
	LastOffset           int64
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           ProducerID
	Position             int64
	PartitionLeaderEpoch int32
	BaseSequence         int32
	Records              int32
	Size                 int32
	CoordinatorEpoch     int32
	Segment              int32
	ProducerEpoch        int16
	Attributes           int16
	Control              ControlType
	Magic                int8
}

// Batch packs f. A LastOffset more than an int32 away from BaseOffset, or a
// Position outside int32, does not fit (the loaders reject such input with
// a positional error first): see SetLastOffset and SetPosition.
func (f BatchFields) Batch() Batch {
	b := Batch{
		BaseOffset: f.BaseOffset, BaseTimestamp: f.BaseTimestamp, MaxTimestamp: f.MaxTimestamp,
		ProducerID: f.ProducerID, PartitionLeaderEpoch: f.PartitionLeaderEpoch, Records: f.Records,
		Size: f.Size, Segment: f.Segment, ProducerEpoch: f.ProducerEpoch,
	}
	b.SetLastOffset(f.LastOffset)
	b.SetPosition(f.Position)
	b.SetAttributes(f.Attributes)
	b.SetMagic(f.Magic)
	b.SetControl(f.Control)
	b.SetBaseSequence(f.BaseSequence)
	b.SetCoordinatorEpoch(f.CoordinatorEpoch)
	return b
}

// SetV2Header stores the packed fields of a magic 2 batch header (no
// control type, no coordinator epoch yet) in one write each: the loader's
// header scan fills millions of batches in place with it, where building
// them through BatchFields and the setters cost a tenth of the scan.
func (b *Batch) SetV2Header(attributes int16, lastOffsetDelta int32, position int64, baseSequence int32) {
	if position < 0 || position > math.MaxInt32 {
		position = -1
	}
	b.flags = uint16(uint8(attributes)) | 2<<flagMagicShift | uint16(ControlNone+2)<<flagControlShift
	b.position = int32(position)
	b.lastOffsetDelta = lastOffsetDelta
	b.seq = baseSequence
}

// Fields unpacks b.
func (b *Batch) Fields() BatchFields {
	return BatchFields{
		BaseOffset: b.BaseOffset, LastOffset: b.LastOffset(), BaseTimestamp: b.BaseTimestamp,
		MaxTimestamp: b.MaxTimestamp, ProducerID: b.ProducerID, Position: b.Position(),
		PartitionLeaderEpoch: b.PartitionLeaderEpoch, BaseSequence: b.BaseSequence(), Records: b.Records,
		Size: b.Size, CoordinatorEpoch: b.CoordinatorEpoch(), Segment: b.Segment, ProducerEpoch: b.ProducerEpoch,
		Attributes: b.Attributes(), Control: b.Control(), Magic: b.Magic(),
	}
}

// LastOffset is BaseOffset + lastOffsetDelta.
func (b *Batch) LastOffset() int64 { return b.BaseOffset + int64(b.lastOffsetDelta) }

// LastOffsetDelta is the header's lastOffsetDelta.
func (b *Batch) LastOffsetDelta() int32 { return b.lastOffsetDelta }

// SetLastOffset stores last as a delta from BaseOffset, which must be set
// first. A delta outside int32 (which no v2 header can hold) is clamped.
func (b *Batch) SetLastOffset(last int64) {
	d := last - b.BaseOffset
	b.lastOffsetDelta = int32(max(min(d, math.MaxInt32), math.MinInt32))
}

// SetOffsets sets BaseOffset and LastOffset together; it reports false,
// and changes nothing, when they are more than an int32 apart.
func (b *Batch) SetOffsets(base, last int64) bool {
	d := last - base
	if d > math.MaxInt32 || d < math.MinInt32 || (last < base) != (d < 0) {
		return false
	}
	b.BaseOffset, b.lastOffsetDelta = base, int32(d)
	return true
}

// Position is the byte position of the batch in its segment (or capture
// record set), -1 if unknown.
func (b *Batch) Position() int64 { return int64(b.position) }

// SetPosition stores pos; one outside [0, MaxInt32] (past the int32
// positions Kafka uses) is stored as -1, unknown.
func (b *Batch) SetPosition(pos int64) {
	if pos < 0 || pos > math.MaxInt32 {
		pos = -1
	}
	b.position = int32(pos)
}

// Attributes returns the low byte of the attributes (the only one Kafka
// interprets).
func (b *Batch) Attributes() int16 { return int16(b.flags & flagAttrMask) }

// SetAttributes keeps a's low byte.
func (b *Batch) SetAttributes(a int16) { b.flags = b.flags&^flagAttrMask | uint16(uint8(a)) }

// Magic is the batch's magic byte, 0, 1 or 2.
func (b *Batch) Magic() int8 { return int8(b.flags & flagMagicMask >> flagMagicShift) }

// SetMagic stores m, which must be 0, 1 or 2 (the loaders reject others).
func (b *Batch) SetMagic(m int8) {
	b.flags = b.flags&^flagMagicMask | uint16(m)&0x3<<flagMagicShift
}

// Control is the type of the first control record; ControlNone otherwise.
func (b *Batch) Control() ControlType {
	return ControlType(b.flags&flagControlMask>>flagControlShift) - 2
}

// SetControl stores c; a value outside the known types is stored as
// ControlUnknown.
func (b *Batch) SetControl(c ControlType) {
	if c < ControlNone || c > ControlKRaftVoters {
		c = ControlUnknown
	}
	b.flags = b.flags&^flagControlMask | uint16(c+2)<<flagControlShift
}

// BaseSequence is the header's baseSequence.
func (b *Batch) BaseSequence() int32 {
	if b.flags&flagEpoch == 0 {
		return b.seq
	}
	if b.flags&flagSeqZero != 0 {
		return 0
	}
	return -1
}

// SetBaseSequence stores s. A coordinator epoch already stored survives
// only when s is -1 or 0.
func (b *Batch) SetBaseSequence(s int32) {
	if b.flags&flagEpoch != 0 {
		switch s {
		case -1:
			b.flags &^= flagSeqZero
			return
		case 0:
			b.flags |= flagSeqZero
			return
		}
		b.flags &^= flagEpoch | flagSeqZero
	}
	b.seq = s
}

// CoordinatorEpoch is the end-transaction marker's coordinator epoch, -1 if
// none (see Batch for when it is not kept).
func (b *Batch) CoordinatorEpoch() int32 {
	if b.flags&flagEpoch == 0 {
		return -1
	}
	return b.seq
}

// SetCoordinatorEpoch stores e in the baseSequence slot when the base
// sequence is -1 or 0; otherwise, and for e == -1, the batch has none.
func (b *Batch) SetCoordinatorEpoch(e int32) {
	if b.flags&flagEpoch != 0 {
		if e == -1 {
			seq := b.BaseSequence()
			b.flags &^= flagEpoch | flagSeqZero
			b.seq = seq
			return
		}
		b.seq = e
		return
	}
	if e == -1 {
		return
	}
	switch b.seq {
	case -1:
		b.flags |= flagEpoch
	case 0:
		b.flags |= flagEpoch | flagSeqZero
	default:
		return
	}
	b.seq = e
}

// IsTransactional reports attribute bit 4.
func (b *Batch) IsTransactional() bool {
	return b.Magic() >= 2 && b.Attributes()&AttrTransactional != 0
}

// IsControl reports attribute bit 5.
func (b *Batch) IsControl() bool { return b.Magic() >= 2 && b.Attributes()&AttrControl != 0 }

// HasDeleteHorizon reports attribute bit 6 (KIP-534).
func (b *Batch) HasDeleteHorizon() bool {
	return b.Magic() >= 2 && b.Attributes()&AttrDeleteHorizon != 0
}

// Compression returns the batch's codec.
func (b *Batch) Compression() Compression { return Compression(b.Attributes() & AttrCompressionMask) }

// TimestampType returns the batch's timestamp type.
func (b *Batch) TimestampType() TimestampType {
	if b.Magic() == 0 {
		return NoTimestampType
	}
	if b.Attributes()&AttrTimestampType != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// HasProducerID reports whether the batch was written by a producer with an id
// (AbstractRecordBatch.hasProducerId). Legacy entries never have one.
func (b *Batch) HasProducerID() bool { return b.Magic() >= 2 && b.ProducerID > NoProducerID }

// IsAbortMarker reports whether this is a control batch whose first record is
// an ABORT marker, the test the Java consumer's containsAbortMarker makes.
// A control batch emptied by compaction has no first record and is not one.
func (b *Batch) IsAbortMarker() bool {
	return b.IsControl() && b.Records > 0 && b.Control() == ControlAbort
}

// IsCommitMarker is IsAbortMarker for COMMIT.
func (b *Batch) IsCommitMarker() bool {
	return b.IsControl() && b.Records > 0 && b.Control() == ControlCommit
}

// IsEndTxnMarker reports an ABORT or COMMIT marker.
func (b *Batch) IsEndTxnMarker() bool { return b.IsAbortMarker() || b.IsCommitMarker() }

// NextOffset is LastOffset+1.
func (b *Batch) NextOffset() int64 { return b.LastOffset() + 1 }

// LastSequence is baseSequence+lastOffsetDelta with Kafka's wrap from
// MaxInt32 to 0 (DefaultRecordBatch.incrementSequence), or -1.
func (b *Batch) LastSequence() int32 {
	if b.BaseSequence() < 0 {
		return -1
	}
	delta := b.LastOffset() - b.BaseOffset
	s := int64(b.BaseSequence()) + delta
	if s > 1<<31-1 {
		s -= 1 << 31
	}
	return int32(s)
}

// Partition is everything Build needs about one partition: its segments and
// batches in offset order, and the offsets the broker checkpoints.
type Partition struct {
	Topic     string
	Partition int32
	Segments  []Segment
	Batches   []Batch // in log order; Batch.Segment indexes Segments

	// LogStartOffset from log-start-offset-checkpoint, or -1 for the base
	// offset of the first segment (a partition missing from that file has
	// exactly that log start offset).
	LogStartOffset int64

	// HighWatermark from replication-offset-checkpoint, a capture or a
	// broker, or -1 for the log end offset. HighWatermarkSource says which.
	HighWatermark       int64
	HighWatermarkSource string

	// Ongoing seeds transactions that were open before the first batch,
	// from a producer-state .snapshot (CurrentTxnFirstOffset >= 0). It is
	// needed when retention deleted the segment a transaction began in.
	Ongoing []OngoingTxn

	// CleanerOffset is this partition's line of cleaner-offset-checkpoint,
	// when CleanerOffsetKnown: the log cleaner's first dirty offset.
	CleanerOffset      int64
	CleanerOffsetKnown bool
	// RecoveryPoint is this partition's line of
	// recovery-point-offset-checkpoint, when RecoveryPointKnown: after an
	// unclean shutdown the broker recovers (rebuilding their indexes) the
	// segment holding it and every later one, and no segment before it.
	RecoveryPoint      int64
	RecoveryPointKnown bool
	// CleanShutdown: the log directory holds the broker's clean shutdown
	// marker, so its next start recovers no segment.
	CleanShutdown bool

	// Snapshot is the producer-state snapshot Ongoing came from, with
	// every producer's entry; nil when none was used.
	Snapshot *SnapshotInfo

	// NoSegment: no .log segment, so the offsets are unknown, not 0;
	// NoSegmentEvidence says what the other files show of them.
	NoSegment         bool
	NoSegmentEvidence []string
	// TopicUnknown: Topic is only a label (a segment read alone is named
	// by its base offset); commands cannot name it.
	TopicUnknown bool
	// Tiered: older segments are in remote storage (KIP-405).
	Tiered *TieredStorage

	// Replay, when set, says how much of the log Batches hold: with Mode
	// ReplaySnapshot, the segments before FromOffset are listed in
	// Segments with no batches, and were not read.
	Replay *ReplayReport

	// Window, when set, says Batches are one window of a larger
	// partition, with the whole log's bounds (see PartitionWindow).
	Window *PartitionWindow
}

// OngoingTxn is a transaction open at the start of the replayed batches.
type OngoingTxn struct {
	ProducerID    ProducerID
	ProducerEpoch int16
	FirstOffset   int64
	// LastTimestamp is the producer's last write time (the snapshot
	// entry's Timestamp); 0 or negative when unknown.
	LastTimestamp int64
	// CoordinatorEpoch is the snapshot entry's coordinator epoch (of the
	// producer's last marker); -1 when unknown.
	CoordinatorEpoch int32
}
