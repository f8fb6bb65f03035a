package loader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

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

// splitPoints returns up to parts-1 cut positions inside (from, size), from
// the .index entries closest above from+(size-from)*i/parts, strictly
// increasing: the bytes [from, size) of the file are scanned (from is 0, or
// where a seeded load starts inside its first segment). None when they are
// too few to be worth splitting or there is no index.
func splitPoints(idx []txnindex.IndexEntry, from, size int64, parts int) []int64 {
	return splitPointsAt(len(idx), func(i int) int64 { return idx[i].Position }, from, size, parts)
}

// splitPointsAt is splitPoints over n entries whose positions pos gives.
func splitPointsAt(n int, pos func(int) int64, from, size int64, parts int) []int64 {
	parts = min(parts, int((size-from)/minSplitPart))
	if parts < 2 || n == 0 {
		return nil
	}
	var cuts []int64
	last := from
	for i := 1; i < parts; i++ {
		want := from + (size-from)*int64(i)/int64(parts)
		// Entries are in position order in an index the broker wrote;
		// in a damaged one the search still lands somewhere, and the
		// checks here and at the join keep the result right.
		k := sort.Search(n, func(j int) bool { return pos(j) >= want })
		if k == n {
			break
		}
		if p := pos(k); p > last && p < size {
			cuts = append(cuts, p)
			last = p
		}
	}
	return cuts
}

// rawIndex is a .index file read in place, an entry at a time: the scan
// plans its parts (cuts, sampleSpots) from a few dozen entries, where
// decoding the index first (ReadOffsetIndex: 250,000 entries for 1 GiB of
// 1 KiB batches) kept both cores waiting 3 ms. The entries end where
// ReadOffsetIndex stops, at the zero-filled preallocated tail (the first
// entry after the first whose relative offset is 0). A damaged index gives
// cuts the join refuses and sample spots that misjudge the parts, as a
// decoded damaged one would; one that cannot be read gives none.
type rawIndex struct {
	r      io.ReaderAt
	n      int
	failed bool
}

func newRawIndex(r io.ReaderAt, isize int64) *rawIndex {
	x := &rawIndex{r: r}
	if slots := int(min(isize/offsetIndexEntrySize, math.MaxInt32)); slots > 0 {
		x.n = 1 + sort.Search(slots-1, func(i int) bool { rel, _ := x.entry(i + 1); return rel == 0 })
	}
	return x
}

func (x *rawIndex) entry(i int) (rel int32, pos int64) {
	var b [offsetIndexEntrySize]byte
	if _, err := x.r.ReadAt(b[:], int64(i)*offsetIndexEntrySize); err != nil {
		x.failed = true
		return 0, 0
	}
	return int32(binary.BigEndian.Uint32(b[:])), int64(int32(binary.BigEndian.Uint32(b[4:])))
}

func (x *rawIndex) pos(i int) int64 {
	_, p := x.entry(i)
	return p
}

// cuts is splitPoints over the entries: where the bytes [from, size) of the
// segment are cut for parts goroutines.
func (x *rawIndex) cuts(from, size int64, parts int) []int64 {
	if min(parts, int((size-from)/minSplitPart)) < 2 {
		return nil
	}
	if c := splitPointsAt(x.n, x.pos, from, size, parts); !x.failed {
		return c
	}
	return nil
}

