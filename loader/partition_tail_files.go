package loader

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
)

// The few bytes of a partition directory's files the tail reads instead
// of the segments it leaves unread (OpenPartitionTail): the first batch's
// offset, a segment's largest timestamp, the .index entry to start at.

// firstBatchOffset reads the base offset of the log's first batch from the
// first segment's first v2 header, without scanning the segment.
func firstBatchOffset(dir string, l dirListing) (int64, string, error) {
	name := l.segs[l.bases[0]].log
	var h [17]byte
	err := withFile(filepath.Join(dir, name), func(fh *os.File, size int64) error {
		if size < 61 {
			return nil
		}
		_, err := fh.ReadAt(h[:], 0)
		return err
	})
	if err != nil {
		return 0, "", err
	}
	if h[16] != 2 {
		return 0, fmt.Sprintf("the first segment %s does not begin with a v2 batch", name), nil
	}
	return int64(binary.BigEndian.Uint64(h[:8])), "", nil
}

// segmentMaxTimestamp is a segment's largest batch timestamp, the last
// entry of its .timeindex (the broker appends it when it rolls the segment,
// LogSegment.onBecomeInactiveSegment); a reason instead when there is none.
func segmentMaxTimestamp(dir string, s *segFiles) (int64, string, error) {
	if s.time == "" {
		return 0, fmt.Sprintf("segment %s has no .timeindex to give its largest timestamp", s.log), nil
	}
	var last [timeIndexEntrySize]byte
	var n int64
	err := withFile(filepath.Join(dir, s.time), func(fh *os.File, size int64) error {
		n = size
		if size == 0 || size%timeIndexEntrySize != 0 {
			return nil
		}
		_, err := fh.ReadAt(last[:], size-timeIndexEntrySize)
		return err
	})
	if err != nil {
		return 0, "", err
	}
	// Only the last entry is read, the largest timestamp; TimeIndex
	// .sanityCheck's conditions guard it (a whole number of entries, an
	// offset not below the base). A rolled segment's index is trimmed to
	// its entries (AbstractIndex.trimToValidSize), so a zero slot at the
	// end is not one of a rolled segment.
	ts := int64(binary.BigEndian.Uint64(last[:8]))
	rel := int32(binary.BigEndian.Uint32(last[8:]))
	if n == 0 || n%timeIndexEntrySize != 0 || rel < 0 || (rel == 0 && ts == 0) {
		return 0, fmt.Sprintf("segment %s's .timeindex (%d bytes) does not end with an entry giving its largest timestamp", s.log, n), nil
	}
	return ts, "", nil
}

// indexFloor is the position and base offset of the batch the segment's
// .index gives for offset: its last entry at or below it, found by a binary
// search of the file's slots (a preallocated zero slot after the first
// counts as past every offset, as AbstractIndex's lookup ends at its
// entries), and checked against the batches found there: magic 2, a base
// offset in [the segment's base, the entry's offset], and the batch after
// it starting inside the file with magic 2 too. 0 when there is none or a
// check fails: the segment is then read from its start.
func indexFloor(dir string, s *segFiles, offset int64) (int64, int64) {
	if s.index == "" || s.hasSwap || offset <= s.base {
		return 0, s.base
	}
	var pos, base int64
	err := withFile(filepath.Join(dir, s.index), func(fh *os.File, size int64) error {
		var readErr error
		slot := func(i int) (rel, p int64) {
			var b [offsetIndexEntrySize]byte
			if _, err := fh.ReadAt(b[:], int64(i)*offsetIndexEntrySize); err != nil {
				readErr = err
				return math.MaxInt64, 0
			}
			rel = int64(int32(binary.BigEndian.Uint32(b[:4])))
			if i > 0 && rel == 0 {
				rel = math.MaxInt64
			}
			return rel, int64(int32(binary.BigEndian.Uint32(b[4:])))
		}
		want := offset - s.base
		k := sort.Search(int(size/offsetIndexEntrySize), func(i int) bool { rel, _ := slot(i); return rel > want }) - 1
		if k < 0 || readErr != nil {
			return readErr
		}
		rel, p := slot(k)
		if readErr != nil || rel > want || rel < 0 || p <= 0 {
			return readErr
		}
		return withFile(filepath.Join(dir, s.log), func(lf *os.File, lsize int64) error {
			var h [17]byte
			if p+batchHeaderSize > lsize {
				return nil
			}
			if _, err := lf.ReadAt(h[:], p); err != nil {
				return err
			}
			b := int64(binary.BigEndian.Uint64(h[:8]))
			next := p + logOverhead + int64(int32(binary.BigEndian.Uint32(h[8:12])))
			if h[16] != 2 || b < s.base || b > s.base+rel || next <= p || next > lsize {
				return nil
			}
			if next < lsize {
				var n [17]byte
				if _, err := lf.ReadAt(n[:], next); err != nil || n[16] != 2 {
					return err
				}
			}
			pos, base = p, b
			return nil
		})
	})
	if err != nil || pos == 0 {
		return 0, s.base
	}
	return pos, base
}
