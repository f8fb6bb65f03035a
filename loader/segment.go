package loader

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"

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

	// span and spanUntil: in a segment OpenPartitionTail reads for the
	// transactions open in its producer snapshot, the batches before byte
	// spanUntil are kept only when span keeps them (spanScan).
	span      *spanScan
	spanUntil int64

	// crcKept, when not "", checks the CRC of each batch the scan keeps
	// without VerifyCRC's stop: a batch that fails is kept and the
	// failure noted, ending with crcKept. For the segments no broker
	// start recovers (ServedCRCs), which it serves as they are, so that
	// the decisions stay the broker's and the damage is said.
	crcKept string

	// segment is the Batch.Segment the scan writes: the segment's place
	// in the partition being loaded, so that assemble need not renumber
	// every batch (a pass over 86 MB for 1.35M batches of 1 KiB).
	segment int32
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

	// Batches are the batches in file order. Batch.Segment is 0 in a segment
	// scanned alone, the segment's place in the partition in one that
	// OpenPartition loads.
	Batches []txnindex.Batch

	// ValidBytes is where the scan stopped: the end of the last batch kept.
	// The broker's recovery would truncate the segment to this size.
	ValidBytes int64

	// Start is where the scan began: 0, or, in the first segment a
	// snapshot-seeded load reads (OpenPartitionTail), the position of the
	// .index entry at or below the first offset it needs. The bytes before
	// it were not read.
	Start int64

	// Damage lists problems in byte order. The scan stops at the first
	// framing problem (a truncated tail, a bad size, an unknown magic, a
	// bad CRC), which is then the last entry and sits at ValidBytes. A
	// malformed control record, an undecodable legacy wrapper or a bad
	// CRC the broker serves is recorded and the scan goes on: the first
	// 20 of those, then one note counting the rest, at the first of them.
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

// newSegmentContext scans a segment, appending its batches to into (a
// partition's shared slice, so that loading a partition neither re-grows a
// slice per segment nor copies every batch once more to join them) and
// returning the grown slice; the segment's Batches is its part of it.
// before and after are the bytes of the partition's other segments scanned
// before this one and still to scan (see scanner.add). It stops when ctx
// ends.
func newSegmentContext(ctx context.Context, r io.ReaderAt, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64) (*SegmentFile, []txnindex.Batch, error) {
	return scanSegmentContext(ctx, r, size, name, o, into, before, after, nil)
}

// scanFile is newSegment over an open file.
func scanFile(fh *os.File, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64) (*SegmentFile, []txnindex.Batch, error) {
	return scanFileContext(context.Background(), fh, size, name, o, into, before, after)
}

// scanFileContext is scanFile that stops when ctx ends.
//
// Why pread and not mmap: the scan reads each batch's header, and a
// read(2) into a reused block streams the bytes through the page cache at
// about what cat costs, keeps no page of the file resident in the process,
// and reads short, instead of raising SIGBUS, when the file is truncated
// meanwhile. Batches larger than an eighth of the block are read header by
// header (window.spacing), so a scan of large batches touches a page per
// batch, not the whole file.
func scanFileContext(ctx context.Context, fh *os.File, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64) (*SegmentFile, []txnindex.Batch, error) {
	return scanSegmentContext(ctx, fh, size, name, o, into, before, after, nil)
}

// scanFill is the read-ahead of a scan's window: the pread block size.
const scanFill = 256 << 10

// scanSegmentContext scans size bytes of r, stopping when ctx ends, walking
// the parts of the file between cuts (batch start positions from its .index)
// on as many goroutines (scanParts).
func scanSegmentContext(ctx context.Context, r io.ReaderAt, size int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64, cuts []int64) (*SegmentFile, []txnindex.Batch, error) {
	return scanSegmentFrom(ctx, r, size, 0, name, o, into, before, after, split{cuts: cuts}, nil)
}

// scanSegmentFrom is scanSegmentContext starting at byte from, a batch
// start (cuts are all above it).
//
// idle, when not nil, is called by each part's goroutine of a cut segment
// when its walk is done (loadSegment decodes the index files then).
func scanSegmentFrom(ctx context.Context, r io.ReaderAt, size, from int64, name string, o ScanOptions, into []txnindex.Batch, before, after int64, sp split, idle func()) (*SegmentFile, []txnindex.Batch, error) {
	if size < 0 || from < 0 || from > size {
		return nil, into, fmt.Errorf("loader: %s: negative size %d or start %d outside it", name, size, from)
	}
	f := &SegmentFile{Name: name, Size: size, Options: o, r: r, BaseOffset: -1, Start: from}
	if base, ok := parseBaseOffset(name, ".log"); ok {
		f.BaseOffset = base
	}
	br, inMemory := r.(*bytesReaderAt)
	if len(sp.cuts) > 0 && !inMemory {
		grown, err := scanParts(ctx, r, f, into, before, after, sp, idle)
		if err != nil {
			return nil, into, err
		}
		into = grown
	} else {
		s := scanner{name: name, w: scanWindow(r, size), opts: o, segment: o.segment, batches: into, before: before - from, after: after, ctx: ctx, pos: from}
		if inMemory {
			s.w.data = br.b
		}
		start := len(into)
		if err := s.scan(); err != nil {
			return nil, into, err
		}
		into = s.batches
		f.Batches, f.Damage, f.ValidBytes = s.batches[start:len(s.batches):len(s.batches)], s.damage, s.pos
	}
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

// StoppedAt is where the scan stopped before the end of the file at
// damage the broker's recovery truncates, and that damage; nil when it
// read to the end, or stopped at a batch recovery keeps.
func (f *SegmentFile) StoppedAt() *txnindex.SegmentDamage {
	if f.ValidBytes >= f.Size {
		return nil
	}
	for i := len(f.Damage) - 1; i >= 0; i-- {
		if d := f.Damage[i]; d.Offset == f.ValidBytes {
			if d.recoveryKeeps {
				return nil
			}
			end := f.BaseOffset
			if n := len(f.Batches); n > 0 {
				end = f.Batches[n-1].NextOffset()
			}
			return &txnindex.SegmentDamage{Position: d.Offset, Offset: end, Reason: d.Msg}
		}
	}
	return nil // stopped by design (a read that ends early), not by damage
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
