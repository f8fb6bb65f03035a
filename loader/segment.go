package loader

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"github.com/txnscope/txnscope/txnindex"
)

// Sizes and positions of the on-disk formats (Records.java,
// DefaultRecordBatch.java, LegacyRecord.java).
const (
	logOverhead         = 12 // offset int64 + size int32 (Records.LOG_OVERHEAD)
	headerSizeUpToMagic = 17 // Records.HEADER_SIZE_UP_TO_MAGIC
	recordOverheadV0    = 14 // LegacyRecord.RECORD_OVERHEAD_V0: the smallest size field any entry may declare
	recordOverheadV1    = 22 // LegacyRecord.RECORD_OVERHEAD_V1
	batchHeaderSize     = 61 // DefaultRecordBatch.RECORD_BATCH_OVERHEAD
	v2CRCStart          = 21 // the v2 CRC covers [ATTRIBUTES_OFFSET, end)
	legacyCRCStart      = 16 // the legacy CRC covers [MAGIC_OFFSET, end)
	legacyHeaderV0      = 18 // offset, size, crc, magic, attributes
	legacyHeaderV1      = 26 // ... plus the timestamp

	// maxMarkerBytes bounds the records of an end-transaction marker
	// batch, decompressed. A broker writes one record of 17 bytes
	// (EndTransactionMarker.CURRENT_END_TXN_SCHEMA_RECORD_SIZE plus its
	// length varint): a 4-byte key (version, type) and a 6-byte value
	// (version, coordinatorEpoch), 0 headers. Readers parse a longer key
	// or value as version 0 (ControlRecordType.parseTypeId,
	// EndTransactionMarker.deserializeValue), so future versions may add
	// fields; 256 bytes leaves room for that, and for every varint at its
	// longest (46 bytes), while no marker batch can make the scan expand
	// a decompression bomb.
	maxMarkerBytes = 256

	// controlPeek is how much of a control batch the header-only scan
	// reads: enough to tell a marker's records from larger ones.
	controlPeek = batchHeaderSize + maxMarkerBytes + 1
)

// DefaultMaxDecompressedSize bounds what one batch may decompress to when
// ScanOptions.MaxDecompressedSize is zero. Kafka itself has no such bound,
// but a producer's batch is limited by max.message.bytes (1 MiB by default)
// before compression, so 64 MiB leaves room for any sane configuration while
// stopping a decompression bomb.
const DefaultMaxDecompressedSize = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ScanOptions control how much of each batch a scan reads.
type ScanOptions struct {
	// VerifyCRC reads every batch whole and checks its CRC (CRC-32C over
	// [21, end) for magic 2, CRC-32 IEEE over [16, end) for magic 0/1), as
	// the broker's LogSegment.recover does through batch.ensureValid. A
	// batch that fails stops the segment there. Without it the scan reads
	// only headers (61 bytes per v2 batch, plus the first record of a
	// control batch) — the fast path for deciding delivery, which needs
	// nothing else.
	VerifyCRC bool

	// ExpandLegacy decompresses compressed magic 0/1 wrappers to find their
	// first inner offset and inner message count; a legacy wrapper stores
	// only its last offset (AbstractLegacyRecordBatch.baseOffset has to
	// decompress too). Without it a wrapper's BaseOffset is its LastOffset
	// and its Records is 1.
	ExpandLegacy bool

	// MaxDecompressedSize bounds the decompressed size of one batch, for
	// ExpandLegacy and for Records. Zero means DefaultMaxDecompressedSize.
	MaxDecompressedSize int64
}

// DefaultScanOptions is what NewSegment, OpenSegment and OpenPartition use:
// everything verified, as the broker would on recovery.
var DefaultScanOptions = ScanOptions{VerifyCRC: true, ExpandLegacy: true}

// HeaderScanOptions reads only batch headers: no CRC check, no
// decompression. Legacy compressed wrappers then report BaseOffset ==
// LastOffset.
var HeaderScanOptions = ScanOptions{}

