package segsum

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// Options configure a Store.
type Options struct {
	// Scan is how segments are read; loader.DefaultScanOptions (CRCs
	// checked, as the catalog loads) when zero-valued fields are wanted
	// pass loader.HeaderScanOptions explicitly.
	Scan loader.ScanOptions
	// MaxMemory is the memory the scanned segments kept for the timeline
	// may take with the collector's headroom (see Cache); <= 0 means
	// DefaultMaxMemory(). Ignored when Cache is set.
	MaxMemory int64
	// Cache, when set, is the LRU the Store shares with others (one
	// budget for the server).
	Cache *Cache
	// CacheDir, when set, keeps the summaries in a file there (never in
	// the log dir), so that a restarted server draws the overview without
	// scanning the partition again.
	CacheDir string
	// DecisionsOnly seeds a window with the transactions open at its
	// start that its decisions read (those of its own producers, and the
	// first open one, where the LSO stands), not all of them: its
	// decisions are the same, its log lists fewer transactions (not its
	// whole producer state). For a pass that only writes decisions
	// (decide --by-segment): a window after a segment that left K
	// transactions open then costs its own batches, not K.
	DecisionsOnly bool
}

// Bounds are the whole log's offsets: what every fetch is bounded by.
type Bounds struct {
	LogStartOffset   int64 `json:"log_start_offset"`
	LogEndOffset     int64 `json:"log_end_offset"`
	HighWatermark    int64 `json:"high_watermark"`
	LastStableOffset int64 `json:"last_stable_offset"`
}

// Store is one partition directory drawn segment by segment. It is safe
// for concurrent use.
type Store struct {
	dir       string
	topic     string
	partition int32
	o         Options

	// segs, logStart and hwm do not change after Open; sums and bounds
	// do not once computed (Summaries), so windows read them without mu.
	segs          []segFile
	snapshots     []string // the .snapshot files' names
	logStart, hwm int64    // from the checkpoints; -1 when absent
	// crc says how each segment's CRCs are checked, as the whole load
	// checks them (loader.ServedCRCs).
	crc loader.ServedCRCs
	lru *Cache
	// windowLogs maps a weak pointer to each window's log to its segment
	// (records.go): which logs RecordsPage may decode batches of.
	windowLogs sync.Map

	// mu guards sums and bounds while they are computed, the entries
	// read back into cached summaries, and flights. It is never held
	// across a window's scan: a pan of a segment the LRU holds must not
	// wait for another segment's scan (see Window).
	mu      sync.Mutex
	sums    []*Summary // nil until computed
	bounds  *Bounds
	flights map[int]*flight
	spanOf  [][2]int64 // spans, once the summaries are there
	runOf   [][2]int   // runs, once the summaries are there
	opens   *openIndex // the open sets' checkpoints, once the summaries are there
	cursor  *openCursor
	// seedEnd is the offset of the snapshot firstSeed took past the last
	// segment's base before the log end was known, 0 for none
	// (summarize checks it against the log end).
	seedEnd int64
	// fresh counts summaries computed (not read from the cache) since
	// Open, scans the segment scans, for tests and the benchmark.
	fresh int
	scans atomic.Int64
	// listed counts the segments the builds listed (Log.Segments), for
	// tests: a summary's build lists its own segment only.
	listed atomic.Int64
	// scanHook, when set (tests), is called before each segment scan
	// with the segment's index: for a window's scan with no lock held
	// (for the summaries' scans, mu is held).
	scanHook func(k int)
	// joinHook, when set (tests), is called when a request for segment
	// k joins another request's scan of it, before it waits.
	joinHook func(k int)
}