// sampleSpots returns, for each part [starts[i], ends[i]), the batch starts
// partRegions samples it at: the part's start and the first entries at or
// past even steps of its bytes, one for every spotBytes of the part, up to
// maxSpots. A part's batches are counted from samples spread over its
// bytes: from its start alone, the count was misjudged by more than the
// slack (1 GiB of 4 KiB batches and markers: every part outgrew its
// region, and the join copied every batch into fresh memory); spread over
// its entries, the bytes of batches larger than the index interval (an
// entry each) were undersampled.
func (x *rawIndex) sampleSpots(starts, ends []int64) [][]int64 {
	spots := make([][]int64, len(starts))
	for i, start := range starts {
		end := ends[i]
		spots[i] = []int64{start}
		k := int(spotSteps(end - start))
		if x.n == 0 || k < 2 {
			continue
		}
		// The part's entries are searched a 4 KiB block at a time, the
		// last block read kept: reading the part's entries at once
		// would fill a fresh 2 MB buffer (1 GiB of 1 KiB batches) for
		// a few dozen spots.
		lo := sort.Search(x.n, func(j int) bool { return x.pos(j) > start })
		hi := sort.Search(x.n, func(j int) bool { return x.pos(j) >= end })
		var blk [indexBlock * offsetIndexEntrySize]byte
		from, got := -1, 0
		pos := func(j int) int64 {
			if j < from || j >= from+got {
				from = j &^ (indexBlock - 1)
				// A block past the file's end comes back short
				// (io.EOF); the entry asked for must be in it.
				n, _ := x.r.ReadAt(blk[:], int64(from)*offsetIndexEntrySize)
				if got = n / offsetIndexEntrySize; j >= from+got {
					x.failed, got = true, 0
					return 0
				}
			}
			return int64(int32(binary.BigEndian.Uint32(blk[(j-from)*offsetIndexEntrySize+4:])))
		}
		at := lo
		for j := 1; j < k; j++ {
			want := start + (end-start)*int64(j)/int64(k)
			at += sort.Search(hi-at, func(m int) bool { return pos(at+m) >= want })
			if at == hi {
				break
			}
			if p := pos(at); p > spots[i][len(spots[i])-1] && p < end {
				spots[i] = append(spots[i], p)
			}
		}
	}
	if x.failed {
		return nil
	}
	return spots
}

// indexBlock is the entries sampleSpots reads at once: 4 KiB of them.
const indexBlock = 512

// spotBytes and maxSpots: a part is sampled once for every spotBytes of
// it, at most maxSpots times (sampleBytes each: 2 MiB of a 512 MiB part).
// A variable for the tests.
var spotBytes int64 = 8 << 20

const maxSpots = 32

// spotSteps is how many spots a part of n bytes is sampled at.
func spotSteps(n int64) int64 { return min(max(n/spotBytes, 1), maxSpots) }

// split is how scanSegmentFrom cuts a segment: at cuts (strictly
// increasing, inside the file), each part sampled at its spots (nil: at
// its start).
type split struct {
	cuts  []int64
	spots [][]int64
}

