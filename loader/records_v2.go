package loader

// Record decoding of magic 2 batches (DefaultRecordBatch, DefaultRecord);
// the paged entry points are in records.go.

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/txnscope/txnscope/txnindex"
)

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
	// DefaultRecordBatch.RecordIterator: "records still remaining". Kafka
	// reads one byte past the last record (ensureNoneRemaining); the bytes
	// that remain are counted up to trailingProbe, not decompressed to the
	// end: a 2 KB zstd batch of one record and 64 MiB of zeros cost 64 MiB
	// of decompression each time its records were read.
	tail := io.Reader(br)
	if codec != txnindex.CompressionNone {
		tail = io.LimitReader(br, trailingProbe+1)
	}
	rest, err := io.Copy(io.Discard, tail)
	if err != nil || src.err != nil {
		return fail("cannot decompress %s records: %v", codec, firstErr(src.err, err))
	}
	switch {
	case rest > trailingProbe && codec != txnindex.CompressionNone:
		return fail("more than %d bytes of %s remain after the %d records the batch declares", trailingProbe, what, count)
	case rest != 0:
		return fail("%d bytes of %s remain after the %d records the batch declares", rest, what, count)
	}
	return page, nil
}

// trailingProbe is how many decompressed bytes after a batch's last record
// are read to say how many remain.
const trailingProbe = 64 << 10

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
