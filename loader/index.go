package loader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/txnscope/txnscope/txnindex"
)

// Entry sizes of the index files (OffsetIndex.ENTRY_SIZE, TimeIndex.ENTRY_SIZE).
const (
	offsetIndexEntrySize = 8
	timeIndexEntrySize   = 12
)

// indexChunk is how much of an index file is read at a time: an active
// segment's index is preallocated (10 MiB by default) and mostly zeros, so
// reading stops at the first zero slot instead of taking the whole file.
const indexChunk = 64 << 10

// OffsetIndex is a decoded .index file.
type OffsetIndex struct {
	Name       string
	BaseOffset int64 // of the segment, from the name
	Size       int64

	// Entries have absolute offsets, in file order.
	Entries []txnindex.IndexEntry

	// Slots is the number of whole 8-byte slots in the file. Kafka
	// preallocates the active segment's index (AbstractIndex
	// .createAndAssignMmap), so slots past the entries are zeros.
	Slots int64
}

// TimeIndexEntry is one .timeindex entry with the offset made absolute: the
// largest timestamp seen up to Offset.
type TimeIndexEntry struct {
	Timestamp int64
	Offset    int64
}

// TimeIndex is a decoded .timeindex file.
type TimeIndex struct {
	Name       string
	BaseOffset int64
	Size       int64
	Entries    []TimeIndexEntry
	Slots      int64
}

// TxnIndexFile is a decoded .txnindex file.
type TxnIndexFile struct {
	Name       string
	BaseOffset int64
	Size       int64
	Entries    []txnindex.AbortedTxn
	// Rejected, when not nil, is the first entry whose version Kafka's
	// TransactionIndex refuses (txnindex.RejectedVersion); Entries end
	// before it.
	Rejected *txnindex.RejectedEntry
}

// Corrupt reports whether x holds an entry whose marker lies below the
// segment's base offset: TransactionIndex.sanityCheck throws
// CorruptIndexException for it, and LogLoader recovers the segment,
// rebuilding its .txnindex (ReadTxnIndexFile keeps and reports the entry).
func (x *TxnIndexFile) Corrupt() bool {
	if x == nil {
		return false
	}
	for _, e := range x.Entries {
		if e.LastOffset < x.BaseOffset {
			return true
		}
	}
	return false
}

// BrokerRefuses is the entry of x whose version stops a broker loading
// the segment (Rejected), nil when there is none or when an entry before
// it is Corrupt: sanityCheck reads the entries in order, and that one has
// the segment recovered first.
func (x *TxnIndexFile) BrokerRefuses() *txnindex.RejectedEntry {
	if x == nil || x.Corrupt() {
		return nil
	}
	return x.Rejected
}

// SetServedTxnIndex sets seg's .txnindex fields as LogLoader loads the
// segment. A segment whose .index exists (indexListed) is loaded as it is:
// LogSegment.sanityCheck checks only that the .index exists and passes a
// .txnindex that does not (the broker creates it lazily, with the first
// aborted transaction, so none means none is listed: TxnIndexAbsent when
// txnListed is false). One without a .index is recovered, its .txnindex
// rebuilt from the log, as Build does (a bare copy of .log files says
// nothing else); so is one whose .txnindex is Corrupt. An entry whose
// version Kafka refuses stops the broker's start (TxnIndexRejected), and
// the segment is then decided as recovered. x is the .txnindex as read,
// nil when there is none.
func SetServedTxnIndex(seg *txnindex.Segment, indexListed, txnListed bool, x *TxnIndexFile) {
	seg.TxnIndexOnDisk = indexListed && !x.Corrupt()
	seg.TxnIndexAbsent = indexListed && !txnListed
	if x != nil {
		seg.TxnIndex = x.Entries
	}
	if r := x.BrokerRefuses(); r != nil && seg.TxnIndexOnDisk {
		seg.TxnIndexOnDisk, seg.TxnIndexRejected = false, r
	}
}

// makeEntries returns an empty slice with room for the slots of an index
// file: a rolled segment's index is trimmed to its entries
// (AbstractIndex.trimToValidSize), so this is one allocation, where growing
// by append would copy about twice the entries (a 1 GiB segment of 1 KiB
// batches has 240k entries in each index). The slots are bounded by the
// file's own size.
func makeEntries[E any](slots int64) []E {
	return make([]E, 0, int(max(slots, 0)))
}

