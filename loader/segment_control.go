package loader

// Control batches (EndTransactionMarker): the marker's type and coordinator
// epoch from the batch's first record, with decompression bounded.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/txnscope/txnscope/txnindex"
)

// control fills b.Control and b.CoordinatorEpoch from the batch's first
// record. whole is the batch if already read.
//
// An end-transaction marker batch (transactional, or whose first record
// is an ABORT or COMMIT) holds one record of a few bytes: the broker writes
// exactly that (MemoryRecords.writeEndTransactionalMarker), uncompressed,
// and the coordinator is the only writer (LogValidator refuses control
// batches from clients). One that claims more records, or whose records
// take more than maxMarkerBytes, is refused: noted as damage at its
// position, its type UNKNOWN, and the scan goes on. No more than
// maxMarkerBytes+1 bytes of a control batch are ever decompressed, so a
// marker batch of 2 KB of zstd that expands to 64 MiB costs what a marker
// costs. KRaft writes control batches that are neither (LeaderState: a
// LEADER_CHANGE followed by KRAFT_VERSION and KRAFT_VOTERS records in one
// batch, not transactional, compressed as configured): of those only the
// first record's key is read, from the same prefix.
func (s *scanner) control(b *txnindex.Batch, whole []byte) error {
	if b.IsTransactional() && b.Records != 1 {
		s.refuseMarker(b, "an end-transaction marker batch holds 1 record, found %d", b.Records)
		return nil
	}
	var body []byte // the records, or their first maxMarkerBytes+1 bytes
	if b.Compression() != txnindex.CompressionNone {
		// Brokers write markers uncompressed, but the readers would
		// decompress one, so this does too, up to the bound.
		if whole == nil {
			var err error
			if whole, err = s.w.at(s.pos, int(b.Size)); err != nil {
				return err
			}
		}
		if b.Compression() == txnindex.CompressionZstd && s.zstd == nil {
			s.zstd = newZstdDecoder(controlZstdWindow)
		}
		out, err := decompressPrefix(b.Compression(), whole[batchHeaderSize:], maxMarkerBytes+1, s.zstd)
		if err != nil {
			s.note("control batch: cannot decompress %s records: %v", b.Compression(), err)
			b.SetControl(txnindex.ControlUnknown)
			return nil
		}
		body = out
	} else {
		if whole == nil {
			h, err := s.w.at(s.pos, min(int(b.Size), controlPeek))
			if err != nil {
				return err
			}
			whole = h
		}
		body = whole[batchHeaderSize:min(len(whole), controlPeek)]
	}
	if ct, epoch, ok := brokerMarker(body); ok && b.Records == 1 {
		b.SetControl(ct)
		b.SetCoordinatorEpoch(epoch)
		return nil
	}
	larger := len(body) > maxMarkerBytes
	rec, err := firstRecord(body, larger)
	if err != "" {
		s.note("control batch: first record: %s", err)
		b.SetControl(txnindex.ControlUnknown)
		return nil
	}
	ct := controlType(rec.key, rec.keyNull)
	marker := b.IsTransactional() || ct == txnindex.ControlAbort || ct == txnindex.ControlCommit
	switch {
	case marker && larger:
		s.refuseMarker(b, "%s records larger than the %d bytes an end-transaction marker takes (a broker writes 17)", b.Compression(), maxMarkerBytes)
		return nil
	case marker && b.Records != 1:
		s.refuseMarker(b, "an end-transaction marker batch holds 1 record, found %d", b.Records)
		return nil
	}
	ct, epoch, msg := parseControl(rec.key, rec.keyNull, rec.value, rec.valueNull)
	b.SetControl(ct)
	b.SetCoordinatorEpoch(epoch)
	if msg != "" {
		s.note("control batch: %s", msg)
	}
	return nil
}

// refuseMarker notes a control batch that cannot be an end-transaction
// marker and keeps it with the type UNKNOWN.
func (s *scanner) refuseMarker(b *txnindex.Batch, format string, args ...any) {
	s.note("control batch: %s", fmt.Sprintf(format, args...))
	b.SetControl(txnindex.ControlUnknown)
}

// controlZstdWindow is the largest zstd window a control batch may
// declare. Kafka writes control batches uncompressed (markers with
// Compression.NONE, KRaft's KafkaRaftClient too), so a compressed one comes
// from elsewhere; 8 MiB covers zstd-jni's level-3 frames (2 MiB) and
// klauspost's default (8 MiB). A zstd decoder allocates the declared window
// up front, so the scan keeps one decoder for all its control batches
// (scanner.zstd), paying for one window per scan at most.
const controlZstdWindow = 8 << 20

