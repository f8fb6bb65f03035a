package loader

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

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

// PageLimits select the part of a batch's records RecordsPage decodes and
// returns. A batch of 7-byte records decompressing to the 64 MiB bound
// holds 9.6 million of them: decoding them all for one request took 4.45 GB
// (issue 17), so a caller serving a request asks for a page.
type PageLimits struct {
	From  int // index in the batch (0-based, batch order) of the first record returned
	Limit int // at most this many records; <= 0 for no limit

	// MaxBytes ends the page once the records returned take this many
	// bytes (a v2 record's encoding, a legacy message's key and value);
	// the first record is returned whatever its size. <= 0 for no limit.
	MaxBytes int64
}

// RecordPage is part of a batch's records, in batch order.
type RecordPage struct {
	Records []Record
	From    int // index in the batch of Records[0] (the PageLimits' From)

	// Total is the number of records in the batch: the header's
	// recordsCount for magic 2, the inner messages of a compressed legacy
	// wrapper (counted without keeping them), 1 for a plain legacy entry.
	Total int

	// Next is the index of the first record after Records, or -1 when
	// Records reach the end of the batch.
	Next int
}

// Records decodes the records of b, a batch of this segment: it rereads the
// batch, checks it is the batch the scan saw and that its CRC holds,
// decompresses it (bounded by Options.MaxDecompressedSize) and validates
// each record as DefaultRecord.readFrom or LegacyRecord does. It holds them
// all: RecordsPage decodes part of a batch.
func (f *SegmentFile) Records(b txnindex.Batch) ([]Record, error) {
	p, err := f.RecordsPage(context.Background(), b, PageLimits{})
	return p.Records, err
}

// RecordsPage decodes the records of b that p selects. The batch's CRC is
// checked over its bytes as they stream by; the records are decompressed
// and decoded in order up to the end of the page and no further, each
// record before the page validated and dropped, so the work is that of the
// records up to the page's end and the memory that of the page (and of the
// largest record). Records after the page are not read, so damage there is
// reported by the page that reaches it, and the check that no bytes follow
// the last record is made by the page that ends the batch. It stops with
// ctx's error when ctx ends.
func (f *SegmentFile) RecordsPage(ctx context.Context, b txnindex.Batch, p PageLimits) (RecordPage, error) {
	if err := f.checkBounds(b); err != nil {
		return RecordPage{}, err
	}
	r, release, err := f.source()
	if err != nil {
		return RecordPage{}, err
	}
	defer release()
	return decodePage(ctx, r, b, f.Name, f.Options.maxDecompressed(), p)
}

// RecordsOf decodes the records of b, one of the batches ParseRecordSet
// returned for data.
func RecordsOf(data []byte, b txnindex.Batch, name string) ([]Record, error) {
	p, err := RecordsPageOf(context.Background(), data, b, name, PageLimits{})
	return p.Records, err
}

// RecordsPageOf is RecordsPage for one of the batches ParseRecordSet
// returned for data.
func RecordsPageOf(ctx context.Context, data []byte, b txnindex.Batch, name string, p PageLimits) (RecordPage, error) {
	if b.Position() < 0 || b.Size < headerSizeUpToMagic || b.Position()+int64(b.Size) > int64(len(data)) {
		return RecordPage{}, formatErr(name, b.Position(), "batch", "size %d at this position is outside the %d-byte record set", b.Size, len(data))
	}
	return decodePage(ctx, &bytesReaderAt{data}, b, name, DefaultMaxDecompressedSize, p)
}

