package loader

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/txnscope/txnscope/txnindex"
)

// Scanning a partition's segments: each .log (or .log.swap) with its
// indexes, in parallel when there are several, into one batch slice that
// assemble hands to txnindex.

// scanSegments scans the listed segments. Large segments are scanned one
// after another into one batch slice, each cut in parts at its .index
// entries and walked on all the cores (segment_split.go); many small ones
// on several goroutines at once (loadSegmentsParallel), each into its own
// slice, joined by assemble.
//
// Why both: scanning segments at once needs a slice per segment and a copy
// of every batch to join them, and with 1 KiB batches that copy (and the
// first touch of its pages) cost as much CPU as the scan's reads (a quarter
// of a snapshot-seeded diagnose, scripts/bench-diagnose.sh); the parts of
// one segment write straight into regions of the shared slice and are
// joined by a memmove in memory already touched. Segments too small to be
// cut are scanned at once.
func (p *Partition) scanSegments(ctx context.Context, dir string, l dirListing, o ScanOptions) ([]*SegmentFiles, error) {
	segs, bases := l.segs, l.bases
	cores := min(runtime.GOMAXPROCS(0), maxScanWorkers)
	var remaining, done int64
	for _, b := range bases {
		remaining += segmentLogSize(dir, segs[b])
	}
	large := len(bases) > 0 && remaining/int64(len(bases)) >= int64(cores)*minSplitPart
	if workers := min(cores, len(bases)); workers > 1 && !large {
		return p.loadSegmentsParallel(ctx, dir, l, o, workers)
	}
	// All segments' batches go into one slice: no per-segment growth, no
	// copy to join them. The scanner sizes it from the bytes of this and
	// the later segments (scanner.add), bounded by what they can hold.
	var shared []txnindex.Batch
	loaded := make([]*SegmentFiles, 0, len(bases))
	for i, b := range bases {
		sf, err := p.loadSegment(ctx, dir, segs[b], l.numbered(i, o), &shared, done, remaining, cores, l.startAt(b))
		if err != nil {
			return nil, err
		}
		done += sf.Log.Size
		loaded = append(loaded, sf)
	}
	p.shared = shared
	return loaded, nil
}

// maxScanWorkers bounds the segments scanned at once: past a few, the scan
// is bound by memory latency and the page cache, not by cores.
const maxScanWorkers = 4

// loadSegmentsParallel loads the segments on workers goroutines, each into
// its own batch slice, and returns them in offset order with their damage
// and ignored files appended to p in that order too, exactly as the
// sequential loop would. assemble then joins the slices with one copy.
//
// Why: a header-only scan is bound by the latency of reading each batch
// header (a dependent load per batch: the next position is in this header),
// so one core walks one segment at a time, and a second core walking
// another segment nearly halves the load (scripts/bench-scan.sh, "scan"
// against "scan-1cpu" with GOMAXPROCS=1). The join's copy costs less than
// what the second core saves.
func (p *Partition) loadSegmentsParallel(ctx context.Context, dir string, l dirListing, o ScanOptions, workers int) ([]*SegmentFiles, error) {
	segs, bases := l.segs, l.bases
	type result struct {
		sf   *SegmentFiles
		part Partition // only Damage and Ignored are filled
		err  error
	}
	results := make([]result, len(bases))
	// A segment holding more than its share of the bytes is cut in
	// parts of about a share each (one 1 GiB and one 0.6 GiB segment on
	// two cores: parts of 0.5, 0.5 and 0.6 GiB), so that no core is left
	// with the big one's tail alone.
	sizes := make([]int64, len(bases))
	var total int64
	for i, b := range bases {
		sizes[i] = segmentLogSize(dir, segs[b])
		total += sizes[i]
	}
	share := max(total/int64(workers), 1)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &results[i]
				var own []txnindex.Batch
				parts := int(min((sizes[i]+share-1)/share, int64(workers)))
				r.sf, r.err = r.part.loadSegment(ctx, dir, segs[bases[i]], l.numbered(i, o), &own, 0, sizes[i], parts, l.startAt(bases[i]))
			}
		}()
	}
	for i := range bases {
		next <- i
	}
	close(next)
	wg.Wait()
	loaded := make([]*SegmentFiles, 0, len(bases))
	for i := range results {
		r := &results[i]
		if r.err != nil {
			return nil, r.err
		}
		p.Ignored = append(p.Ignored, r.part.Ignored...)
		p.Damage = append(p.Damage, r.part.Damage...)
		loaded = append(loaded, r.sf)
	}
	return loaded, nil
}