// decompressPrefix returns the first n bytes src decompresses to (fewer
// when it holds fewer), decoding no further than that; zd, when not nil,
// decodes zstd.
func decompressPrefix(codec txnindex.Compression, src []byte, n int, zd *zstd.Decoder) ([]byte, error) {
	r, release, err := decompressReaderWith(codec, bytes.NewReader(src), int64(n), 2, zd)
	if err != nil {
		return nil, err
	}
	defer release()
	buf := make([]byte, n)
	k, err := io.ReadFull(r, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return buf[:k], err
}

// brokerMarker reads a marker's records laid out exactly as the broker
// writes them (MemoryRecords.writeEndTransactionalMarker, 17 bytes): record
// length 16, attributes 0, timestamp and offset deltas 0, a key of 4 bytes
// (version 0, type ABORT or COMMIT), a value of 6 bytes (version 0,
// coordinator epoch), no headers. ok is false for anything else, which
// firstRecord and parseControl then decode. A quarter of the batches of a
// log of short transactions are markers, and reading each through the
// general record reader was a tenth of a header scan's CPU (1 KiB
// batches); the result is the same (TestBrokerMarkerAgrees).
func brokerMarker(body []byte) (txnindex.ControlType, int32, bool) {
	if len(body) < 17 || len(body) > maxMarkerBytes {
		return 0, 0, false
	}
	be := binary.BigEndian
	// 0x20 length 16 | 00 attributes | 00 timestampDelta | 00 offsetDelta |
	// 08 key length 4 | 00 00 key version | 00 type high byte
	if be.Uint64(body) != 0x2000000008000000 {
		return 0, 0, false
	}
	// type low byte | 0c value length 6 | 00 00 value version | epoch
	if be.Uint64(body[8:])&0x00ffffff00000000 != 0x000c000000000000 || body[16] != 0 { // no headers
		return 0, 0, false
	}
	ct := txnindex.ControlType(body[8])
	if ct != txnindex.ControlAbort && ct != txnindex.ControlCommit {
		return 0, 0, false
	}
	return ct, int32(be.Uint32(body[12:])), true
}

type rawRecord struct {
	key, value         []byte
	keyNull, valueNull bool
}

// firstRecord decodes the key and value of the first record in body. When
// prefix is set, body is only the start of the records: a record running
// past it keeps what body holds of its key and value (a key cut short
// reads as too short to parse).
func firstRecord(body []byte, prefix bool) (rawRecord, string) {
	r := reader{src: body}
	length := r.varint()
	if !r.ok() {
		return rawRecord{}, "truncated length varint"
	}
	if length < 0 || (!prefix && int(length) > r.remaining()) {
		return rawRecord{}, fmt.Sprintf("record length %d, only %d bytes remain", length, r.remaining())
	}
	rr := reader{src: r.take(min(int(length), r.remaining()))}
	rr.int8()    // attributes
	rr.varlong() // timestampDelta
	rr.varint()  // offsetDelta
	var rec rawRecord
	rec.key, rec.keyNull = rr.varintBytes()
	rec.value, rec.valueNull = rr.varintBytes()
	if !rr.ok() && !prefix {
		return rawRecord{}, fmt.Sprintf("truncated inside its %d bytes", length)
	}
	return rec, ""
}

// controlType is the type in a control record's key, ControlUnknown when
// the key cannot be parsed.
func controlType(key []byte, keyNull bool) txnindex.ControlType {
	if keyNull || len(key) < 4 || int16(binary.BigEndian.Uint16(key)) < 0 {
		return txnindex.ControlUnknown
	}
	return txnindex.ParseControlType(int16(binary.BigEndian.Uint16(key[2:])))
}

// parseControl applies ControlRecordType.parse and
// EndTransactionMarker.deserializeValue. msg is non-empty when Kafka would
// throw; the type is then ControlUnknown (bad key) or the epoch -1 (bad value).
func parseControl(key []byte, keyNull bool, value []byte, valueNull bool) (txnindex.ControlType, int32, string) {
	if keyNull || len(key) < 4 {
		return txnindex.ControlUnknown, -1, fmt.Sprintf("control key: want 4 bytes (version, type), found %d", len(key))
	}
	kr := reader{src: key}
	if v := kr.int16(); v < 0 {
		return txnindex.ControlUnknown, -1, fmt.Sprintf("control key: want version >= 0, found %d", v)
	}
	ct := txnindex.ParseControlType(kr.int16())
	if ct != txnindex.ControlAbort && ct != txnindex.ControlCommit {
		return ct, -1, ""
	}
	if valueNull || len(value) < 6 {
		return ct, -1, fmt.Sprintf("%s marker value: want 6 bytes (version, coordinatorEpoch), found %d", ct, len(value))
	}
	vr := reader{src: value}
	if v := vr.int16(); v < 0 {
		return ct, -1, fmt.Sprintf("%s marker value: want version >= 0, found %d", ct, v)
	}
	return ct, vr.int32(), ""
}