func (o ScanOptions) maxDecompressed() int64 {
	if o.MaxDecompressedSize > 0 {
		return o.MaxDecompressedSize
	}
	return DefaultMaxDecompressedSize
}

// SegmentFile is a scanned .log segment (or any concatenation of batches):
// the header of every batch up to the first damage, and what stopped the
// scan. Records decodes a batch's records on demand.
//
// A SegmentFile is safe for concurrent use once returned.
type SegmentFile struct {
	Name       string // base name, e.g. "00000000000000000000.log"
	BaseOffset int64  // from the name; the first batch's base offset (or 0) if the name is not <20 digits>.log
	Size       int64  // bytes in the file

	// Batches are the batches in file order. Batch.Segment is 0;
	// OpenPartition renumbers it.
	Batches []txnindex.Batch

	// ValidBytes is where the scan stopped: the end of the last batch kept.
	// The broker's recovery would truncate the segment to this size.
	ValidBytes int64

	// Damage lists problems in byte order. The scan stops at the first
	// framing problem (a truncated tail, a bad size, an unknown magic, a
	// bad CRC), which is then the last entry and sits at ValidBytes. A
	// malformed control record or an undecodable legacy wrapper is
	// recorded and the scan goes on.
	Damage []*FormatError

	Options ScanOptions

	r      io.ReaderAt
	closer io.Closer
	path   string // set when r is nil: reopened read-only on demand
}

// NewSegment scans the size bytes of r as a segment named name, with
// DefaultScanOptions. The error is non-nil only when r fails; damage in the
// bytes is reported in Damage.
func NewSegment(r io.ReaderAt, size int64, name string) (*SegmentFile, error) {
	return NewSegmentWith(r, size, name, DefaultScanOptions)
}

// NewSegmentWith is NewSegment with explicit options.
func NewSegmentWith(r io.ReaderAt, size int64, name string, o ScanOptions) (*SegmentFile, error) {
	return NewSegmentContext(context.Background(), r, size, name, o)
}

// NewSegmentContext is NewSegmentWith that stops when ctx ends: a load
// started for a request or a command must not run on once nobody waits for
// it. The error then wraps ctx's cause and names the file and the byte the
// scan had reached.
func NewSegmentContext(ctx context.Context, r io.ReaderAt, size int64, name string, o ScanOptions) (*SegmentFile, error) {
	f, _, err := newSegmentContext(ctx, r, size, name, o, nil, 0, 0)
	if f != nil {
		f.Batches = trimBatches(f.Batches)
	}
	return f, err
}

// newSegment scans a segment, appending its batches to into (a partition's
// shared slice, so that loading a partition neither re-grows a slice per
// segment nor copies every batch once more to join them) and returning the
// grown slice; the segment's Batches is its part of it. before and after
// are the bytes of the partition's other segments scanned before this one
// and still to scan (see scanner.add).
func newSegment(r io.ReaderAt, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64) (*SegmentFile, []txnindex.Batch, error) {
	return newSegmentContext(context.Background(), r, size, name, o, into, before, after)
}

// newSegmentContext is newSegment that stops when ctx ends.
func newSegmentContext(ctx context.Context, r io.ReaderAt, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64) (*SegmentFile, []txnindex.Batch, error) {
	return scanSegmentContext(ctx, r, nil, size, name, o, into, before, after)
}

// scanFile is newSegment over an open file, scanning it through a
// read-only mapping where one can be made (mapFile). The mapping lives only
// for the scan: nothing the scan keeps points into it.
func scanFile(fh *os.File, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64) (*SegmentFile, []txnindex.Batch, error) {
	return scanFileContext(context.Background(), fh, size, name, o, into, before, after)
}

// scanFileContext is scanFile that stops when ctx ends.
func scanFileContext(ctx context.Context, fh *os.File, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64) (*SegmentFile, []txnindex.Batch, error) {
	data, unmap, ok := mapFile(fh, size)
	if !ok {
		return scanSegmentContext(ctx, fh, nil, size, name, o, into, before, after)
	}
	defer unmap()
	return scanSegmentContext(ctx, fh, data, size, name, o, into, before, after)
}

