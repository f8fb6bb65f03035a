package difftest

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// kmsgBatches decodes a record set (fetch response bytes) with kmsg, fully,
// into the engine's batch headers. It is the independent decoder the
// differential tests feed the engine with, and the baseline the benchmarks
// compare against. A truncated trailing batch is dropped, as Java does.
func kmsgBatches(data []byte, pos0 int64) ([]txnindex.Batch, error) {
	var out []txnindex.Batch
	pos := int64(0)
	for len(data) >= 17 {
		length := int32(binary.BigEndian.Uint32(data[8:]))
		size := int64(length) + 12
		if length < 14 || size > int64(len(data)) {
			break
		}
		if magic := data[16]; magic != 2 {
			return out, fmt.Errorf("batch at byte %d: magic %d, want 2", pos, magic)
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(data[:size]); err != nil {
			return out, fmt.Errorf("batch at byte %d: %w", pos, err)
		}
		b := txnindex.BatchFields{
			BaseOffset: rb.FirstOffset, LastOffset: rb.FirstOffset + int64(rb.LastOffsetDelta),
			BaseTimestamp: rb.FirstTimestamp, MaxTimestamp: rb.MaxTimestamp,
			ProducerID: txnindex.ProducerID(rb.ProducerID), ProducerEpoch: rb.ProducerEpoch,
			PartitionLeaderEpoch: rb.PartitionLeaderEpoch, BaseSequence: rb.FirstSequence,
			Records: rb.NumRecords, Size: int32(size), Position: pos0 + pos, Magic: rb.Magic,
			Attributes: rb.Attributes & 0xff, Control: txnindex.ControlNone, CoordinatorEpoch: -1,
		}.Batch()
		if b.IsControl() && rb.NumRecords > 0 {
			var rec kmsg.Record
			if err := rec.ReadFrom(rb.Records); err != nil {
				return out, fmt.Errorf("control batch at byte %d: %w", pos, err)
			}
			if len(rec.Key) >= 4 {
				b.SetControl(txnindex.ParseControlType(int16(binary.BigEndian.Uint16(rec.Key[2:]))))
			} else {
				b.SetControl(txnindex.ControlUnknown)
			}
			if len(rec.Value) >= 6 {
				b.SetCoordinatorEpoch(int32(binary.BigEndian.Uint32(rec.Value[2:])))
			}
		}
		out = append(out, b)
		data = data[size:]
		pos += size
	}
	return out, nil
}