// segmentLogSize is the size of the segment's .log (or .log.swap), 0 when
// it cannot be had (the open that follows reports why).
func segmentLogSize(dir string, s *segFiles) int64 {
	name := s.log
	if s.hasSwap {
		name = s.swapLog
	}
	if st, err := os.Lstat(filepath.Join(dir, name)); err == nil {
		return st.Size()
	}
	return 0
}

// loadSegment scans one segment's .log (or .log.swap) and reads its indexes.
// before and remaining are the bytes of the partition's segments before
// this one and from this one on, for sizing the shared batch slice; parts
// is how many goroutines may walk the segment (cut at its .index entries).
func (p *Partition) loadSegment(ctx context.Context, dir string, s *segFiles, o ScanOptions, shared *[]txnindex.Batch, before, remaining int64, parts int, from int64) (*SegmentFiles, error) {
	logName, idx, tim, txn := s.log, s.index, s.time, s.txn
	out := &SegmentFiles{}
	if s.hasSwap {
		out.Swap = true
		logName, idx, tim, txn = s.swapLog, s.swapIdx, s.swapTime, s.swapTxn
		if s.hasLog {
			// Kept until applySwaps decides which segments the swap
			// replaces; the .log of the same base is always one.
			p.Ignored = append(p.Ignored, IgnoredFile{s.log, "replaced by " + s.swapLog})
		}
	}
	path := filepath.Join(dir, logName)
	fh, size, err := openInside(path)
	if err != nil {
		return nil, err
	}
	from = min(from, size)
	// Where the scan may cut the segment, and where it samples the parts
	// for their batch counts: a few dozen entries of its .index, read in
	// place (rawIndex), so that no core waits for the whole index to be
	// decoded first.
	var sp split
	if idx != "" {
		_ = withFile(filepath.Join(dir, idx), func(ih *os.File, isize int64) error {
			x := newRawIndex(ih, isize)
			if sp.cuts = x.cuts(from, size, parts); len(sp.cuts) > 0 {
				sp.spots = x.sampleSpots(append([]int64{from}, sp.cuts...), append(sp.cuts[:len(sp.cuts):len(sp.cuts)], size))
			}
			return nil
		})
	}
	// The index files are decoded while the .log is scanned, into fresh
	// memory (a 1 GiB segment of 1 KiB batches has 250,000 entries in each
	// of .index and .timeindex): by a goroutine of their own beside a
	// cut-less scan, which leaves a core idle; by the parts' goroutines as
	// they finish when the segment is cut (sideReads). Their damage is
	// still reported after the .log's.
	type read struct {
		x   any
		err error // the file's damage (a *FormatError) or a failure
	}
	var ir, tr, xr read
	var side sideReads
	decode := func(r *read, name string, fn func(*os.File, int64) (any, error)) {
		if name == "" {
			return
		}
		side.add(func() {
			r.err = withFile(filepath.Join(dir, name), func(fh *os.File, size int64) (err error) {
				r.x, err = fn(fh, size)
				return err
			})
		})
	}
	decode(&ir, idx, func(fh *os.File, size int64) (any, error) { return ReadOffsetIndex(fh, size, idx, s.base) })
	decode(&tr, tim, func(fh *os.File, size int64) (any, error) { return ReadTimeIndex(fh, size, tim, s.base) })
	decode(&xr, txn, func(fh *os.File, size int64) (any, error) { return ReadTxnIndexFile(fh, size, txn, s.base) })
	if len(sp.cuts) == 0 {
		go side.drain()
	}
	f, grown, err := scanSegmentFrom(ctx, fh, size, from, logName, o, *shared, before, max(remaining-before-size, 0), sp, side.drain)
	*shared = grown
	fh.Close()
	side.wait()
	if err != nil {
		return nil, err
	}
	// Segments are reopened on demand by Records: a log dir can have
	// more segments than a process may hold open.
	f.r, f.path = nil, path
	f.BaseOffset = s.base
	out.Log = f
	out.indexListed, out.txnListed = idx != "", txn != ""
	p.Damage = append(p.Damage, f.Damage...)

	if idx != "" {
		out.Index, _ = ir.x.(*OffsetIndex)
		if err := p.damage(ir.err); err != nil {
			return nil, err
		}
	}
	if tim != "" {
		out.TimeIndex, _ = tr.x.(*TimeIndex)
		if err := p.damage(tr.err); err != nil {
			return nil, err
		}
	}
	if txn != "" {
		out.TxnIndex, _ = xr.x.(*TxnIndexFile)
		if err := p.damage(xr.err); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func withFile(path string, fn func(*os.File, int64) error) error {
	fh, size, err := openInside(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	return fn(fh, size)
}

// assemble fills Input.Segments and Input.Batches from the loaded segments.
func (p *Partition) assemble() {
	total := 0
	for _, s := range p.Segments {
		total += len(s.Log.Batches)
	}
	// Segments scanned into one shared slice (in order, no swap dropped
	// one) are joined already; otherwise copy them together.
	batches := p.contiguous(total)
	if batches == nil {
		batches = makeBatches(0, total)
	} else if cap(p.shared)-total > total/16 && !p.keepSpare {
		// The estimate left much spare capacity: keep exactly the
		// batches. The few percent scanner.add's estimate leaves
		// (est/32) cost at most 4 bytes a batch; copying every batch
		// to drop them cost a tenth of a snapshot-seeded diagnose's
		// CPU (1 KiB batches, scripts/bench-diagnose.sh). A span's
		// estimate (partRegions) leaves more, which a diagnosis, done
		// with the partition at once, keeps: the spare capacity was
		// never touched in a fresh process.
		batches = trimBatches(p.shared[:total])
	}
	p.shared = nil
	joined := len(batches) == total && total > 0
	next := 0
	segs := make([]txnindex.Segment, len(p.Segments))
	for si, s := range p.Segments {
		lo := next
		if !joined {
			batches = append(batches, s.Log.Batches...)
		}
		hi := lo + len(s.Log.Batches)
		next = hi
		if s.Log.Options.segment != int32(si) {
			// A swap dropped a segment before this one (or the
			// batches came from elsewhere): the scan numbered them
			// by their place in the listing.
			for i := lo; i < hi; i++ {
				batches[i].Segment = int32(si)
			}
		}
		s.Log.Batches = batches[lo:hi:hi]

		ts := s.Log.Segment()
		ts.Damaged = s.Log.StoppedAt()
		SetServedTxnIndex(&ts, s.indexListed, s.txnListed, s.TxnIndex)
		if s.txnRejected != nil {
			ts.TxnIndexRejected = s.txnRejected // a segment the tail left unread
		}
		if s.Index != nil && !p.hasDamageIn(s.Index.Name) {
			// A corrupt index is rebuilt by the broker
			// (CorruptIndexException on sanityCheck), so only a clean
			// one is handed on; nil makes Build rebuild it too.
			ts.OffsetIndex = s.Index.Entries
			if ts.OffsetIndex == nil {
				ts.OffsetIndex = []txnindex.IndexEntry{}
			}
		}
		segs[si] = ts
	}
	p.Input.Segments = segs
	p.Input.Batches = batches
}

func (p *Partition) hasDamageIn(file string) bool {
	for _, d := range p.Damage {
		if d.File == file {
			return true
		}
	}
	return false
}

// contiguous returns the shared slice the segments were scanned into when
// their batches still lie back to back in it, in segment order (applySwaps
// may have dropped or replaced some); nil otherwise.
func (p *Partition) contiguous(total int) []txnindex.Batch {
	if total == 0 || len(p.shared) != total {
		return nil
	}
	n := 0
	for _, s := range p.Segments {
		b := s.Log.Batches
		if len(b) == 0 {
			continue
		}
		if &b[0] != &p.shared[n] {
			return nil
		}
		n += len(b)
	}
	if n != total {
		return nil
	}
	return p.shared[:total:total]
}
