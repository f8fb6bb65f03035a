package loader

// Record decoding of magic 0 and 1 entries (LegacyRecord), including the
// compressed wrapper whose value holds the inner messages; the paged entry
// points are in records.go.

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/txnscope/txnscope/txnindex"
)

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

// readHeader reads the fields of a legacy message that follow its offset
// and size: the CRC (skipped here), magic, attributes and, from magic 1 on,
// the timestamp (before it, -1: RecordBatch.NO_TIMESTAMP).
func (m *legacyMsg) readHeader(r *reader) {
	r.uint32()
	m.Magic = r.int8()
	m.Attributes = r.int8()
	m.Timestamp = -1
	if m.Magic == 1 {
		m.Timestamp = r.int64()
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
	msg.readHeader(&r)
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
	w.readHeader(&rd)
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