// scanParts is scanSegmentContext's walk of the file f describes, cut at
// cuts (strictly increasing, inside the file) and walked on a goroutine per
// part, then joined.
//
// Each part writes its batches straight into its own region of one slice
// (partRegions), sized from the mean batch size of a sample at the part's
// start; the join then moves each region down behind the one before with a
// memmove in memory already touched. Scanning each part into a slice of its
// own and copying it behind the first wrote every batch of the later parts
// twice into fresh memory, which on small batches cost more than the second
// core saved (1.35M batches of 1 KiB: 86 MB, and the kernel's zeroing of
// fresh pages can cost as much as the copy from the page cache).
// A part that outgrows its region moves to a slice of its own (scanner.slot)
// and the join copies everything once into an exact slice.
func scanParts(ctx context.Context, r io.ReaderAt, f *SegmentFile, into []txnindex.Batch, before, after int64, sp split, idle func()) ([]txnindex.Batch, error) {
	size := f.Size
	cuts := sp.cuts
	starts := append([]int64{f.Start}, cuts...)
	ends := append(cuts[:len(cuts):len(cuts)], size)
	start := len(into)
	spots := sp.spots
	if len(spots) != len(starts) {
		spots = make([][]int64, len(starts))
		for i := range starts {
			spots[i] = []int64{starts[i]}
		}
	}
	out, offs := partRegions(r, into, starts, ends, spots, after, f.Options)
	parts := make([]scanner, len(starts))
	errs := make([]error, len(starts))
	var wg sync.WaitGroup
	for i := range parts {
		s := &parts[i]
		*s = scanner{name: f.Name, w: scanWindow(r, ends[i]), opts: f.Options, segment: f.Options.segment, ctx: ctx, pos: starts[i]}
		// slot sizes an outgrown region from the bytes walked so far
		// (before + pos): here only this part's.
		s.before = -starts[i]
		if out != nil {
			s.batches = out[offs[i]:offs[i]:offs[i+1]]
		}
		wg.Add(1)
		go func() {
			errs[i] = s.scan()
			// The join below needs only the walks; the goroutine then
			// takes what other work the caller has (idle), beside it.
			wg.Done()
			if idle != nil {
				idle()
			}
		}()
	}
	wg.Wait()

	// While inPlace, out is the slice of the regions and out[:cur] the
	// parts joined so far, moved down; the regions after cur are as their
	// parts left them.
	inPlace := out != nil
	if !inPlace {
		out = into
	}
	cur := start
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
		if errors.Is(errs[i], errSpanWhole) {
			return into, errs[i]
		}
		ok := errs[i] == nil
		if ok && i > 0 {
			// The part's first batch walked, kept or passed over in
			// a span (spanScan).
			ok = s.nwalked > 0 && s.firstMagic == 2 && (!haveLast || s.firstBase > last)
			if ok && haveLast && parts[i-1].prevInSpan && s.firstBase > last+1 {
				// Offsets missing at the cut, after a batch of a
				// span: the cleaner's mark spanned checks inside a part.
				return into, fmt.Errorf("%s: byte %#x: offsets %d-%d are missing between two batches: %w", f.Name, starts[i], last+1, s.firstBase-1, errSpanWhole)
			}
		}
		if ok && i < len(parts)-1 {
			ok = s.pos == ends[i]
		}
		if !ok {
			// Walk on from this part's start as one scan would: a
			// cut inside a batch, damage found just before a cut
			// (or real), offsets going backwards at the cut, an
			// error reading: the single walk decides what they are.
			t := scanner{name: f.Name, w: scanWindow(r, size), opts: f.Options, segment: f.Options.segment, ctx: ctx,
				pos: starts[i], batches: out[:cur], before: before, after: after, lastOffset: last, haveLast: haveLast}
			if err := t.scan(); err != nil {
				return into, err
			}
			notes, stop := t.damage, []*FormatError(nil)
			if t.stopped {
				notes, stop = t.damage[:len(t.damage)-1], t.damage[len(t.damage)-1:]
			}
			out, f.Damage, f.ValidBytes = t.batches, append(capNotes(f.Name, append(damage, notes...)), stop...), t.pos
			f.Batches = out[start:len(out):len(out)]
			return out, nil
		}
		n := len(s.batches)
		switch {
		case inPlace && (n == 0 || unsafe.SliceData(s.batches) == &out[offs[i]]):
			// A memmove down (cur <= offs[i]): the regions after
			// this one are not reached.
			copy(out[cur:cur+n], s.batches)
			cur += n
		default:
			if inPlace {
				// The part outgrew its region (the sample misjudged
				// it): join the rest by copying, once, into a slice
				// sized for it.
				joined := makeBatches(cur, cur+totalLen(parts[i:])+int(after/minBatchBytes/32))
				copy(joined, out[:cur])
				out, inPlace = joined, false
			}
			out = appendBatches(out[:cur], s.batches)
			cur = len(out)
		}
		damage = append(damage, s.damage...)
		if s.haveLast {
			last, haveLast = s.lastOffset, true
		}
	}
	out = out[:cur]
	// Only the last part may have stopped at damage: it stays last.
	var stop []*FormatError
	if parts[len(parts)-1].stopped {
		damage, stop = damage[:len(damage)-1], damage[len(damage)-1:]
	}
	f.Damage, f.ValidBytes = append(capNotes(f.Name, damage), stop...), parts[len(parts)-1].pos
	f.Batches = out[start:cur:cur]
	return out, nil
}

// totalLen is the number of batches the scanners hold.
func totalLen(parts []scanner) int {
	n := 0
	for i := range parts {
		n += len(parts[i].batches)
	}
	return n
}