// scanSegment scans size bytes of r, or of mapped when it is not nil (the
// same bytes, mapped by scanFile).
func scanSegment(r io.ReaderAt, mapped []byte, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64) (*SegmentFile, []txnindex.Batch, error) {
	return scanSegmentContext(context.Background(), r, mapped, size, name, o, into, before, after)
}

// scanSegmentContext is scanSegment that stops when ctx ends.
func scanSegmentContext(ctx context.Context, r io.ReaderAt, mapped []byte, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64) (*SegmentFile, []txnindex.Batch, error) {
	if size < 0 {
		return nil, into, fmt.Errorf("loader: %s: negative size %d", name, size)
	}
	f := &SegmentFile{Name: name, Size: size, Options: o, r: r, BaseOffset: -1}
	if base, ok := parseBaseOffset(name, ".log"); ok {
		f.BaseOffset = base
	}
	s := scanner{name: name, w: window{r: r, size: size, fill: 256 << 10}, opts: o, batches: into, before: before, after: after, ctx: ctx}
	scan := s.scan
	if br, ok := r.(*bytesReaderAt); ok {
		s.w.data = br.b
	} else if mapped != nil {
		s.w.data = mapped[:size:size]
		scan = s.scanMapped
	}
	start := len(into)
	if err := scan(); err != nil {
		return nil, into, err
	}
	into = s.batches
	f.Batches, f.Damage, f.ValidBytes = s.batches[start:len(s.batches):len(s.batches)], s.damage, s.pos
	if f.BaseOffset < 0 {
		f.BaseOffset = 0
		if len(f.Batches) > 0 {
			f.BaseOffset = f.Batches[0].BaseOffset
		}
	}
	return f, into, nil
}

// OpenSegment opens path read-only and scans it with DefaultScanOptions.
// The caller must Close the result.
func OpenSegment(path string) (*SegmentFile, error) {
	return OpenSegmentWith(path, DefaultScanOptions)
}

// OpenSegmentWith is OpenSegment with explicit options.
func OpenSegmentWith(path string, o ScanOptions) (*SegmentFile, error) {
	return OpenSegmentContext(context.Background(), path, o)
}

// OpenSegmentContext is OpenSegmentWith that stops when ctx ends (see
// NewSegmentContext).
func OpenSegmentContext(ctx context.Context, path string, o ScanOptions) (*SegmentFile, error) {
	fh, size, err := OpenRegular(path) // a pipe would block the open
	if err != nil {
		return nil, err
	}
	f, _, err := scanFileContext(ctx, fh, size, filepath.Base(path), o, nil, 0, 0)
	if err != nil {
		fh.Close()
		return nil, err
	}
	f.Batches = trimBatches(f.Batches)
	f.closer, f.path = fh, path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		// The user chose the link; the reopens in source() follow none.
		f.path = real
	}
	return f, nil
}

// Close closes the file OpenSegment opened; it does nothing for a
// SegmentFile made by NewSegment. After Close, Records reopens the file
// read-only for each call. Close must not run concurrently with Records.
func (f *SegmentFile) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	f.r = nil
	return err
}

// Segment returns the txnindex view of the file (no index files attached).
func (f *SegmentFile) Segment() txnindex.Segment {
	return txnindex.Segment{Name: f.Name, BaseOffset: f.BaseOffset, Size: f.Size}
}

// ReadBatch returns the raw bytes of b, LOG_OVERHEAD included, read afresh
// from the file.
func (f *SegmentFile) ReadBatch(b txnindex.Batch) ([]byte, error) {
	if err := f.checkBounds(b); err != nil {
		return nil, err
	}
	r, release, err := f.source()
	if err != nil {
		return nil, err
	}
	defer release()
	buf := make([]byte, b.Size)
	if err := readFullAt(r, buf, b.Position()); err != nil {
		return nil, err
	}
	return buf, nil
}

