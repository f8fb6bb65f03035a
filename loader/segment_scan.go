package loader

// The batch walk of a segment (FileLogInputStream): header checks, offsets,
// CRCs and the legacy wrapper; the SegmentFile API is in segment.go.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/txnscope/txnscope/txnindex"
)

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
	// notesLeft counts the notes past maxNotes, the first at byte
	// notesFirst; stopped says the last of damage stopped the scan.
	notesLeft  int
	notesFirst int64
	stopped    bool

	// lastOffset is the last offset of the batch scanned before (when
	// haveLast): the next batch must start above it.
	lastOffset int64
	haveLast   bool

	// before and after are the bytes of the other segments scanned into
	// the same slice: before this one (their batches are in batches
	// already) and still to come. They size the slice for the whole
	// partition.
	before, after int64

	// spanMaxTS is the largest timestamp of the batches passed over in a
	// span (spanScan), when spanPassed; prevInSpan says the batch walked
	// last was in it.
	spanMaxTS              int64
	spanPassed, prevInSpan bool

	// nwalked counts the batches walked, kept or passed over; firstBase
	// and firstMagic are the first's (a split segment's join checks a
	// part's first batch against the part before).
	nwalked    int
	firstBase  int64
	firstMagic int8
}

// walked notes a batch walked, kept or not.
func (s *scanner) walked(base int64, magic int8) {
	if s.nwalked == 0 {
		s.firstBase, s.firstMagic = base, magic
	}
	s.nwalked++
}

// minBatchBytes is the least any entry takes (LOG_OVERHEAD +
// RECORD_OVERHEAD_V0): the size of a slice bounded without trusting any
// field is at most the bytes left divided by it.
const minBatchBytes = logOverhead + recordOverheadV0

// slot returns the element after the last of s.batches, growing the slice
// when it is full; commit makes it part of the slice. When the slice is full
// it is regrown once to what the bytes still to scan (here and in the later
// segments) hold at the mean batch size seen so far, plus 3%: one copy of a
// few hundred batches instead of doubling (and first-touching) the slice a
// dozen times. The capacity never exceeds what the remaining bytes could
// hold at the smallest possible entry.
func (s *scanner) slot() *txnindex.Batch {
	if n := len(s.batches); n < cap(s.batches) {
		return &s.batches[:n+1][n]
	}
	return s.grow()
}

// grow is slot when the slice is full.
func (s *scanner) grow() *txnindex.Batch {
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
	return &s.batches[:n+1][n]
}

// commit appends the batch slot returned.
func (s *scanner) commit() { s.batches = s.batches[:len(s.batches)+1] }

// add appends b to s.batches.
func (s *scanner) add(b txnindex.Batch) {
	*s.slot() = b
	s.commit()
}

// cancelEvery is how many batches the scan reads between looks at its
// context: a header-only scan reads millions of batches a second, so a
// cancelled scan stops within microseconds, and the look costs nothing
// measurable. Work that may take longer for one batch (a legacy wrapper's
// decompression) looks first, whatever the count.
const cancelEvery = 64

// cancelled reports, as an error naming the file and position, that the
// scan's context ended. The batch loop calls it every cancelEvery batches.
func (s *scanner) cancelled() error {
	if s.ctx == nil || s.ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("loader: %s: scan stopped at byte %#x: %w", s.name, s.pos, context.Cause(s.ctx))
}

// damaged records a fatal problem at the current position and stops.
// cleanShutdownCRC ends the note of a bad CRC kept under a clean
// shutdown marker: what the broker does with the batch, and what a check
// changes.
const cleanShutdownCRC = "kept: the broker's start after its clean shutdown (" + CleanShutdownFile + ") recovers no segment and serves this batch, " +
	"and a consumer that checks CRCs fails on it; the broker's recovery after an unclean shutdown ends the log before it"

// flushedCRC ends the note of a bad CRC kept in a segment below the
// recovery point.
const flushedCRC = "kept: the segment lies below the partition's recovery point, which no broker start recovers: the broker serves this batch, " +
	"and a consumer that checks CRCs (the Java consumer's check.crcs, on by default) fails on it"

func (s *scanner) damaged(format string, args ...any) {
	s.flushNotes()
	s.damage = append(s.damage, formatErr(s.name, s.pos, "batch", format, args...))
	s.stopped = true
}

// damagedKept is damaged for a batch the broker's recovery keeps
// (LogSegment.recover truncates only at a CorruptRecordException or an
// InvalidRecordException: a short file, a size below the minimum, a bad
// CRC): the scan stops there all the same, as a consumer's fetch fails
// on it, but no recovery truncates the segment there.
func (s *scanner) damagedKept(format string, args ...any) {
	s.flushNotes()
	fe := formatErr(s.name, s.pos, "batch", format, args...)
	fe.recoveryKeeps = true
	s.damage = append(s.damage, fe)
	s.stopped = true
}