// trimEntries drops the spare room makeEntries left when the index held far
// fewer entries than slots: an active segment's index is preallocated
// (10 MiB by default, mostly zeros), and its spare room would be kept for
// as long as the partition is loaded.
func trimEntries[E any](e []E) []E {
	if len(e) == 0 {
		return nil // as before any entry was read
	}
	if cap(e)-len(e) <= len(e)/8+64 {
		return e
	}
	return append(make([]E, 0, len(e)), e...)
}

// walkSlots calls fn for the whole slots of size es in r, in order, a chunk
// at a time (first is the index of the chunk's first slot), until fn returns
// false. It returns the number of whole slots. fn loops over a chunk's
// slots itself: a call per slot was half the decoding of a 240k-entry index.
func walkSlots(r io.ReaderAt, size int64, es int, fn func(first int64, chunk []byte) bool) (int64, error) {
	slots := size / int64(es)
	buf := make([]byte, min(int64(indexChunk/es*es), slots*int64(es)))
	for i := int64(0); i < slots; {
		n := min(int64(len(buf)/es), slots-i)
		chunk := buf[:n*int64(es)]
		if err := readFullAt(r, chunk, i*int64(es)); err != nil {
			return slots, err
		}
		if !fn(i, chunk) {
			return slots, nil
		}
		i += n
	}
	return slots, nil
}

// partialSlot reports a file size that is not a whole number of entries,
// which AbstractIndex.sanityCheck calls corrupt.
func partialSlot(name string, size int64, es int) error {
	if rem := size % int64(es); rem != 0 {
		return formatErr(name, size-rem, "entry", "%d trailing bytes: file size %d is not a multiple of the %d-byte entry", rem, size, es)
	}
	return nil
}

// ReadOffsetIndex decodes a .index file of the segment at baseOffset. Like
// DumpLogSegments.dumpIndex it stops at the first entry after the first
// whose relative offset is 0: the zero-filled preallocated tail. It returns
// the entries it could decode with the first problem: a size that is not a
// multiple of 8, or an entry whose offset does not increase (OffsetIndex is
// append-only in offset order, and lookups binary-search it).
func ReadOffsetIndex(r io.ReaderAt, size int64, name string, baseOffset int64) (*OffsetIndex, error) {
	x := &OffsetIndex{Name: name, BaseOffset: baseOffset, Size: size}
	x.Entries = makeEntries[txnindex.IndexEntry](size / offsetIndexEntrySize)
	defer func() { x.Entries = trimEntries(x.Entries) }()
	var bad error
	slots, err := walkSlots(r, size, offsetIndexEntrySize, func(first int64, chunk []byte) bool {
		for k := 0; k+offsetIndexEntrySize <= len(chunk); k += offsetIndexEntrySize {
			i := first + int64(k/offsetIndexEntrySize)
			rel := int32(binary.BigEndian.Uint32(chunk[k:]))
			pos := int32(binary.BigEndian.Uint32(chunk[k+4:]))
			if i > 0 && rel == 0 {
				return false
			}
			e := txnindex.IndexEntry{Offset: baseOffset + int64(rel), Position: int64(pos)}
			switch {
			case rel < 0 || pos < 0:
				bad = formatErr(name, i*offsetIndexEntrySize, "entry", "entry %d: want relative offset and position >= 0, found %d and %d", i, rel, pos)
			case len(x.Entries) > 0 && e.Offset <= x.Entries[len(x.Entries)-1].Offset:
				bad = formatErr(name, i*offsetIndexEntrySize, "entry", "entry %d: offset %d does not increase past the previous entry's %d", i, e.Offset, x.Entries[len(x.Entries)-1].Offset)
			case len(x.Entries) > 0 && e.Position < x.Entries[len(x.Entries)-1].Position:
				bad = formatErr(name, i*offsetIndexEntrySize, "entry", "entry %d: position %d is below the previous entry's %d", i, e.Position, x.Entries[len(x.Entries)-1].Position)
			}
			if bad != nil {
				return false
			}
			x.Entries = append(x.Entries, e)
		}
		return true
	})
	x.Slots = slots
	if err != nil {
		return x, err
	}
	if bad != nil {
		return x, bad
	}
	return x, partialSlot(name, size, offsetIndexEntrySize)
}