// Open lists dir's segments as the loader and the broker's startup do
// (listSegments) and reads its log dir's checkpoints and the cached
// summaries; it scans nothing but an interrupted cleaning's .swap segment,
// for where it ends.
func Open(dir string, o Options) (*Store, error) {
	dir = filepath.Clean(dir)
	topic, num, _, err := loader.ParsePartitionDir(filepath.Base(dir))
	if err != nil {
		return nil, err
	}
	segs, snaps, err := listSegments(context.Background(), dir, o.Scan)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, topic: topic, partition: num, o: o, segs: segs, snapshots: snaps, logStart: -1, hwm: -1, flights: map[int]*flight{}}
	s.lru = o.Cache
	if s.lru == nil {
		s.lru = NewCache(o.MaxMemory)
	}
	cps, err := loader.ReadLogDirCheckpoints(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	if v, ok := cps.LogStartOffset.Lookup(topic, num); ok {
		s.logStart = v
	}
	if v, ok := cps.ReplicationOffset.Lookup(topic, num); ok {
		s.hwm = v
	}
	bases := make([]int64, len(segs))
	for i, f := range segs {
		bases[i] = f.base
	}
	s.crc = loader.NewServedCRCs(cps, topic, num, bases)
	s.sums = make([]*Summary, len(segs))
	s.loadCache()
	return s, nil
}

// Dir is the partition directory.
func (s *Store) Dir() string { return s.dir }

// Budget is the bytes the LRU's windows may hold (half of MaxMemory).
func (s *Store) Budget() int64 { return s.lru.Budget() }

// MemoryInUse is the bytes the scanned segments in the LRU hold (an
// estimate from their lengths, see windowBytes), those of every Store
// sharing it included.
func (s *Store) MemoryInUse() int64 { return s.lru.InUse() }

// Fresh is the number of summaries computed by scanning since Open.
func (s *Store) Fresh() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fresh
}

// Scans is the number of segment scans since Open.
func (s *Store) Scans() int { return int(s.scans.Load()) }

// Summaries returns every segment's summary, computing the missing ones
// (one scan each, in offset order: each starts from the state the one
// before ends in), and the log's bounds.
func (s *Store) Summaries(ctx context.Context) ([]Summary, Bounds, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.summarize(ctx); err != nil {
		return nil, Bounds{}, err
	}
	out := make([]Summary, len(s.sums))
	for i, x := range s.sums {
		out[i] = *x
	}
	return out, *s.bounds, nil
}

// summarize computes the missing summaries and the bounds; s.mu is held.
func (s *Store) summarize(ctx context.Context) error {
	if err := s.summarizeOnce(ctx); err != nil {
		return err
	}
	// The first window's seed was chosen before the log end was known
	// (firstSeed): when the newest snapshot it took lies past the log
	// end, the broker deletes it (truncateAndReload) and seeds from the
	// one before, and so must every summary, each starting from the
	// state the one before ends in. Only a log truncated below its
	// clean-shutdown snapshot (damage, a copy cut short) pays this
	// second pass; the usual one at the log end costs nothing.
	past := s.seedEnd > 0 && s.seedEnd > s.bounds.LogEndOffset
	s.seedEnd = 0
	if past {
		for k := range s.sums {
			s.sums[k] = nil
		}
		// The bounds are kept until recomputed: firstSeed reads the log
		// end from them.
		s.spanOf, s.runOf, s.opens, s.cursor = nil, nil, nil, nil
		return s.summarizeOnce(ctx)
	}
	return nil
}

// summarizeOnce is summarize's pass over the missing summaries.
func (s *Store) summarizeOnce(ctx context.Context) error {
	changed := false
	// open is the set of transactions open at segment k's start, moved
	// along by each summary's changes from the first one missing.
	var open *openSet
	// b is where the batches before segment k end (prevEnd), carried
	// along: prevEnd walks every summary before k, which summed over a
	// partition of n segments is n²/2.
	b := before{end: math.MinInt64, seed: (&seeder{s: s}).seed}
	for k := range s.segs {
		if s.sums[k] == nil {
			if open == nil {
				open = newOpenSet(0)
				for _, x := range s.sums[:k] {
					open.apply(x)
				}
			}
			x, err := s.summarizeSegment(ctx, k, open, b)
			if err != nil {
				return err
			}
			s.sums[k] = x
			s.fresh++
			changed = true
		}
		if x := s.sums[k]; x.Batches > 0 {
			b.end, b.ok = max(b.end, x.HighOffset), true
		}
	}
	if changed {
		s.opens, s.cursor = nil, nil
	}
	if changed || s.bounds == nil {
		b, err := s.computeBounds(ctx)
		if err != nil {
			return err
		}
		s.bounds = b
		s.saveCache()
	}
	return nil
}

