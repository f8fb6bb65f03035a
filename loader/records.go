package loader

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/txnscope/txnscope/txnindex"
)

// Record is one record of a batch, decoded. Key, Value and header values
// are nil when null and share memory with the batch's (decompressed) bytes.
type Record struct {
	Offset     int64
	Timestamp  int64 // the batch's MaxTimestamp for LogAppendTime batches; -1 for magic 0
	Attributes int8  // record attributes (v2, unused by Kafka) or the legacy message attributes
	Sequence   int32 // baseSequence+offsetDelta with Kafka's wrap, or -1
	Key        []byte
	Value      []byte
	Headers    []Header
	Magic      int8

	// Control and CoordinatorEpoch describe a record of a control batch:
	// its key's type and, for ABORT/COMMIT, the marker value's coordinator
	// epoch. Data records have ControlNone and -1.
	Control          txnindex.ControlType
	CoordinatorEpoch int32
}

// Header is one v2 record header. Kafka rejects a null header key, so Key is
// always set; Value is nil when null.
type Header struct {
	Key   string
	Value []byte
}

// minRecordSize is the smallest encoding of a v2 record: a one-byte length
// and six one-byte fields (attributes, timestampDelta, offsetDelta, key
// length, value length, header count).
const minRecordSize = 7

// Records decodes the records of b, a batch of this segment: it rereads the
// batch, checks it is the batch the scan saw and that its CRC holds,
// decompresses it (bounded by Options.MaxDecompressedSize) and validates
// each record as DefaultRecord.readFrom or LegacyRecord does.
func (f *SegmentFile) Records(b txnindex.Batch) ([]Record, error) {
	raw, err := f.ReadBatch(b)
	if err != nil {
		return nil, err
	}
	return decodeBatch(raw, b, f.Name, f.Options.maxDecompressed())
}

// RecordsOf decodes the records of b, one of the batches ParseRecordSet
// returned for data.
func RecordsOf(data []byte, b txnindex.Batch, name string) ([]Record, error) {
	if b.Position() < 0 || b.Size < headerSizeUpToMagic || b.Position()+int64(b.Size) > int64(len(data)) {
		return nil, formatErr(name, b.Position(), "batch", "size %d at this position is outside the %d-byte record set", b.Size, len(data))
	}
	return decodeBatch(data[b.Position():b.Position()+int64(b.Size)], b, name, DefaultMaxDecompressedSize)
}

func decodeBatch(raw []byte, b txnindex.Batch, name string, limit int64) ([]Record, error) {
	bad := func(format string, args ...any) error {
		return formatErr(name, b.Position(), "batch", format, args...)
	}
	if len(raw) < headerSizeUpToMagic {
		return nil, bad("truncated: %d bytes", len(raw))
	}
	base := int64(binary.BigEndian.Uint64(raw))
	length := int32(binary.BigEndian.Uint32(raw[8:]))
	magic := int8(raw[16])
	if int64(length)+logOverhead != int64(len(raw)) || magic != b.Magic() {
		return nil, bad("not the scanned batch: size %d magic %d on disk, scanned size %d magic %d", int64(length)+logOverhead, magic, b.Size, b.Magic())
	}
	switch magic {
	case 2:
		if len(raw) < batchHeaderSize {
			return nil, bad("bad size: a magic 2 batch needs at least %d bytes, found %d", batchHeaderSize, len(raw))
		}
		if base != b.BaseOffset {
			return nil, bad("not the scanned batch: base offset %d on disk, scanned %d", base, b.BaseOffset)
		}
		stored := binary.BigEndian.Uint32(raw[17:])
		if computed := crc32.Checksum(raw[v2CRCStart:], castagnoli); computed != stored {
			return nil, bad("bad CRC: stored %#08x, computed %#08x (CRC-32C over bytes [21,%d) of the batch)", stored, computed, len(raw))
		}
		return decodeV2(raw, name, b.Position(), limit)
	case 0, 1:
		stored := binary.BigEndian.Uint32(raw[12:])
		if computed := crc32.ChecksumIEEE(raw[legacyCRCStart:]); computed != stored {
			return nil, bad("bad CRC: stored %#08x, computed %#08x (CRC-32 over bytes [16,%d) of the entry)", stored, computed, len(raw))
		}
		w, msg := parseLegacyEntry(raw)
		if msg != "" {
			return nil, bad("%s", msg)
		}
		if w.codec() == txnindex.CompressionNone {
			return []Record{w.record()}, nil
		}
		inner, msg := expandLegacy(raw, limit)
		if msg != "" {
			return nil, bad("legacy wrapper: %s", msg)
		}
		out := make([]Record, len(inner))
		for i := range inner {
			out[i] = inner[i].record()
		}
		return out, nil
	}
	return nil, bad("unknown magic: want 0, 1 or 2, found %d", magic)
}