// partRegions lays out one slice for the parts [starts[i], ends[i]) of a
// segment: into's batches, then a region per part for its estimated batch
// count plus slack, then room for the after bytes of later segments at the
// mean size. offs[i] is part i's first slot and offs[i+1] its end. A part's
// estimate is its bytes over the mean batch size of samples of sampleBytes
// at its spots (sampleBatches). When into's capacity holds the estimates
// (an earlier segment sized it for this one), the slack is what it has
// left, shared in proportion: a new slice would hold the batches twice at
// the copy. Otherwise a part's slack is three standard errors of its
// estimate (the spread of the sampled sizes over the square root of their
// number), between 1/32 and 1/24, plus 64 slots: a part that outgrows its
// region costs a copy of every batch, and more than 1/16 left over costs
// assemble one. It returns a nil slice, and the parts then fill slices of
// their own, when a sample finds no batches.
//
// In a span (ScanOptions.span), where only the open transactions' batches
// are kept, a part's bytes before the span's end count at the share of the
// sample's batches kept: sized for every batch, the slice of a 1 GiB span
// segment was 100 MB that the Go heap zeroes when it reuses memory
// (diagnose of a log dir, serve), for the tenth of it used.
func partRegions(r io.ReaderAt, into []txnindex.Batch, starts, ends []int64, spots [][]int64, after int64, o ScanOptions) ([]txnindex.Batch, []int) {
	est := make([]int, len(starts))
	slack := make([]int64, len(starts))
	var bytes, all, sum, slacks int64
	for i := range starts {
		// Samples no longer than the steps between the spots: the
		// bytes of a part sampled twice would weigh twice.
		window := min(sampleBytes, (ends[i]-starts[i])/spotSteps(ends[i]-starts[i]))
		sm := sampleBatches(r, spots[i], ends[i], window, o)
		m, count, kept := sm.mean(), sm.count, sm.kept
		if m <= 0 {
			return nil, nil
		}
		n := (ends[i] - starts[i]) / m
		if o.span != nil {
			spanned := max(min(ends[i], o.spanUntil)-starts[i], 0)
			n -= spanned / m * (count - kept) / count
		}
		est[i] = int(n)
		slack[i] = int64(float64(n)*min(max(3*sm.relErr(), 1.0/32), 1.0/24)) + 64
		bytes += ends[i] - starts[i]
		all += (ends[i] - starts[i]) / m
		sum += int64(est[i])
		slacks += slack[i]
	}
	var later int
	if after > 0 {
		later = int(after / max(bytes/max(all, 1), minBatchBytes))
	}
	need := len(into) + int(sum) + later
	out := into
	var laterSlack int64
	if later > 0 {
		laterSlack = int64(later/32 + 64)
	}
	if cap(into) < need {
		out = makeBatches(len(into), need+int(slacks+laterSlack))
		copy(out, into)
	}
	// The spare room, shared in proportion to the slack each was given.
	spare := int64(cap(out) - need)
	offs := make([]int, len(starts)+1)
	offs[0] = len(into)
	for i := range starts {
		offs[i+1] = offs[i] + est[i] + int(spare*slack[i]/(slacks+laterSlack))
	}
	return out[:cap(out)], offs
}

// sampleBytes is how much of a part a sample reads at each spot: a few
// dozen batches of even 1 KiB, one read.
const sampleBytes = 64 << 10

// sampleMean is the mean size of the batches that start in the first
// sampleBytes of [start, end), following the size fields only; 0 when
// there is none (a damaged header: the parts then grow their own slices).
func sampleMean(r io.ReaderAt, start, end int64) int64 {
	return sampleBatches(r, []int64{start}, end, sampleBytes, ScanOptions{}).mean()
}

// MeanBatchSize is the mean size of the batches that start in the first
// 64 KiB of the segment file at path, following the size fields only; 0
// when there is none.
func MeanBatchSize(path string) (mean int64, err error) {
	err = withFile(path, func(fh *os.File, size int64) error {
		mean = sampleMean(fh, 0, size)
		return nil
	})
	return mean, err
}