// summarizeSegment scans segment k into its summary, seeded with the part
// of open (the transactions open at its start) its batches need, and
// moves open to the segment's end. Where the replay's order of the
// transactions left open is not the one the changes give (segments that
// overlap), the segment is scanned again seeded with the whole set. b is
// where the batches before it end.
func (s *Store) summarizeSegment(ctx context.Context, k int, open *openSet, b before) (*Summary, error) {
	f := s.segs[k]
	for _, all := range []bool{false, true} {
		var seeded openList
		part := false
		l, damage, err := s.build(ctx, k, k, b, true, func(bs []txnindex.Batch) []txnindex.OngoingTxn {
			if all {
				return open.seed()
			}
			seeded, part = open.touched(bs), true
			return seeded.seed()
		}, nil)
		if err != nil {
			return nil, err
		}
		x := &Summary{Name: f.name, BaseOffset: f.base, Size: f.size, ModTime: f.modTime, Damage: damage}
		ends := summarize(x, l, 0) // the build lists segment k alone
		if !part {
			// Seeded with the whole set, or with the producer
			// snapshot where the segment starts the log.
			open.changes(x, ends)
			return x, nil
		}
		if open.changesOf(x, ends, seeded) {
			return x, nil
		}
	}
	panic("unreachable")
}