// decodeV2 decodes the records of a whole v2 batch (header included).
func decodeV2(raw []byte, name string, pos int64, limit int64) ([]Record, error) {
	h := reader{src: raw[12:batchHeaderSize]}
	h.int32() // partitionLeaderEpoch
	h.int8()  // magic
	h.uint32()
	attr := uint8(h.int16())
	lastDelta := h.int32()
	baseTS := h.int64()
	maxTS := h.int64()
	h.int64() // producerId
	h.int16() // producerEpoch
	baseSeq := h.int32()
	count := h.int32()
	baseOffset := int64(binary.BigEndian.Uint64(raw))
	_ = lastDelta

	what := "records"
	data := raw[batchHeaderSize:]
	codec := txnindex.Compression(attr & txnindex.AttrCompressionMask)
	if codec != txnindex.CompressionNone {
		var err error
		data, err = decompress(codec, data, limit, 2)
		if err != nil {
			return nil, formatErr(name, pos, "batch", "cannot decompress %s records: %v", codec, err)
		}
		what = "decompressed records"
	}
	if count < 0 {
		return nil, formatErr(name, pos, "batch", "bad records count: want >= 0, found %d", count)
	}
	if int64(count) > int64(len(data))/minRecordSize {
		return nil, formatErr(name, pos, "batch", "records count %d cannot fit in %d bytes of %s", count, len(data), what)
	}
	logAppend := attr&txnindex.AttrTimestampType != 0
	control := attr&txnindex.AttrControl != 0
	out := make([]Record, 0, count)
	r := reader{src: data}
	for i := int32(0); i < count; i++ {
		start := r.off
		bad := func(format string, args ...any) error {
			return formatErr(name, pos, "batch", "record %d at byte %#x of the %s: %s", i, start, what, fmt.Sprintf(format, args...))
		}
		length := r.varint()
		if !r.ok() {
			return nil, bad("truncated length varint")
		}
		if length < 0 || int(length) > r.remaining() {
			return nil, bad("invalid record size: expected %d bytes in record payload, but only %d remain", length, r.remaining())
		}
		rr := reader{src: r.take(int(length))}
		rec := Record{Magic: 2, Control: txnindex.ControlNone, CoordinatorEpoch: -1, Sequence: -1}
		rec.Attributes = rr.int8()
		tsDelta := rr.varlong()
		offDelta := rr.varint()
		var keyNull, valueNull bool
		rec.Key, keyNull = rr.varintBytes()
		rec.Value, valueNull = rr.varintBytes()
		hc := rr.varint()
		if !rr.ok() {
			return nil, bad("truncated inside its %d bytes", length)
		}
		// DefaultRecord.readHeaders: a negative count, or one the
		// remaining bytes cannot hold, is "Found invalid number of
		// record headers".
		if hc < 0 || int(hc) > rr.remaining() {
			return nil, bad("invalid number of record headers: %d with %d bytes left", hc, rr.remaining())
		}
		if hc > 0 {
			rec.Headers = make([]Header, 0, hc)
			for j := int32(0); j < hc; j++ {
				hk, hkNull := rr.varintBytes()
				if hkNull {
					return nil, bad("header %d: invalid null header key", j)
				}
				hv, _ := rr.varintBytes()
				rec.Headers = append(rec.Headers, Header{Key: string(hk), Value: hv})
			}
			if !rr.ok() {
				return nil, bad("truncated in its headers")
			}
		}
		if rr.remaining() != 0 {
			return nil, bad("invalid record size: expected to read %d bytes in record payload, but %d remain unread", length, rr.remaining())
		}
		rec.Offset = baseOffset + int64(offDelta)
		rec.Timestamp = baseTS + tsDelta
		if logAppend {
			rec.Timestamp = maxTS
		}
		if baseSeq >= 0 {
			rec.Sequence = wrapSequence(baseSeq, offDelta)
		}
		if control {
			ct, epoch, _ := parseControl(rec.Key, keyNull, rec.Value, valueNull)
			rec.Control, rec.CoordinatorEpoch = ct, epoch
		}
		out = append(out, rec)
	}
	if r.remaining() != 0 {
		// DefaultRecordBatch.RecordIterator: "records still remaining".
		return nil, formatErr(name, pos, "batch", "%d bytes of %s remain after the %d records the batch declares", r.remaining(), what, count)
	}
	return out, nil
}

// wrapSequence is DefaultRecordBatch.incrementSequence.
func wrapSequence(seq, delta int32) int32 {
	s := int64(seq) + int64(delta)
	if s > 1<<31-1 {
		s -= 1 << 31
	}
	return int32(s)
}