// checkBounds refuses a batch that does not lie inside the file.
func (f *SegmentFile) checkBounds(b txnindex.Batch) error {
	if b.Position() < 0 || b.Size < headerSizeUpToMagic || b.Position()+int64(b.Size) > f.Size {
		return formatErr(f.Name, b.Position(), "batch", "size %d at this position is outside the %d-byte file", b.Size, f.Size)
	}
	return nil
}

// source returns a reader of the segment's bytes and a func to call once
// done with it: the file held open, or (for a segment loaded by
// OpenPartition, which does not keep segments open) the file reopened
// read-only.
func (f *SegmentFile) source() (io.ReaderAt, func(), error) {
	if f.r != nil {
		return f.r, func() {}, nil
	}
	if f.path == "" {
		return nil, nil, fmt.Errorf("loader: %s: segment is closed", f.Name)
	}
	fh, _, err := openInside(f.path)
	if err != nil {
		return nil, nil, err
	}
	return fh, func() { fh.Close() }, nil
}

// parseBaseOffset parses "<20 digits><suffix>" (LogFileUtils.offsetFromFileName
// reads the digits before the first '.').
func parseBaseOffset(name, suffix string) (int64, bool) {
	if len(name) != 20+len(suffix) || name[20:] != suffix {
		return 0, false
	}
	for i := 0; i < 20; i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	return v, err == nil
}

// scanner walks batches the way FileLogInputStream (inMemory false) or
// ByteBufferLogInputStream (inMemory true) does.
type scanner struct {
	name     string
	w        window
	opts     ScanOptions
	inMemory bool
	segment  int32

	// ctx, when set, ends the scan early (cancelled).
	ctx   context.Context
	polls uint32

	// zstd decodes compressed control batches (controlZstdWindow).
	zstd *zstd.Decoder

	pos     int64
	batches []txnindex.Batch
	damage  []*FormatError

	// lastOffset is the last offset of the batch scanned before (when
	// haveLast): the next batch must start above it.
	lastOffset int64
	haveLast   bool

	// before and after are the bytes of the other segments scanned into
	// the same slice: before this one (their batches are in batches
	// already) and still to come. They size the slice for the whole
	// partition.
	before, after int64
}

// minBatchBytes is the least any entry takes (LOG_OVERHEAD +
// RECORD_OVERHEAD_V0): the size of a slice bounded without trusting any
// field is at most the bytes left divided by it.
const minBatchBytes = logOverhead + recordOverheadV0

// add appends b to s.batches. When the slice is full it is regrown once to
// what the bytes still to scan (here and in the later segments) hold at the
// mean batch size seen so far, plus 3%: one copy of a few hundred batches
// instead of doubling (and first-touching) the slice a dozen times. The
// capacity never exceeds what the remaining bytes could hold at the
// smallest possible entry.
func (s *scanner) add(b txnindex.Batch) {
	if len(s.batches) == cap(s.batches) {
		n := len(s.batches)
		left := s.w.size - s.pos + s.after
		want := n + 1024
		if done := s.before + s.pos; n >= 256 && done > 0 {
			est := int(left / max(done/int64(n), minBatchBytes))
			want = n + est + est/32 + 64
		}
		want = max(min(want, n+int(left/minBatchBytes)+1), n+1)
		grown := makeBatches(n, want)
		copy(grown, s.batches)
		s.batches = grown
	}
	s.batches = append(s.batches, b)
}

// cancelEvery is how many batches the scan reads between looks at its
// context: a header-only scan reads millions of batches a second, so a
// cancelled scan stops within microseconds, and the look costs nothing
// measurable. Work that may take longer for one batch (a legacy wrapper's
// decompression) looks first, whatever the count.
const cancelEvery = 64