// aborted is segment j's entries, read back (from its .txnindex, or the
// cache's encoding of the rebuilt ones) for a summary from the cache
// file. The file is read without s.mu, which only guards the field: two
// windows may both read it, and the first to finish keeps its copy.
func (s *Store) aborted(j int) []txnindex.AbortedTxn {
	s.mu.Lock()
	x := s.sums[j]
	a := x.Aborted
	s.mu.Unlock()
	if a != nil {
		return a
	}
	if x.IndexOnDisk {
		seg := txnindex.Segment{BaseOffset: x.BaseOffset}
		indexFiles(s.dir, &s.segs[j], &seg)
		a = seg.TxnIndex
	} else {
		a, _ = txnindex.ReadTxnIndex(bytes.NewReader(x.AbortedRebuilt), int64(len(x.AbortedRebuilt)))
	}
	if a == nil {
		a = []txnindex.AbortedTxn{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if x.Aborted == nil {
		x.Aborted = a
	}
	return x.Aborted
}

// prevEnd is where the batches before segment k end: the next offset of
// the last segment before k that holds a batch. A segment the cleaner
// emptied (LogCleaner keeps a segment whose every batch it removed) ends
// nothing: a full pass's gap runs from the last batch before it to the
// next batch, and its consumer's position is there. ok is false when no
// segment before k holds a batch: segment k's window then starts the log.
// The summaries of the segments before k are there.
//
// Where segments overlap, it is the highest next offset of any batch
// before k (Summary.HighOffset), not the last segment's: a full pass's
// gaps and its consumer's position both run from the furthest offset the
// batches so far reach (txnindex's findGaps).
func (s *Store) prevEnd(k int) (end int64, ok bool) {
	end = math.MinInt64
	for j := k - 1; j >= 0; j-- {
		x := s.sums[j]
		if x == nil {
			return s.segs[k].base, true
		}
		if x.Batches > 0 {
			end, ok = max(end, x.HighOffset), true
		}
	}
	if !ok {
		return 0, false
	}
	return end, true
}

// cluster is the run of segments j..m around k whose windows are played
// together (runs): k's window replays and plays them from the state
// before j and keeps the decisions of k's batches. The summaries are
// there.
func (s *Store) cluster(k int) (j, m int) {
	r := s.runs()
	return r[k][0], r[k][1]
}

// runs cuts the segments into the runs windows are played by, [j, m] for
// each segment. A run ends where the next segment begins at or above
// where every batch before it reaches (prevEnd), its base offset and its
// batches both: a consumer there has read or skipped every batch before
// (a fetch reads the segment its offset floors to by base offset,
// LogSegments.floorSegment, so it cannot have left one behind), as
// between any two segments of a log written by one leader, where every
// segment is its own run. Where a segment overlaps the ones before (its
// base offset or a batch below where they reach) the run goes on. And a
// run holding a segment whose base offset lies inside the ones before goes
// on to the next segment with batches: a fetch from an offset that floors
// to that segment and finds nothing at or after it there reads on in the
// next segment, leaving the tail of the earlier segment unread, and the
// consumer enters the next segment below where the batches before reach.
// The summaries are there.
func (s *Store) runs() [][2]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runOf != nil {
		return s.runOf
	}
	n := len(s.segs)
	out := make([][2]int, n)
	start, inside := 0, false
	end, any := int64(math.MinInt64), false // where the batches so far reach
	for k := range n {
		x := s.sums[k]
		overlaps := any && (s.segs[k].base < end || x.Batches > 0 && x.LowOffset < end)
		if k > 0 && !overlaps && !inside {
			for i := start; i < k; i++ {
				out[i] = [2]int{start, k - 1}
			}
			start = k
		}
		if any && s.segs[k].base < end {
			inside = true
		} else if inside && !overlaps && x.Batches > 0 {
			inside = false
		}
		if x.Batches > 0 {
			end, any = max(end, x.HighOffset), true
		}
	}
	for i := start; i < n; i++ {
		out[i] = [2]int{start, n - 1}
	}
	s.runOf = out
	return out
}

// computeBounds finds the log's bounds from the summaries, and its LSO
// from the segments holding the high watermark on: every transaction
// either closed below the segment holding the high watermark (so its
// marker is below the high watermark and it is stable) or is seen in that
// window (open at its start, or begun in it), where
// txnindex.Build's computeLSO finds the first unstable one.
func (s *Store) computeBounds(ctx context.Context) (*Bounds, error) {
	n := len(s.segs)
	b := &Bounds{LogStartOffset: s.segs[0].base}
	if s.logStart > b.LogStartOffset {
		b.LogStartOffset = s.logStart
	}
	// The log end is the last batch's next offset (the last in segment
	// order, which where segments overlap need not be the highest), or
	// the last segment's base offset when that is higher (an empty
	// active segment), as txnindex.Build's offsets says.
	b.LogEndOffset = max(b.LogStartOffset, s.segs[n-1].base)
	for k := n - 1; k >= 0; k-- {
		if s.sums[k].Batches > 0 {
			b.LogEndOffset = max(b.LogEndOffset, s.sums[k].LastNextOffset)
			break
		}
	}
	b.HighWatermark = b.LogEndOffset
	if s.hwm >= 0 && s.hwm < b.LogEndOffset {
		b.HighWatermark = s.hwm
	}
	// The LSO is found from the first segment whose batches reach past
	// the high watermark: every transaction closed before it has its
	// marker below the high watermark, so it is stable. In a log written
	// by one leader that is the segment holding the high watermark;
	// where segments overlap, an earlier segment's batches may reach
	// past a later segment's base offset.
	h := n - 1
	for k := range n {
		if s.sums[k].Batches > 0 && s.sums[k].HighOffset > b.HighWatermark {
			h = k
			break
		}
	}
	l, _, err := s.build(ctx, h, n-1, s.before(h), false, func(bs []txnindex.Batch) []txnindex.OngoingTxn {
		return s.openAtLocked(h, bs, false).seed()
	}, nil)
	if err != nil {
		return nil, err
	}
	b.LastStableOffset = l.LastStableOffset
	return b, nil
}

// before is what a build of segments from k on takes from those before
// k: where their batches end (prevEnd; ok false when none holds a batch),
// and the producer snapshot's seed the log start is seeded with then
// (firstSeed).
type before struct {
	end  int64
	ok   bool
	seed func(first int64) []txnindex.OngoingTxn
}

// before is what a build of segments from k on takes from those before.
func (s *Store) before(k int) before {
	end, ok := s.prevEnd(k)
	return before{end: end, ok: ok, seed: s.firstSeed}
}

// build scans segments k..m into a window log seeded with seed(its
// batches), or from the producer snapshot where no batch is before k
// (seed is not called then). b is what it takes from the segments before
// k. With w nil the segments after m are listed without entries (the
// bounds' build, which needs the log's offsets); otherwise with their
// summaries' entries.
//
// alone (a summary's build, w nil) lists segments k..m only, numbered from
// 0: a summary reads the replay of its batches, which reads no segment,
// and its own segment's entries and damage, and nothing of the log's
// offsets, gaps or LSO, which the other segments change (the log start,
// and a gap before the first segment listed). Listing every segment in
// every summary's build cost a partition of n segments n² (12,500 empty
// segments took 21 s).
func (s *Store) build(ctx context.Context, k, m int, b before, alone bool, seed func([]txnindex.Batch) []txnindex.OngoingTxn, w *txnindex.PartitionWindow) (*txnindex.Log, string, error) {
	p := &txnindex.Partition{Topic: s.topic, Partition: s.partition, LogStartOffset: s.logStart, HighWatermark: s.hwm, Window: w}
	if s.hwm >= 0 {
		p.HighWatermarkSource = loader.ReplicationOffsetCheckpoint
	}
	lo, hi := 0, len(s.segs)-1 // the segments listed
	if alone {
		lo, hi = k, m
	}
	p.Segments = make([]txnindex.Segment, hi-lo+1)
	s.listed.Add(int64(len(p.Segments)))
	for j := lo; j <= hi; j++ {
		f := s.segs[j]
		seg := &p.Segments[j-lo]
		seg.Name, seg.BaseOffset, seg.Size = f.name, f.base, f.size
		switch {
		case j >= k && j <= m:
			indexFiles(s.dir, &s.segs[j], seg)
		case j > m && w != nil:
			seg.TxnIndex, seg.TxnIndexOnDisk = s.aborted(j), true
		}
		if w != nil && (j < k || j > m) {
			// The broker's startup reads every segment's .txnindex,
			// those outside the window too (summarised by then; a
			// summary's own build, w nil, holds s.mu).
			s.mu.Lock()
			if x := s.sums[j]; x != nil {
				seg.TxnIndexRejected = x.TxnIndexRejected
			}
			s.mu.Unlock()
		}
	}
	damage := ""
	for j := k; j <= m; j++ {
		f := s.segs[j]
		fh, size, err := loader.OpenRegular(filepath.Join(s.dir, f.name))
		if err != nil {
			return nil, "", err
		}
		// Read through pread windows, not a mapping: a mapped scan keeps
		// every page it touched resident while mapped (see
		// loader.OpenPartitionTail), which would put the whole segment in
		// RSS, past the budget.
		if s.scanHook != nil {
			s.scanHook(j)
		}
		sf, err := loader.NewSegmentContext(ctx, fh, size, f.name, s.crc.Options(s.o.Scan, f.base))
		fh.Close()
		s.scans.Add(1)
		if err != nil {
			return nil, "", err
		}
		for i := range sf.Batches {
			sf.Batches[i].Segment = int32(j - lo)
		}
		sf.BaseOffset = f.base
		p.Segments[j-lo].Damaged = sf.StoppedAt()
		if len(sf.Damage) > 0 && damage == "" {
			damage = sf.Damage[0].Error()
		}
		if j == k {
			p.Batches = sf.Batches
		} else {
			p.Batches = append(p.Batches, sf.Batches...)
		}
	}
	if !b.ok {
		// No batch before segment k (it is the first, or those
		// before it were emptied by the cleaner): the window starts
		// the log, seeded as loader.OpenPartition seeds it.
		first := int64(math.MaxInt64)
		if len(p.Batches) > 0 {
			first = p.Batches[0].BaseOffset
		}
		p.Ongoing = b.seed(first)
	} else {
		p.Ongoing = seed(p.Batches)
		// The offsets not read start after the last batch before
		// this segment: where a segment's tail was cleaned (or a
		// whole segment emptied), the hole up to this segment's first
		// batch is a gap of this window (a full pass decides it with
		// this segment's first batch).
		p.Replay = &txnindex.ReplayReport{Mode: txnindex.ReplaySnapshot, FromOffset: min(s.segs[k].base, b.end), SkippedMaxTimestamp: -1,
			Segments: len(s.segs), SegmentsRead: m - k + 1, Reason: fmt.Sprintf("timeline window of segments %d to %d", k, m)}
	}
	return txnindex.Build(p), damage, nil
}
