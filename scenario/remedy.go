package scenario

// The batches a broker appends for an end-transaction marker, shared by
// Build and by the lesson's remedy (web/lesson_remedy.go), which plays
// out kafka-transactions.sh abort on a partition pinned by a hanging
// transaction.

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// markerBatch is the control batch of one end-transaction marker, as
// MemoryRecords.withEndTransactionMarker builds it: transactional and
// control attributes, base sequence -1, one record whose key is the
// control type (version 0, type 1 COMMIT or 0 ABORT) and whose value is
// EndTransactionMarker (version 0, coordinator epoch).
func markerBatch(producerID int64, producerEpoch int16, coordinatorEpoch int32, offset, timestamp int64, commit bool) kmsg.RecordBatch {
	typ := byte(0)
	if commit {
		typ = 1
	}
	val := binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(coordinatorEpoch))
	r := kmsg.Record{Key: []byte{0, 0, 0, typ}, Value: val}
	raw := r.AppendTo(nil)
	r.Length = int32(len(raw) - 1)
	return kmsg.RecordBatch{FirstOffset: offset, Magic: 2, Attributes: txnindex.AttrTransactional | txnindex.AttrControl,
		FirstTimestamp: timestamp, MaxTimestamp: timestamp, ProducerID: producerID, ProducerEpoch: producerEpoch, FirstSequence: -1,
		NumRecords: 1, Records: r.AppendTo(nil)}
}

// encodeBatch is rb's bytes with the batch length and the CRC-32C filled in.
func encodeBatch(rb kmsg.RecordBatch) []byte {
	raw := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
	return raw
}

// Abort names the open transaction an admin abort ends: its producer and
// epoch, and the coordinator epoch the marker carries.
type Abort struct {
	ProducerID       txnindex.ProducerID
	ProducerEpoch    int16
	CoordinatorEpoch int32
}

// AdminAbort is the ABORT marker the partition leader appends at offset
// when `kafka-transactions.sh abort --start-offset` ends the open
// transaction t: the tool reads the producer's state with
// DescribeProducers and sends WriteTxnMarkers with that producer id and
// epoch, the producer's latest coordinator epoch or 0 when it has none
// (TransactionsCommand.buildAbortSpec, AbortTransactionHandler), and
// transactionResult false. a names the producer and that coordinator
// epoch (the diagnosis's remedy). It returns the batch's bytes and the
// batch, in segment at byte position.
func AdminAbort(a Abort, offset, timestamp int64, segment int32, position int64) ([]byte, txnindex.Batch) {
	rb := markerBatch(int64(a.ProducerID), a.ProducerEpoch, a.CoordinatorEpoch, offset, timestamp, false)
	raw := encodeBatch(rb)
	b := txnindex.BatchFields{BaseOffset: offset, LastOffset: offset, BaseTimestamp: timestamp, MaxTimestamp: timestamp,
		ProducerID: a.ProducerID, Position: position, BaseSequence: -1, Records: 1, Size: int32(len(raw)),
		CoordinatorEpoch: a.CoordinatorEpoch, Segment: segment, ProducerEpoch: a.ProducerEpoch,
		Attributes: rb.Attributes, Control: txnindex.ControlAbort, Magic: 2}.Batch()
	return raw, b
}