// cancelled reports, as an error naming the file and position, that the
// scan's context ended; every cancelEvery-th call looks, unless now.
func (s *scanner) cancelled(now bool) error {
	if s.ctx == nil {
		return nil
	}
	if s.polls++; !now && s.polls%cancelEvery != 0 {
		return nil
	}
	if s.ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("loader: %s: scan stopped at byte %#x: %w", s.name, s.pos, context.Cause(s.ctx))
}

// damaged records a fatal problem at the current position and stops.
func (s *scanner) damaged(format string, args ...any) {
	s.damage = append(s.damage, formatErr(s.name, s.pos, "batch", format, args...))
}

// note records a problem inside a batch the scan keeps (a malformed control
// record, an undecodable legacy wrapper); the scan goes on.
func (s *scanner) note(format string, args ...any) {
	s.damage = append(s.damage, formatErr(s.name, s.pos, "batch", format, args...))
}

func (s *scanner) scan() error {
	defer func() {
		if s.zstd != nil {
			s.zstd.Close()
			s.zstd = nil
		}
	}()
	size := s.w.size
	// Every batch is at least 26 bytes (LOG_OVERHEAD + RECORD_OVERHEAD_V0),
	// so this bounds the slice without trusting any field.
	if s.batches == nil {
		s.batches = makeBatches(0, int(min((size+s.after)/minBatchBytes+1, 1024)))
	}
	for {
		rem := size - s.pos
		if rem == 0 {
			return nil
		}
		if err := s.cancelled(false); err != nil {
			return err
		}
		if !s.inMemory && rem <= headerSizeUpToMagic {
			// FileLogInputStream.nextBatch: position >= end - 17 ends the
			// iteration, so up to 17 trailing bytes are never read. The
			// broker's recovery truncates them; DumpLogSegments reports
			// "Found N invalid bytes at the end".
			s.damaged("truncated: %d trailing bytes, fewer than the %d a batch header needs", rem, headerSizeUpToMagic+1)
			return nil
		}
		if s.inMemory && rem < logOverhead {
			// ByteBufferLogInputStream.nextBatchSize returns no batch
			// when the offset and size do not fit: the fetch ended
			// mid-header.
			s.damaged("truncated: %d trailing bytes, fewer than the %d of offset and size", rem, logOverhead)
			return nil
		}
		h, err := s.w.at(s.pos, int(min(rem, batchHeaderSize)))
		if err != nil {
			return err
		}
		baseOffset := int64(binary.BigEndian.Uint64(h[0:]))
		length := int32(binary.BigEndian.Uint32(h[8:]))
		if length < recordOverheadV0 {
			s.damaged("bad size: want at least %d (RECORD_OVERHEAD_V0), found %d", recordOverheadV0, length)
			return nil
		}
		if rem < headerSizeUpToMagic {
			// Only in memory: ByteBufferLogInputStream checks the size
			// field before it needs the magic byte.
			s.damaged("truncated: %d trailing bytes, fewer than the %d a batch header needs", rem, headerSizeUpToMagic)
			return nil
		}
		magic := int8(h[16])
		if magic < 0 || magic > 2 {
			s.damaged("unknown magic: want 0, 1 or 2, found %d", magic)
			return nil
		}
		total := int64(length) + logOverhead
		if total > rem {
			// FileLogInputStream: a batch that ends past the file is
			// not returned; on recovery the broker truncates it.
			s.damaged("truncated: size field declares %d bytes, only %d remain before end of file", total, rem)
			return nil
		}
		if s.pos+total > math.MaxInt32 {
			// FileRecords and the .index hold int32 positions: a
			// segment ends before 2 GiB (Batch.Position is an int32 too).
			s.damaged("bad size: a batch of %d bytes here ends past the int32 positions Kafka uses", total)
			return nil
		}
		var ok bool
		if magic == 2 {
			ok, err = s.v2(baseOffset, h, int32(total))
		} else {
			ok, err = s.legacy(baseOffset, magic, h, int32(total))
		}
		if err != nil || !ok {
			return err
		}
		s.pos += total
		if !s.opts.VerifyCRC {
			s.w.spacing = total
		}
	}
}

