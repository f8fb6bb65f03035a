package loader

import (
	"context"
	"io"
	"sort"
	"sync"

	"github.com/txnscope/txnscope/txnindex"
)

// Scanning one segment on several cores: the batch walk is sequential (each
// header gives the next batch's position), but the segment's .index gives
// byte positions where batches start (LogSegment.append adds an entry, the
// batch's offset and position, every index.interval.bytes), so the
// segment can be cut there and the parts walked at once. The index is
// untrusted input: a cut is only believed when the part before it, walked
// from a batch start, ends exactly on it. Otherwise the walk goes on
// sequentially from the last believed position, so the result (batches,
// damage and its byte positions, ValidBytes) is always what one walk from
// the start finds (TestSplitScanEqualsSequential).

// minSplitPart is the least a part of a split segment holds: below it the
// goroutine and the join of the parts' batch slices cost more than the
// second core saves.
const minSplitPart = 16 << 20

// minSplitSpacing is the least mean distance between .index entries at
// which a segment is cut. The broker writes an entry at the first batch
// past every index.interval.bytes (4 KiB), so the spacing is about the batch
// size for batches above 4 KiB and 4-5 KiB below. Cutting costs a copy of
// every batch of the parts after the first into the shared slice (fresh
// memory written twice), and with small batches that cost more CPU than the
// second core saved: at 1 KiB batches 0.49 s against 0.31 s on one core,
// and 4 KiB slower too, while 64 KiB batches gained (0.51x against 0.63x
// cat on one core at load 25; scripts/bench-scan-batches.sh).
const minSplitSpacing = 16 << 10

// splitPoints returns up to parts-1 cut positions inside (0, size), from
// the .index entries closest above size*i/parts, strictly increasing. None
// when the segment is too small to be worth splitting, its batches are
// small (minSplitSpacing) or it has no index.
func splitPoints(idx []txnindex.IndexEntry, size int64, parts int) []int64 {
	parts = min(parts, int(size/minSplitPart))
	if parts < 2 || len(idx) == 0 || size/int64(len(idx)) < minSplitSpacing {
		return nil
	}
	var cuts []int64
	last := int64(0)
	for i := 1; i < parts; i++ {
		want := size * int64(i) / int64(parts)
		// Entries are in position order in an index the broker wrote;
		// in a damaged one the search still lands somewhere, and the
		// checks here and at the join keep the result right.
		k := sort.Search(len(idx), func(j int) bool { return idx[j].Position >= want })
		if k == len(idx) {
			break
		}
		if p := idx[k].Position; p > last && p < size {
			cuts = append(cuts, p)
			last = p
		}
	}
	return cuts
}

// scanParts is scanSegmentContext's walk of the file f describes, cut at
// cuts (strictly increasing, inside the file) and walked on a goroutine per
// part, then joined. The first part appends to into, sized for the whole
// segment and the after bytes still to come; the others to their own
// slices, copied behind it.
func scanParts(ctx context.Context, r io.ReaderAt, f *SegmentFile, into []txnindex.Batch, before, after int64, cuts []int64) ([]txnindex.Batch, error) {
	size := f.Size
	starts := append([]int64{0}, cuts...)
	ends := append(cuts[:len(cuts):len(cuts)], size)
	parts := make([]scanner, len(starts))
	errs := make([]error, len(starts))
	var wg sync.WaitGroup
	for i := range parts {
		s := &parts[i]
		*s = scanner{name: f.Name, w: window{r: r, size: ends[i], fill: scanFill}, opts: f.Options, ctx: ctx, pos: starts[i]}
		if i == 0 {
			s.batches, s.before, s.after = into, before, size-ends[0]+after
		} else {
			// add sizes the slice from the bytes walked so far
			// (before + pos): here only this part's.
			s.before = -starts[i]
		}
		wg.Go(func() { errs[i] = s.scan() })
	}
	wg.Wait()

	start := len(into)
	out := into
	var damage []*FormatError
	var last int64
	var haveLast bool
	for i := range parts {
		s := &parts[i]
		if errs[i] != nil && ctx.Err() != nil {
			return into, errs[i]
		}
		// The part starts at a batch start (the file's start, or the
		// previous part ended on it) and its first batch continues the
		// offsets; it ends on the next cut, undamaged.
		ok := errs[i] == nil
		if ok && i > 0 {
			b := s.batches
			ok = len(b) > 0 && b[0].Magic() == 2 && (!haveLast || b[0].BaseOffset > last)
		}
		if ok && i < len(parts)-1 {
			ok = s.pos == ends[i]
		}
		if !ok {
			// Walk on from this part's start as one scan would: a
			// cut inside a batch, damage found just before a cut
			// (or real), offsets going backwards at the cut, an
			// error reading: the single walk decides what they are.
			t := scanner{name: f.Name, w: window{r: r, size: size, fill: scanFill}, opts: f.Options, ctx: ctx,
				pos: starts[i], batches: out, before: before, after: after, lastOffset: last, haveLast: haveLast}
			if err := t.scan(); err != nil {
				return into, err
			}
			out, f.Damage, f.ValidBytes = t.batches, append(damage, t.damage...), t.pos
			f.Batches = out[start:len(out):len(out)]
			return out, nil
		}
		if i == 0 {
			out = s.batches
		} else {
			out = appendBatches(out, s.batches)
		}
		damage = append(damage, s.damage...)
		if s.haveLast {
			last, haveLast = s.lastOffset, true
		}
	}
	f.Damage, f.ValidBytes = damage, parts[len(parts)-1].pos
	f.Batches = out[start:len(out):len(out)]
	return out, nil
}

// appendBatches is append that grows dst, when it must, to exactly what it
// needs in huge-page-advised memory (makeBatches).
func appendBatches(dst, src []txnindex.Batch) []txnindex.Batch {
	if n := len(dst) + len(src); n > cap(dst) {
		grown := makeBatches(len(dst), n)
		copy(grown, dst)
		dst = grown
	}
	return append(dst, src...)
}