// legacyMsg is one magic 0/1 message (LegacyRecord) with its log offset.
type legacyMsg struct {
	Offset     int64
	Magic      int8
	Attributes int8
	Timestamp  int64
	Key, Value []byte
	ValueNull  bool
}

func (m *legacyMsg) codec() txnindex.Compression {
	return txnindex.Compression(m.Attributes & txnindex.AttrCompressionMask)
}

func (m *legacyMsg) record() Record {
	return Record{
		Offset: m.Offset, Timestamp: m.Timestamp, Attributes: m.Attributes,
		Sequence: -1, Key: m.Key, Value: m.Value, Magic: m.Magic,
		Control: txnindex.ControlNone, CoordinatorEpoch: -1,
	}
}

// parseLegacyEntry parses a whole log entry: offset, size, then the message
// (crc, magic, attributes, v1 timestamp, key, value). The entry's size field
// must already match len(e).
func parseLegacyEntry(e []byte) (legacyMsg, string) {
	r := reader{src: e}
	m := legacyMsg{Offset: r.int64()}
	r.int32() // size
	r.uint32()
	m.Magic = r.int8()
	m.Attributes = r.int8()
	m.Timestamp = -1
	if m.Magic == 1 {
		m.Timestamp = r.int64()
	}
	m.Key, _ = r.int32Bytes()
	m.Value, m.ValueNull = r.int32Bytes()
	if !r.ok() {
		return m, fmt.Sprintf("magic %d message truncated: key and value lengths exceed its %d bytes", m.Magic, len(e))
	}
	return m, ""
}

// expandLegacy decompresses a legacy wrapper entry (whole, header size hdr)
// and returns its inner messages with absolute offsets, following
// AbstractLegacyRecordBatch.DeepRecordsIterator.
func expandLegacy(whole []byte, limit int64) ([]legacyMsg, string) {
	w, msg := parseLegacyEntry(whole)
	if msg != "" {
		return nil, msg
	}
	codec := w.codec()
	switch {
	case codec == txnindex.CompressionZstd:
		return nil, "zstd is not allowed in magic 0/1 messages"
	case codec > txnindex.CompressionZstd:
		return nil, fmt.Sprintf("unknown compression type id %d", codec)
	case w.ValueNull:
		return nil, "compressed wrapper has a null value"
	}
	data, err := decompress(codec, w.Value, limit, w.Magic)
	if err != nil {
		return nil, fmt.Sprintf("cannot decompress %s value: %v", codec, err)
	}
	r := reader{src: data}
	inner := make([]legacyMsg, 0, min(len(data)/(logOverhead+recordOverheadV0), 1<<12))
	for r.remaining() > 0 {
		at := r.off
		if r.remaining() < logOverhead {
			return nil, fmt.Sprintf("inner message at byte %#x of the decompressed value: %d trailing bytes", at, r.remaining())
		}
		r.int64()
		size := r.int32()
		if size < recordOverheadV0 || int(size) > r.remaining() {
			return nil, fmt.Sprintf("inner message at byte %#x of the decompressed value: bad size %d with %d bytes left", at, size, r.remaining())
		}
		r.take(int(size))
		m, msg := parseLegacyEntry(data[at:r.off])
		if msg != "" {
			return nil, fmt.Sprintf("inner message at byte %#x of the decompressed value: %s", at, msg)
		}
		if m.codec() != txnindex.CompressionNone {
			return nil, fmt.Sprintf("inner message at byte %#x of the decompressed value: nested %s compression", at, m.codec())
		}
		inner = append(inner, m)
	}
	if len(inner) == 0 {
		return nil, "compressed wrapper holds no messages"
	}
	if w.Magic >= 1 {
		// Magic 1 inner offsets are relative; the wrapper carries the
		// absolute offset of the last one. A wrapper offset of 0 is
		// "produce data from certain versions of librdkafka": base 0.
		var absBase int64
		if w.Offset != 0 {
			last := inner[len(inner)-1].Offset
			if w.Offset < last {
				return nil, fmt.Sprintf("wrapper offset %d is below its last inner relative offset %d", w.Offset, last)
			}
			absBase = w.Offset - last
		}
		logAppend := w.Attributes&txnindex.AttrTimestampType != 0
		for i := range inner {
			inner[i].Offset += absBase
			if logAppend && inner[i].Magic >= 1 {
				// LegacyRecord.timestamp: inner messages take the
				// wrapper's LogAppendTime.
				inner[i].Timestamp = w.Timestamp
			}
		}
	}
	return inner, ""
}