// ReadTimeIndex decodes a .timeindex file of the segment at baseOffset,
// stopping at the preallocated zero tail the way DumpLogSegments
// .dumpTimeIndex does (an entry after the first whose offset is the base
// offset). An entry whose timestamp or offset goes backwards ends the
// entries with an error: TimeIndex is monotonic by construction.
func ReadTimeIndex(r io.ReaderAt, size int64, name string, baseOffset int64) (*TimeIndex, error) {
	x := &TimeIndex{Name: name, BaseOffset: baseOffset, Size: size}
	x.Entries = makeEntries[TimeIndexEntry](size / timeIndexEntrySize)
	defer func() { x.Entries = trimEntries(x.Entries) }()
	var bad error
	slots, err := walkSlots(r, size, timeIndexEntrySize, func(first int64, chunk []byte) bool {
		for k := 0; k+timeIndexEntrySize <= len(chunk); k += timeIndexEntrySize {
			i := first + int64(k/timeIndexEntrySize)
			ts := int64(binary.BigEndian.Uint64(chunk[k:]))
			rel := int32(binary.BigEndian.Uint32(chunk[k+8:]))
			if i > 0 && rel == 0 {
				return false
			}
			e := TimeIndexEntry{Timestamp: ts, Offset: baseOffset + int64(rel)}
			if n := len(x.Entries); rel < 0 {
				bad = formatErr(name, i*timeIndexEntrySize, "entry", "entry %d: want relative offset >= 0, found %d", i, rel)
			} else if n > 0 && (e.Timestamp < x.Entries[n-1].Timestamp || e.Offset < x.Entries[n-1].Offset) {
				bad = formatErr(name, i*timeIndexEntrySize, "entry", "entry %d: timestamp %d offset %d goes back from the previous entry's %d and %d", i, e.Timestamp, e.Offset, x.Entries[n-1].Timestamp, x.Entries[n-1].Offset)
			}
			if bad != nil {
				return false
			}
			x.Entries = append(x.Entries, e)
		}
		return true
	})
	x.Slots = slots
	if err != nil {
		return x, err
	}
	if bad != nil {
		return x, bad
	}
	return x, partialSlot(name, size, timeIndexEntrySize)
}

// ReadTxnIndexFile decodes a .txnindex file with txnindex.ReadTxnIndex and
// names the file in its errors. A trailing partial entry (which Kafka's
// iterator ignores) and an entry with an unsupported version (which makes
// Kafka's iterator throw) are errors after the entries before them. An entry
// whose marker offset lies below the segment's base offset is what
// TransactionIndex.sanityCheck calls corrupt; it is kept and reported, and
// the segment's entries are rebuilt, as LogLoader's recovery does.
func ReadTxnIndexFile(r io.Reader, size int64, name string, baseOffset int64) (*TxnIndexFile, error) {
	x := &TxnIndexFile{Name: name, BaseOffset: baseOffset, Size: size}
	entries, err := txnindex.ReadTxnIndex(r, size)
	x.Entries = entries
	if err != nil {
		var fe *txnindex.FormatError
		if errors.As(err, &fe) {
			msg := fe.Msg
			if v, ok := txnindex.RejectedVersion(err); ok {
				x.Rejected = &txnindex.RejectedEntry{Position: fe.Offset, Version: v}
				msg += ": Kafka's TransactionIndex throws on it, and a broker fails to start with this file while the segment's .index is there"
			}
			return x, &FormatError{File: name, Offset: fe.Offset, Item: "entry", Msg: msg}
		}
		return x, fmt.Errorf("loader: %s: %w", name, err)
	}
	for i, e := range entries {
		if e.LastOffset < baseOffset {
			return x, formatErr(name, int64(i)*txnindex.AbortedTxnSize, "entry", "entry %d: marker offset %d is below the segment base offset %d (the broker calls the file corrupt, recovers the segment and rebuilds it)", i, e.LastOffset, baseOffset)
		}
	}
	return x, nil
}