// sample is what sampleBatches found: the whole batches, their bytes and
// the sum of their squared sizes, and how many a span keeps.
type sample struct {
	count, bytes, kept int64
	squares            float64
}

// mean is the mean batch size, 0 when no batch was sampled.
func (s sample) mean() int64 {
	if s.count == 0 {
		return 0
	}
	return s.bytes / s.count
}

// relErr is the relative standard error of the mean size: the batches'
// coefficient of variation over the square root of their number.
func (s sample) relErr() float64 {
	if s.count < 2 {
		return 1
	}
	n, m := float64(s.count), float64(s.bytes)/float64(s.count)
	return math.Sqrt(max(s.squares/n-m*m, 0)) / m / math.Sqrt(n)
}

// sampleBatches reads window bytes at each of spots (batch starts below
// end) and counts the batches that start there, following the size fields
// only (a damaged header ends a spot's count), each with its whole size,
// even when it runs past the sample: counting only the batches whole in
// the sample left out the large ones, and a part of 40 KB batches among
// 100-byte ones was counted at 1.4 times its batches. In a span (o.span),
// it counts how many of them are of the producers the span keeps (all when
// the sample is past it or a header is cut by the sample's end). A producer is kept only from its open transaction's first offset
// on, so this is the share at the span's end, where it is largest: a
// region sized from the share at the part's start was outgrown, and the
// join then copied every batch of the part again.
func sampleBatches(r io.ReaderAt, spots []int64, end, window int64, o ScanOptions) sample {
	var s sample
	buf := make([]byte, max(window, logOverhead))
	for _, start := range spots {
		if start >= end {
			continue
		}
		n, _ := r.ReadAt(buf[:min(end-start, int64(len(buf)))], start)
		b := buf[:n]
		var pos int64
		for pos+logOverhead <= int64(len(b)) {
			length := int64(int32(binary.BigEndian.Uint32(b[pos+8:])))
			if length < recordOverheadV0 || start+pos+logOverhead+length > end {
				break
			}
			if sp := o.span; sp == nil || start+pos >= o.spanUntil || pos+batchHeaderSize > int64(len(b)) ||
				sp.keeps(txnindex.ProducerID(binary.BigEndian.Uint64(b[pos+43:])), math.MinInt64) {
				s.kept++
			}
			size := logOverhead + length
			pos += size
			s.count++
			s.bytes += size
			s.squares += float64(size) * float64(size)
		}
	}
	return s
}

// appendBatches is append that grows dst, when it must, to exactly what it
// needs, not to append's doubling.
func appendBatches(dst, src []txnindex.Batch) []txnindex.Batch {
	if n := len(dst) + len(src); n > cap(dst) {
		grown := makeBatches(len(dst), n)
		copy(grown, dst)
		dst = grown
	}
	return append(dst, src...)
}

// sideReads is work to do beside a scan (decoding a segment's index files)
// by whichever goroutine is idle: a goroutine of its own beside a scan that
// leaves a core free, or the parts of a cut segment as each finishes its
// walk (scanParts' idle). Decoded beside the parts, they held back the part
// sharing their core (1 GiB of 1 KiB batches on two cores: one part done
// 10-20 ms after the other).
type sideReads struct {
	tasks []func()
	next  atomic.Int32
	wg    sync.WaitGroup
}

// add appends a task; all are added before drain is first called.
func (s *sideReads) add(task func()) {
	s.tasks = append(s.tasks, task)
	s.wg.Add(1)
}

// drain runs tasks not yet taken until none is left.
func (s *sideReads) drain() {
	for {
		i := int(s.next.Add(1)) - 1
		if i >= len(s.tasks) {
			return
		}
		s.tasks[i]()
		s.wg.Done()
	}
}

// wait runs what is left and waits for the tasks others took.
func (s *sideReads) wait() {
	s.drain()
	s.wg.Wait()
}