// decodePage decodes the page p of the batch b, read from r.
func decodePage(ctx context.Context, r io.ReaderAt, b txnindex.Batch, name string, limit int64, p PageLimits) (RecordPage, error) {
	pos, size := b.Position(), int64(b.Size)
	bad := func(format string, args ...any) (RecordPage, error) {
		return RecordPage{}, formatErr(name, pos, "batch", format, args...)
	}
	if size < headerSizeUpToMagic {
		return bad("truncated: %d bytes", size)
	}
	hdr := make([]byte, min(size, batchHeaderSize))
	if err := readFullAt(r, hdr, pos); err != nil {
		return RecordPage{}, err
	}
	base := int64(binary.BigEndian.Uint64(hdr))
	length := int32(binary.BigEndian.Uint32(hdr[8:]))
	magic := int8(hdr[16])
	if int64(length)+logOverhead != size || magic != b.Magic() {
		return bad("not the scanned batch: size %d magic %d on disk, scanned size %d magic %d", int64(length)+logOverhead, magic, b.Size, b.Magic())
	}
	switch magic {
	case 2:
		if size < batchHeaderSize {
			return bad("bad size: a magic 2 batch needs at least %d bytes, found %d", batchHeaderSize, size)
		}
		if base != b.BaseOffset {
			return bad("not the scanned batch: base offset %d on disk, scanned %d", base, b.BaseOffset)
		}
		stored := binary.BigEndian.Uint32(hdr[17:])
		computed, err := crcAt(r, pos+v2CRCStart, size-v2CRCStart, castagnoli)
		if err != nil {
			return RecordPage{}, err
		}
		if computed != stored {
			return bad("bad CRC: stored %#08x, computed %#08x (CRC-32C over bytes [21,%d) of the batch)", stored, computed, size)
		}
		body := io.NewSectionReader(r, pos+batchHeaderSize, size-batchHeaderSize)
		return decodeV2(ctx, hdr, body, size-batchHeaderSize, name, pos, limit, p)
	case 0, 1:
		stored := binary.BigEndian.Uint32(hdr[12:])
		computed, err := crcAt(r, pos+legacyCRCStart, size-legacyCRCStart, crc32.IEEETable)
		if err != nil {
			return RecordPage{}, err
		}
		if computed != stored {
			return bad("bad CRC: stored %#08x, computed %#08x (CRC-32 over bytes [16,%d) of the entry)", stored, computed, size)
		}
		return decodeLegacy(ctx, r, pos, size, name, limit, p)
	}
	return bad("unknown magic: want 0, 1 or 2, found %d", magic)
}

// crcAt computes the CRC of n bytes of r from off, streaming them through
// a small buffer.
func crcAt(r io.ReaderAt, off, n int64, tab *crc32.Table) (uint32, error) {
	if br, ok := r.(*bytesReaderAt); ok && off >= 0 && off+n <= int64(len(br.b)) {
		return crc32.Checksum(br.b[off:off+n], tab), nil
	}
	h := crc32.New(tab)
	k, err := io.CopyBuffer(h, io.NewSectionReader(r, off, n), make([]byte, min(n, 64<<10)))
	if err == nil && k < n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return 0, fmt.Errorf("loader: reading %d bytes at byte %#x: %w", n, off, err)
	}
	return h.Sum32(), nil
}

// cancelRecordsEvery is how many records a decode reads between looks at
// its context.
const cancelRecordsEvery = 4096

// stopped is the error of a decode whose context ended.
func stopped(ctx context.Context, name string, pos int64, i int) error {
	return fmt.Errorf("loader: %s: batch at byte %#x: decoding stopped at record %d: %w", name, pos, i, context.Cause(ctx))
}