// scanMapped is scan over a mapped file. Another process may truncate the
// file meanwhile (a live broker's active segment, a cleaner's swap): reading
// a mapped page past the new end raises SIGBUS, which SetPanicOnFault turns
// into a panic in this goroutine. The scan then stops at the batch it was
// reading, keeping every batch before it, as a read(2) that came up short
// would have.
func (s *scanner) scanMapped() (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(interface{ Addr() uintptr })
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(s.w.data)))
		if !ok || f.Addr() < lo || f.Addr() >= lo+uintptr(len(s.w.data)) {
			panic(r) // not a fault in the mapping: a bug, not input
		}
		err = nil
		s.damaged("file changed while being read: the byte at %#x is gone (truncated by another process?)", int64(f.Addr()-lo))
	}()
	return s.scan()
}

func (s *scanner) v2(baseOffset int64, h []byte, total int32) (bool, error) {
	if total < batchHeaderSize {
		s.damaged("bad size: a magic 2 batch needs at least %d bytes, size field gives %d", batchHeaderSize, total)
		return false, nil
	}
	var whole []byte
	if s.opts.VerifyCRC {
		var err error
		if whole, err = s.w.at(s.pos, int(total)); err != nil {
			return false, err
		}
		h = whole
		stored := binary.BigEndian.Uint32(whole[17:])
		if computed := crc32.Checksum(whole[v2CRCStart:], castagnoli); computed != stored {
			s.damaged("bad CRC: stored %#08x, computed %#08x (CRC-32C over bytes [21,%d) of the batch)", stored, computed, total)
			return false, nil
		}
	}
	r := reader{src: h[12:batchHeaderSize]}
	b := txnindex.BatchFields{
		BaseOffset:           baseOffset,
		PartitionLeaderEpoch: r.int32(),
		Magic:                r.int8(),
		CoordinatorEpoch:     -1,
	}.Batch()
	r.uint32() // crc
	// DefaultRecordBatch.attributes() casts to byte: the high byte is
	// ignored on read, so it is dropped here too.
	b.SetAttributes(int16(uint8(r.int16())))
	delta := r.int32()
	if !s.offsetsOK(baseOffset, int64(delta)) {
		return false, nil
	}
	b.SetLastOffset(baseOffset + int64(delta))
	b.BaseTimestamp = r.int64()
	b.MaxTimestamp = r.int64()
	b.ProducerID = txnindex.ProducerID(r.int64())
	b.ProducerEpoch = r.int16()
	b.SetBaseSequence(r.int32())
	b.Records = r.int32()
	b.Size, b.Segment = total, s.segment
	b.SetPosition(s.pos)
	b.SetControl(txnindex.ControlNone)
	if !r.ok() {
		return false, fmt.Errorf("loader: internal: short v2 header at %#x", s.pos)
	}
	if b.Records < 0 {
		// DefaultRecordBatch.iterator rejects a negative count
		// (InvalidRecordException); nothing after it can be trusted.
		s.damaged("bad records count: want >= 0, found %d", b.Records)
		return false, nil
	}
	if b.IsControl() && b.Records > 0 {
		// ProducerAppendInfo.append reads only the first record of a
		// control batch, as an EndTransactionMarker.
		if err := s.control(&b, whole); err != nil {
			return false, err
		}
	}
	s.add(b)
	s.lastOffset, s.haveLast = b.LastOffset(), true
	return true, nil
}