func (s *scanner) scan() (err error) {
	defer func() {
		s.flushNotes()
		if s.zstd != nil {
			s.zstd.Close()
			s.zstd = nil
		}
		if s.spanPassed {
			s.opts.span.passed(s.spanMaxTS)
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
		// The context is looked at every cancelEvery batches, and the
		// header taken from the window's fill when it is there, here:
		// this loop runs for every batch (1.35M in 1 GiB of 1 KiB
		// batches), and a call each for them cost a few percent of the
		// scan.
		if s.polls++; s.ctx != nil && s.polls%cancelEvery == 0 {
			if err := s.cancelled(); err != nil {
				return err
			}
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
		hn := int(min(rem, batchHeaderSize))
		var h []byte
		if off := uint64(s.pos - s.w.start); s.w.data == nil && off <= uint64(s.w.n) && uint64(hn) <= uint64(s.w.n)-off {
			h = s.w.buf[off : off+uint64(hn) : off+uint64(hn)]
		} else if h, err = s.w.at(s.pos, hn); err != nil {
			return s.readFailed(err)
		}
		baseOffset := int64(binary.BigEndian.Uint64(h[0:]))
		length := int32(binary.BigEndian.Uint32(h[8:]))
		if length < recordOverheadV0 {
			if baseOffset == 0 && length == 0 && !s.inMemory && strings.Contains(s.name, ".log") {
				return s.zeros()
			}
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
		if err != nil {
			return s.readFailed(err)
		}
		if !ok {
			return nil
		}
		s.pos += total
		if !s.opts.VerifyCRC && s.opts.crcKept == "" {
			// A moving mean over the last batches, not the last
			// one's size: between batches of 64 KiB, a marker of
			// 78 bytes made the next header's read a fill of
			// 256 KiB (a third of a 1 GiB segment's batches are
			// markers: every byte copied again).
			s.w.spacing += (total - s.w.spacing) / 8
		}
	}
}

// zeroChunk is how much of a run of zero bytes zeros reads at a time, and
// zeroBlock what it compares each read with.
const zeroChunk = 64 << 10

var zeroBlock [zeroChunk]byte

// zeros reports the damage of a batch whose offset and size are zero: the
// broker stops there as at any size below RECORD_OVERHEAD_V0, and its
// recovery truncates the segment there; what follows says what it is (in a
// broker's segment: kfake's files are not preallocated). A
// segment written with file.preallocate=true is created at segment.bytes,
// zero-filled, and trimmed to its batches when its broker closes it
// (FileRecords.trim); a broker that was killed leaves the zero tail, and on
// opening the file again takes its whole length as the segment's size
// (FileRecords.open) until recovery truncates it. Writes a crash lost after
// the file's size reached the disk read back as zeros too. Data after the
// zeros is lost to the truncation with them. The run is read to its end,
// at most the file's size.
func (s *scanner) zeros() error {
	end := s.pos
	for end < s.w.size {
		if s.polls++; s.ctx != nil && s.polls%cancelEvery == 0 {
			if err := s.cancelled(); err != nil {
				return err
			}
		}
		// A hole reads as zeros: a preallocated segment's tail is one,
		// passed over without reading it.
		if d, ok := nextData(s.w.r, end, s.w.size); ok && d > end {
			end = d
			continue
		}
		n := int(min(s.w.size-end, zeroChunk))
		b, err := s.w.at(end, n)
		if err != nil {
			return s.readFailed(err)
		}
		if bytes.Equal(b, zeroBlock[:n]) {
			end += int64(n)
			continue
		}
		for b[0] == 0 {
			b = b[1:]
			end++
		}
		break
	}
	if end == s.w.size {
		s.damaged("zero bytes from here to the end of the file (%d bytes): a preallocated segment (file.preallocate=true) its broker did not close, or writes a crash lost; the broker's recovery truncates the segment here", end-s.pos)
		return nil
	}
	s.damaged("bad size: want at least %d (RECORD_OVERHEAD_V0), found 0: %d zero bytes from here, then data again at byte %#x; the broker's recovery truncates the segment here, and the %d bytes from there to the end of the file are lost with it", recordOverheadV0, end-s.pos, end, s.w.size-end)
	return nil
}

// readFailed turns a read that came up short into damage at the batch
// being read, keeping every batch before it: the file shrank after its size
// was taken (a live broker's active segment truncated on recovery, a
// cleaner's swap), as the broker's own reader would find an incomplete
// batch at the end. Any other read error ends the scan.
func (s *scanner) readFailed(err error) error {
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	s.damaged("file changed while being read: it ends before byte %#x, %d bytes were expected (truncated by another process?)", s.pos, s.w.size)
	return nil
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
	if len(h) < batchHeaderSize {
		return false, fmt.Errorf("loader: internal: short v2 header at %#x", s.pos)
	}
	h = h[:batchHeaderSize]
	be := binary.BigEndian
	delta := int32(be.Uint32(h[23:]))
	// offsetsOK's test for offsets as a broker writes them, written out
	// (both below 2^62, so no sum overflows); the call only when they are
	// not.
	if uint64(baseOffset)|uint64(delta) >= 1<<62 || s.haveLast && baseOffset <= s.lastOffset {
		if !s.offsetsOK(baseOffset, int64(delta)) {
			return false, nil
		}
	}
	records := int32(be.Uint32(h[57:]))
	if records < 0 {
		// DefaultRecordBatch.iterator rejects a negative count
		// (InvalidRecordException); nothing after it can be trusted.
		s.damagedKept("bad records count: want >= 0, found %d", records)
		return false, nil
	}
	s.walked(baseOffset, 2)
	if s.opts.span != nil { // without a span every batch is kept
		if drop, err := s.spanned(txnindex.ProducerID(be.Uint64(h[43:])), baseOffset, delta, records, int16(be.Uint16(h[21:])), int64(be.Uint64(h[35:]))); err != nil || drop {
			s.lastOffset, s.haveLast = baseOffset+int64(delta), true
			return drop, err
		}
	}
	if s.opts.crcKept != "" && whole == nil {
		// A batch the load keeps in a segment no broker start recovers
		// (ServedCRCs): its CRC is checked and a failure noted, the
		// batch kept. The read may refill the window h lies in: the
		// header is taken again from the batch read whole.
		var err error
		if whole, err = s.w.at(s.pos, int(total)); err != nil {
			return false, err
		}
		h = whole[:batchHeaderSize]
		stored := be.Uint32(whole[17:])
		if computed := crc32.Checksum(whole[v2CRCStart:], castagnoli); computed != stored {
			s.note("bad CRC: stored %#08x, computed %#08x (CRC-32C over bytes [21,%d) of the batch); %s", stored, computed, total, s.opts.crcKept)
		}
	}
	// The batch is written in place, in the slot after the last one: a
	// 64-byte Batch built and then copied cost a tenth of the scan of 1 KiB
	// batches. It counts only when add commits it.
	var b *txnindex.Batch
	if n := len(s.batches); n < cap(s.batches) {
		b = &s.batches[:n+1][n] // slot, written out
	} else {
		b = s.grow()
	}
	*b = txnindex.Batch{
		BaseOffset:           baseOffset,
		BaseTimestamp:        int64(be.Uint64(h[27:])),
		MaxTimestamp:         int64(be.Uint64(h[35:])),
		ProducerID:           txnindex.ProducerID(be.Uint64(h[43:])),
		PartitionLeaderEpoch: int32(be.Uint32(h[12:])),
		Records:              records,
		Size:                 total,
		Segment:              s.segment,
		ProducerEpoch:        int16(be.Uint16(h[51:])),
	}
	// DefaultRecordBatch.attributes() casts to byte: the high byte is
	// ignored on read, so SetV2Header drops it too.
	b.SetV2Header(int16(be.Uint16(h[21:])), delta, s.pos, int32(be.Uint32(h[53:])))
	if b.IsControl() && b.Records > 0 {
		// ProducerAppendInfo.append reads only the first record of a
		// control batch, as an EndTransactionMarker.
		if err := s.control(b, whole); err != nil {
			return false, err
		}
	}
	s.commit()
	s.lastOffset, s.haveLast = baseOffset+int64(delta), true
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
		s.damagedKept("bad base offset: want >= 0, found %d", base)
	case delta < 0:
		s.damagedKept("bad last offset delta: want >= 0 (the last offset is not below the base offset), found %d", delta)
	case base > math.MaxInt64-1-delta:
		s.damagedKept("offsets overflow: base offset %d + last offset delta %d is past %d, the largest last offset an int64 next offset allows", base, delta, int64(math.MaxInt64-1))
	case s.haveLast && base <= s.lastOffset:
		s.damagedKept("offsets go backwards: want a base offset above %d (the previous batch's last offset), found %d", s.lastOffset, base)
	default:
		return true
	}
	return false
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
	if s.opts.VerifyCRC || s.opts.crcKept != "" || expand {
		var err error
		if whole, err = s.w.at(s.pos, int(total)); err != nil {
			return false, err
		}
		h = whole
	}
	if s.opts.VerifyCRC || s.opts.crcKept != "" {
		stored := binary.BigEndian.Uint32(whole[12:])
		if computed := crc32.ChecksumIEEE(whole[legacyCRCStart:]); computed != stored {
			if !s.opts.VerifyCRC {
				s.note("bad CRC: stored %#08x, computed %#08x (CRC-32 over bytes [16,%d) of the entry); %s", stored, computed, total, s.opts.crcKept)
			} else {
				s.damaged("bad CRC: stored %#08x, computed %#08x (CRC-32 over bytes [16,%d) of the entry)", stored, computed, total)
				return false, nil
			}
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
	s.walked(offset, magic)
	if s.opts.span != nil && (s.pos < s.opts.spanUntil || s.prevInSpan) {
		return false, s.spanWhole("a magic %d entry", magic)
	}
	if expand {
		if err := s.cancelled(); err != nil {
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
