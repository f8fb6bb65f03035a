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
// holds 9.6 million of them: decoding them all for one request took 4.45 GB,
// so a caller serving a request asks for a page.
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

// RecordsPageAt is RecordsPage for a batch that a scan of the segment
// file r (size bytes, named name) found, read back without the scanned
// SegmentFile: package segsum keeps only the headers of the segments in
// view, and decodes a batch's records from its file when asked. The same
// checks hold: the bytes at the batch's position must be the scanned
// batch (base offset, size, magic) with a CRC that holds, so a file
// rewritten since the scan gives an error, never another batch's records.
func RecordsPageAt(ctx context.Context, r io.ReaderAt, size int64, name string, b txnindex.Batch, o ScanOptions, p PageLimits) (RecordPage, error) {
	if b.Position() < 0 || b.Size < headerSizeUpToMagic || b.Position()+int64(b.Size) > size {
		return RecordPage{}, formatErr(name, b.Position(), "batch", "size %d at this position is outside the %d-byte file", b.Size, size)
	}
	return decodePage(ctx, r, b, name, o.maxDecompressed(), p)
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