// offsetsOK checks the offsets [base, base+delta] of the batch at s.pos
// against the one before it, and records damage (which stops the scan)
// when they break what every offset of a log is: non-negative, strictly
// increasing from batch to batch (the broker assigns them so, and the
// .index it appends to refuses an offset no larger than the last one,
// OffsetIndex.append), and a last offset whose next offset an int64 holds.
// Java computes lastOffset() as baseOffset + lastOffsetDelta and wraps
// silently; the sum is checked here before it is formed, so a base offset
// of 2^63-8 with a delta of 2^31-1 cannot turn into a negative log end
// offset that would push every earlier batch behind the high watermark.
func (s *scanner) offsetsOK(base, delta int64) bool {
	switch {
	case base < 0:
		s.damaged("bad base offset: want >= 0, found %d", base)
	case delta < 0:
		s.damaged("bad last offset delta: want >= 0 (the last offset is not below the base offset), found %d", delta)
	case base > math.MaxInt64-1-delta:
		s.damaged("offsets overflow: base offset %d + last offset delta %d is past %d, the largest last offset an int64 next offset allows", base, delta, int64(math.MaxInt64-1))
	case s.haveLast && base <= s.lastOffset:
		s.damaged("offsets go backwards: want a base offset above %d (the previous batch's last offset), found %d", s.lastOffset, base)
	default:
		return true
	}
	return false
}

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

func (s *scanner) legacy(offset int64, magic int8, h []byte, total int32) (bool, error) {
	length := total - logOverhead
	if magic == 1 && length < recordOverheadV1 {
		s.damaged("bad size: a magic 1 message needs at least %d bytes, size field gives %d", recordOverheadV1, length)
		return false, nil
	}
	// A legacy entry's offset is its last offset (a compressed wrapper's
	// is its last inner message's): the same rules hold for it.
	prevLast, havePrev := s.lastOffset, s.haveLast
	if !s.offsetsOK(offset, 0) {
		return false, nil
	}
	var whole []byte
	attr := int8(h[17])
	codec := txnindex.Compression(attr & txnindex.AttrCompressionMask)
	expand := s.opts.ExpandLegacy && codec != txnindex.CompressionNone
	if s.opts.VerifyCRC || expand {
		var err error
		if whole, err = s.w.at(s.pos, int(total)); err != nil {
			return false, err
		}
		h = whole
	}
	if s.opts.VerifyCRC {
		stored := binary.BigEndian.Uint32(whole[12:])
		if computed := crc32.ChecksumIEEE(whole[legacyCRCStart:]); computed != stored {
			s.damaged("bad CRC: stored %#08x, computed %#08x (CRC-32 over bytes [16,%d) of the entry)", stored, computed, total)
			return false, nil
		}
	}
	b := txnindex.BatchFields{
		BaseOffset: offset, LastOffset: offset,
		BaseTimestamp: -1, MaxTimestamp: -1,
		ProducerID: txnindex.NoProducerID, ProducerEpoch: -1, BaseSequence: -1,
		PartitionLeaderEpoch: -1,
		Records:              1,
		Position:             s.pos, Size: total, Segment: s.segment,
		Attributes: int16(uint8(attr)),
		Control:    txnindex.ControlNone, CoordinatorEpoch: -1,
		Magic: magic,
	}.Batch()
	if magic == 1 {
		b.MaxTimestamp = int64(binary.BigEndian.Uint64(h[18:]))
		b.BaseTimestamp = b.MaxTimestamp
	}
	if expand {
		if err := s.cancelled(true); err != nil {
			return false, err
		}
		n, first, err := expandLegacy(whole, s.opts.maxDecompressed())
		if err != "" {
			s.note("legacy wrapper: %s", err)
		} else {
			switch {
			case havePrev && first <= prevLast:
				s.note("legacy wrapper: first inner offset %d is not above %d, the previous batch's last offset", first, prevLast)
			case first < 0 || first > b.LastOffset():
				s.note("legacy wrapper: first inner offset %d is outside [0, %d], the wrapper's offset", first, b.LastOffset())
			case b.SetOffsets(first, b.LastOffset()):
				b.Records = int32(n)
			default:
				s.note("legacy wrapper: first inner offset %d is more than an int32 below the wrapper's offset %d", first, b.LastOffset())
			}
		}
	}
	s.add(b)
	s.lastOffset, s.haveLast = b.LastOffset(), true
	return true, nil
}