// sourceReader remembers the first error of a decompressing reader other
// than the end of the stream, so that a short read can be told apart: the
// records ran out (damage in the records) or the codec failed.
type sourceReader struct {
	r   io.Reader
	err error
	off int64 // bytes read so far
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.off += int64(n)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// readBody reads the n bytes of a record body into buf's array when it has
// room, else into a new one grown with the bytes that arrive (at most
// doubling), so a length that claims more than the stream holds costs
// what the stream holds.
func readBody(r io.Reader, n int, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < n {
		step := min(n-len(buf), max(len(buf), 64<<10))
		if cap(buf)-len(buf) < step {
			grown := make([]byte, len(buf), len(buf)+step)
			copy(grown, buf)
			buf = grown
		}
		k, err := io.ReadFull(r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+k]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// readVarint is reader.varint over a stream: ByteUtils.readVarint's
// rules, at most 5 bytes. ok is false on a short read or an overlong
// varint.
func readVarint(r *bufio.Reader) (int32, bool) {
	var v uint32
	for i := 0; i < 5; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, false
		}
		v |= uint32(b&0x7f) << (7 * i)
		if b < 0x80 {
			return int32(v>>1) ^ -int32(v&1), true
		}
	}
	return 0, false
}

// pageCap is the capacity to start a page of a batch of n records with.
func pageCap(n int, p PageLimits) int {
	c := max(n-p.From, 0)
	if p.Limit > 0 {
		c = min(c, p.Limit)
	}
	return min(c, 1024)
}

// pageFull reports whether a page holding n records of size bytes is
// complete under p.
func pageFull(p PageLimits, n int, size int64) bool {
	return (p.Limit > 0 && n >= p.Limit) || (p.MaxBytes > 0 && n > 0 && size >= p.MaxBytes)
}

// decodeV2 decodes the page p of the records of a v2 batch: hdr is its
// 61-byte header, body the bodyLen bytes after it.
func decodeV2(ctx context.Context, hdr []byte, body io.Reader, bodyLen int64, name string, pos int64, limit int64, p PageLimits) (RecordPage, error) {
	fail := func(format string, args ...any) (RecordPage, error) {
		return RecordPage{}, formatErr(name, pos, "batch", format, args...)
	}
	h := reader{src: hdr[12:batchHeaderSize]}
	h.int32() // partitionLeaderEpoch
	h.int8()  // magic
	h.uint32()
	attr := uint8(h.int16())
	h.int32() // lastOffsetDelta
	baseTS := h.int64()
	maxTS := h.int64()
	h.int64() // producerId
	h.int16() // producerEpoch
	baseSeq := h.int32()
	count := h.int32()
	baseOffset := int64(binary.BigEndian.Uint64(hdr))

	what := "records"
	avail := bodyLen // bytes the records may take
	codec := txnindex.Compression(attr & txnindex.AttrCompressionMask)
	src := &sourceReader{r: body}
	if codec != txnindex.CompressionNone {
		dr, release, err := decompressReader(codec, bufio.NewReaderSize(body, 32<<10), limit, 2)
		if err != nil {
			return fail("cannot decompress %s records: %v", codec, err)
		}
		defer release()
		src.r = dr
		what, avail = "decompressed records", limit
	}
	if count < 0 {
		return fail("bad records count: want >= 0, found %d", count)
	}
	if int64(count) > avail/minRecordSize {
		if codec == txnindex.CompressionNone {
			return fail("records count %d cannot fit in %d bytes of %s", count, avail, what)
		}
		return fail("records count %d cannot fit in the %d bytes the records may decompress to", count, avail)
	}
	logAppend := attr&txnindex.AttrTimestampType != 0
	control := attr&txnindex.AttrControl != 0
	page := RecordPage{From: p.From, Total: int(count), Next: -1}
	page.Records = make([]Record, 0, pageCap(int(count), p))
	br := bufio.NewReaderSize(src, 32<<10)
	var scratch []byte
	var size int64
	read := func() int64 { return src.off - int64(br.Buffered()) }
	for i := 0; i < int(count); i++ {
		if i%cancelRecordsEvery == 0 && ctx.Err() != nil {
			return RecordPage{}, stopped(ctx, name, pos, i)
		}
		keep := i >= p.From
		if keep && pageFull(p, len(page.Records), size) {
			page.Next = i
			return page, nil
		}
		start := read()
		bad := func(format string, args ...any) (RecordPage, error) {
			if src.err != nil {
				return fail("cannot decompress %s records: %v", codec, src.err)
			}
			return fail("record %d at byte %#x of the %s: %s", i, start, what, fmt.Sprintf(format, args...))
		}
		length, ok := readVarint(br)
		if !ok {
			return bad("truncated length varint")
		}
		remain := avail - read()
		if length < 0 || (codec == txnindex.CompressionNone && int64(length) > remain) {
			if codec != txnindex.CompressionNone {
				return bad("invalid record size: expected %d bytes in record payload", length)
			}
			return bad("invalid record size: expected %d bytes in record payload, but only %d remain", length, remain)
		}
		if !keep && int(length) <= br.Size() {
			// Validate a record before the page in the reader's
			// buffer and drop it: no copy, no allocation.
			rb, err := br.Peek(int(length))
			if err != nil {
				return bad("invalid record size: expected %d bytes in record payload, but only %d remain", length, len(rb))
			}
			if _, _, _, msg := parseV2Record(rb, false); msg != "" {
				return bad("%s", msg)
			}
			br.Discard(int(length))
			continue
		}
		var buf []byte
		if !keep {
			buf = scratch
		}
		rb, err := readBody(br, int(length), buf)
		if !keep {
			scratch = rb
		}
		if err != nil {
			return bad("invalid record size: expected %d bytes in record payload, but only %d remain", length, len(rb))
		}
		rec, keyNull, valueNull, msg := parseV2Record(rb, keep)
		if msg != "" {
			return bad("%s", msg)
		}
		if !keep {
			continue
		}
		rec.Offset = baseOffset + int64(rec.offsetDelta)
		rec.Timestamp = baseTS + rec.Timestamp
		if logAppend {
			rec.Timestamp = maxTS
		}
		if baseSeq >= 0 {
			rec.Sequence = wrapSequence(baseSeq, rec.offsetDelta)
		}
		if control {
			ct, epoch, _ := parseControl(rec.Key, keyNull, rec.Value, valueNull)
			rec.Control, rec.CoordinatorEpoch = ct, epoch
		}
		size += int64(length)
		page.Records = append(page.Records, rec.Record)
	}
	// DefaultRecordBatch.RecordIterator: "records still remaining".
	rest, err := io.Copy(io.Discard, br)
	if err != nil || src.err != nil {
		return fail("cannot decompress %s records: %v", codec, firstErr(src.err, err))
	}
	if rest != 0 {
		return fail("%d bytes of %s remain after the %d records the batch declares", rest, what, count)
	}
	return page, nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// v2Record is a decoded record with its raw offsetDelta; Timestamp holds
// the timestampDelta until the caller adds the base.
type v2Record struct {
	Record
	offsetDelta int32
}

// parseV2Record decodes one record body (after its length) as
// DefaultRecord.readFrom does; msg says what is wrong. Headers are only
// validated, not kept, unless keep.
func parseV2Record(body []byte, keep bool) (rec v2Record, keyNull, valueNull bool, msg string) {
	rr := reader{src: body}
	rec.Record = Record{Magic: 2, Control: txnindex.ControlNone, CoordinatorEpoch: -1, Sequence: -1}
	rec.Attributes = rr.int8()
	rec.Timestamp = rr.varlong()
	rec.offsetDelta = rr.varint()
	rec.Key, keyNull = rr.varintBytes()
	rec.Value, valueNull = rr.varintBytes()
	hc := rr.varint()
	if !rr.ok() {
		return rec, false, false, fmt.Sprintf("truncated inside its %d bytes", len(body))
	}
	// DefaultRecord.readHeaders: a negative count, or one the
	// remaining bytes cannot hold, is "Found invalid number of
	// record headers".
	if hc < 0 || int(hc) > rr.remaining() {
		return rec, false, false, fmt.Sprintf("invalid number of record headers: %d with %d bytes left", hc, rr.remaining())
	}
	if hc > 0 && keep {
		rec.Headers = make([]Header, 0, hc)
	}
	for j := int32(0); j < hc; j++ {
		hk, hkNull := rr.varintBytes()
		if hkNull {
			return rec, false, false, fmt.Sprintf("header %d: invalid null header key", j)
		}
		hv, _ := rr.varintBytes()
		if keep {
			rec.Headers = append(rec.Headers, Header{Key: string(hk), Value: hv})
		}
	}
	if !rr.ok() {
		return rec, false, false, "truncated in its headers"
	}
	if rr.remaining() != 0 {
		return rec, false, false, fmt.Sprintf("invalid record size: expected to read %d bytes in record payload, but %d remain unread", len(body), rr.remaining())
	}
	return rec, keyNull, valueNull, ""
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
	if len(e) < logOverhead {
		return legacyMsg{}, fmt.Sprintf("entry of %d bytes has no offset and size", len(e))
	}
	return parseLegacyMessage(int64(binary.BigEndian.Uint64(e)), e[logOverhead:], len(e))
}

// parseLegacyMessage parses the message m of the entry at offset (its
// bytes after the offset and size; n is the entry's size, for errors).
func parseLegacyMessage(offset int64, m []byte, n int) (legacyMsg, string) {
	r := reader{src: m}
	msg := legacyMsg{Offset: offset}
	r.uint32()
	msg.Magic = r.int8()
	msg.Attributes = r.int8()
	msg.Timestamp = -1
	if msg.Magic == 1 {
		msg.Timestamp = r.int64()
	}
	msg.Key, _ = r.int32Bytes()
	msg.Value, msg.ValueNull = r.int32Bytes()
	if !r.ok() {
		return msg, fmt.Sprintf("magic %d message truncated: key and value lengths exceed its %d bytes", msg.Magic, n)
	}
	return msg, ""
}

// wrapperValue locates the value of the legacy entry of size bytes at pos
// in r: the header fields in w (Key and Value unset), and where the value
// lies. A compressed wrapper's key is skipped, not read.
func wrapperValue(r io.ReaderAt, pos, size int64) (w legacyMsg, valuePos, valueLen int64, msg string, err error) {
	h := make([]byte, min(size, legacyHeaderV1+4))
	if err := readFullAt(r, h, pos); err != nil {
		return w, 0, 0, "", err
	}
	rd := reader{src: h}
	w.Offset = rd.int64()
	rd.int32() // size
	rd.uint32()
	w.Magic = rd.int8()
	w.Attributes = rd.int8()
	w.Timestamp = -1
	if w.Magic == 1 {
		w.Timestamp = rd.int64()
	}
	keyLen := rd.int32()
	truncated := fmt.Sprintf("magic %d message truncated: key and value lengths exceed its %d bytes", w.Magic, size)
	if !rd.ok() {
		return w, 0, 0, truncated, nil
	}
	at := int64(rd.off) + max(int64(keyLen), 0)
	if at+4 > size {
		return w, 0, 0, truncated, nil
	}
	var l [4]byte
	if err := readFullAt(r, l[:], pos+at); err != nil {
		return w, 0, 0, "", err
	}
	n := int64(int32(binary.BigEndian.Uint32(l[:])))
	at += 4
	if n < 0 {
		w.ValueNull = true
		return w, 0, 0, "", nil
	}
	if at+n > size {
		return w, 0, 0, truncated, nil
	}
	return w, pos + at, n, "", nil
}

// walkWrapper decompresses the value of the wrapper w (valueLen bytes at
// valuePos in r, at most limit bytes decompressed) and calls fn with each
// inner message in turn, following
// AbstractLegacyRecordBatch.DeepRecordsIterator, until fn returns false;
// keep(i) says whether message i's key and value must outlive the call
// (else they share one buffer). It returns the messages seen, and what is
// wrong (msg) or the context's error.
func walkWrapper(ctx context.Context, w legacyMsg, r io.ReaderAt, valuePos, valueLen, limit int64, keep func(int) bool, fn func(int, legacyMsg) bool) (int, string, error) {
	codec := w.codec()
	switch {
	case codec == txnindex.CompressionZstd:
		return 0, "zstd is not allowed in magic 0/1 messages", nil
	case codec > txnindex.CompressionZstd:
		return 0, fmt.Sprintf("unknown compression type id %d", codec), nil
	case w.ValueNull:
		return 0, "compressed wrapper has a null value", nil
	}
	dr, release, err := decompressReader(codec, bufio.NewReaderSize(io.NewSectionReader(r, valuePos, valueLen), 32<<10), limit, w.Magic)
	if err != nil {
		return 0, fmt.Sprintf("cannot decompress %s value: %v", codec, err), nil
	}
	defer release()
	src := &sourceReader{r: dr}
	br := bufio.NewReaderSize(src, 32<<10)
	var scratch []byte
	var at int64
	for i := 0; ; i++ {
		if i%cancelRecordsEvery == 0 && ctx.Err() != nil {
			return i, "", ctx.Err()
		}
		where := fmt.Sprintf("inner message at byte %#x of the decompressed value", at)
		var head [logOverhead]byte
		n, err := io.ReadFull(br, head[:])
		if src.err != nil {
			return i, fmt.Sprintf("cannot decompress %s value: %v", codec, src.err), nil
		}
		if err == io.EOF {
			if i == 0 {
				return 0, "compressed wrapper holds no messages", nil
			}
			return i, "", nil
		}
		if err != nil {
			return i, fmt.Sprintf("%s: %d trailing bytes", where, n), nil
		}
		size := int32(binary.BigEndian.Uint32(head[8:]))
		if size < recordOverheadV0 {
			return i, fmt.Sprintf("%s: bad size %d, want at least %d", where, size, recordOverheadV0), nil
		}
		var buf []byte
		k := keep(i)
		if !k {
			buf = scratch
		}
		body, err := readBody(br, int(size), buf)
		if !k {
			scratch = body
		}
		if src.err != nil {
			return i, fmt.Sprintf("cannot decompress %s value: %v", codec, src.err), nil
		}
		if err != nil {
			return i, fmt.Sprintf("%s: bad size %d with %d bytes left", where, size, len(body)), nil
		}
		m, msg := parseLegacyMessage(int64(binary.BigEndian.Uint64(head[:])), body, logOverhead+int(size))
		if msg != "" {
			return i, fmt.Sprintf("%s: %s", where, msg), nil
		}
		if m.codec() != txnindex.CompressionNone {
			return i, fmt.Sprintf("%s: nested %s compression", where, m.codec()), nil
		}
		at += logOverhead + int64(size)
		if !fn(i, m) {
			return i + 1, "", nil
		}
	}
}

// wrapperSpan walks a whole wrapper without keeping its messages and
// returns how many it holds and the absolute offset of the first: magic 1
// inner offsets are relative, the wrapper carrying the absolute offset of
// the last one (a wrapper offset of 0 is "produce data from certain
// versions of librdkafka": base 0), so absBase is what each inner offset
// needs added.
func wrapperSpan(ctx context.Context, w legacyMsg, r io.ReaderAt, valuePos, valueLen, limit int64) (n int, first, absBase int64, msg string, err error) {
	var last int64
	never := func(int) bool { return false }
	n, msg, err = walkWrapper(ctx, w, r, valuePos, valueLen, limit, never, func(i int, m legacyMsg) bool {
		if i == 0 {
			first = m.Offset
		}
		last = m.Offset
		return true
	})
	if msg != "" || err != nil {
		return n, 0, 0, msg, err
	}
	if w.Magic >= 1 && w.Offset != 0 {
		if w.Offset < last {
			return n, 0, 0, fmt.Sprintf("wrapper offset %d is below its last inner relative offset %d", w.Offset, last), nil
		}
		absBase = w.Offset - last
	}
	return n, first + absBase, absBase, "", nil
}

// expandLegacy returns how many inner messages the legacy wrapper entry
// whole holds and the absolute offset of the first, without keeping them.
func expandLegacy(whole []byte, limit int64) (n int, first int64, msg string) {
	r := &bytesReaderAt{whole}
	w, vpos, vlen, msg, _ := wrapperValue(r, 0, int64(len(whole)))
	if msg != "" {
		return 0, 0, msg
	}
	n, first, _, msg, _ = wrapperSpan(context.Background(), w, r, vpos, vlen, limit)
	return n, first, msg
}

// decodeLegacy decodes the page p of a magic 0/1 entry: the message
// itself, or the inner messages of a compressed wrapper (walked twice: once
// to count them and find the offsets, once for the page).
func decodeLegacy(ctx context.Context, r io.ReaderAt, pos, size int64, name string, limit int64, p PageLimits) (RecordPage, error) {
	bad := func(format string, args ...any) (RecordPage, error) {
		return RecordPage{}, formatErr(name, pos, "batch", format, args...)
	}
	w, vpos, vlen, msg, err := wrapperValue(r, pos, size)
	if err != nil {
		return RecordPage{}, err
	}
	if msg != "" {
		return bad("%s", msg)
	}
	page := RecordPage{From: p.From, Total: 1, Next: -1, Records: []Record{}}
	if w.codec() == txnindex.CompressionNone {
		raw := make([]byte, size)
		if err := readFullAt(r, raw, pos); err != nil {
			return RecordPage{}, err
		}
		m, msg := parseLegacyEntry(raw)
		if msg != "" {
			return bad("%s", msg)
		}
		if p.From == 0 {
			page.Records = append(page.Records, m.record())
		}
		return page, nil
	}
	n, _, absBase, msg, err := wrapperSpan(ctx, w, r, vpos, vlen, limit)
	if err != nil {
		return RecordPage{}, stopped(ctx, name, pos, n)
	}
	if msg != "" {
		return bad("legacy wrapper: %s", msg)
	}
	page.Total = n
	page.Records = make([]Record, 0, pageCap(n, p))
	logAppend := w.Attributes&txnindex.AttrTimestampType != 0
	var bytes int64
	keep := func(i int) bool { return i >= p.From }
	seen, msg, err := walkWrapper(ctx, w, r, vpos, vlen, limit, keep, func(i int, m legacyMsg) bool {
		if i < p.From {
			return true
		}
		if pageFull(p, len(page.Records), bytes) {
			page.Next = i
			return false
		}
		m.Offset += absBase
		if logAppend && m.Magic >= 1 {
			// LegacyRecord.timestamp: inner messages take the
			// wrapper's LogAppendTime.
			m.Timestamp = w.Timestamp
		}
		page.Records = append(page.Records, m.record())
		bytes += int64(len(m.Key) + len(m.Value))
		return true
	})
	if err != nil {
		return RecordPage{}, stopped(ctx, name, pos, seen)
	}
	if msg != "" {
		return bad("legacy wrapper: %s", msg)
	}
	return page, nil
}
