package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// TailOptions are what the question asked of OpenPartitionTail needs
// beyond the partition's state at its end.
type TailOptions struct {
	// Position is a consumer position whose offsets must all be decided
	// (diagnose --position); -1 for none.
	Position int64
	// Reasons says that the decisions from Position on are explained
	// (decide --from), not only counted (diagnose --position's lag
	// split): each names its transaction's first offset, which for one
	// open at the position may be below it. The load is then seeded from
	// the newest snapshot at or below Position (the transactions open
	// there are in it, those begun after it are read) instead of reading
	// from Position with the newest one's state, which knows only the
	// transactions still open at its own offset.
	Reasons bool
	// Checkpoints are the checkpoint files of the log directory above
	// the partition, when the caller read them once for all its
	// partitions (diagnose of a log directory); nil reads them. Their
	// damage is then the caller's to report, once.
	Checkpoints *LogDirCheckpoints
	// LastSegment reads the least the LSO, the high watermark and the
	// open transactions need, for a ranking of thousands of partitions
	// and a first view of one (logindex), as the broker's recovery reads
	// from its newest snapshot (loadProducersFromRecords): it seeds from
	// the newest snapshot at or below the last segment's base offset (the
	// one the broker wrote at the last roll; one written at shutdown sits
	// at the log end and would leave nothing to draw), seeds each
	// transaction open in it from its entry (CurrentTxnFirstOffset, so
	// the LSO it pins is exact) instead of reading back to its first
	// offset, and leaves a segment not read that has no .timeindex (a
	// copy of the .log files alone) unread, its largest timestamp unknown
	// (ReplayReport.SkippedMaxTimestamp), instead of reading every
	// segment. The LSO, the high watermark and the open transactions'
	// first offsets are a full replay's; the open transactions' batches
	// before the snapshot's offset, their counts and discard ranges, are
	// not read. Not with a Position: OpenPartitionTail refuses both.
	LastSegment bool
}

// OpenPartitionTail loads a partition directory for a diagnosis of its end
// (the LSO, the open transactions, what aborting them discards) reading
// only what that needs, the way broker recovery does: LogLoader loads the
// newest producer snapshot and replays only the segments after it
// (UnifiedLog.rebuildProducerState → ProducerStateManager.truncateAndReload,
// then loadProducersFromRecords from the snapshot's offset).
//
// It seeds the producer state from the newest clean .snapshot S and scans
// the segments from the one holding S's offset, or, when a transaction
// open in S began earlier in the log, from the one holding that
// transaction's first offset (its batches, records and discard ranges are
// in between), or from the first segment when a transaction open in S
// began before the log start and its producer wrote after it. Inside the
// first segment it reads, it starts at the .index entry at or below that
// offset (S's or the transaction's), as a fetch does, when the batch found
// there checks out. The segments and bytes before are not read; their
// largest timestamp comes from their .timeindex.
//
// The diagnosis equals that of a full replay (OpenPartition) because the
// replay's transaction state is per producer: a transaction open where the
// scan starts and still open at the end, or decided at or above the high
// watermark, was open at S's offset (which is at most the high watermark),
// so it is in S and the scan starts at or before its first offset; every
// other producer's state at the scan start (no transaction open, or one
// that closes before S) yields the same open transactions, LSO and
// coordinator epochs (those of S's entries are the largest any earlier
// marker carried: the broker fences lower ones). Like the broker, it trusts
// the snapshot: damage in the segments not read is not seen.
//
// When the newest snapshot is past the high watermark or the log end (the
// broker deletes one past the log end on startup and loads the one before,
// ProducerStateManager.truncateAndReload), or past a consumer position
// whose decisions are explained (TailOptions.Reasons), the newest one
// at or below them seeds the load (ReplayReport.SnapshotPassed says why the
// newer was passed over). Where no snapshot is usable (none, none clean,
// older than the first batch, none at or below the high watermark or the
// position), or the question needs the whole log (a .swap to complete), it
// loads the partition in full, as OpenPartition does. Either way
// Input.Replay says what was read and why. TailOptions.LastSegment reads
// less, for an answer that is a full replay's in the LSO, the high
// watermark and the open transactions' first offsets only.
func OpenPartitionTail(ctx context.Context, dir string, o ScanOptions, t TailOptions) (*Partition, error) {
	if t.LastSegment && t.Position >= 0 {
		// The offsets from a position must all be decided, and
		// LastSegment leaves the batches of transactions open in the
		// snapshot unread: the two questions cannot be one read.
		return nil, fmt.Errorf("loader: %s: a tail read from the last segment answers no position (%d)", dir, t.Position)
	}
	cps := t.Checkpoints
	var err error
	if cps == nil {
		if cps, err = ReadLogDirCheckpoints(filepath.Dir(filepath.Clean(dir))); err != nil {
			return nil, err
		}
	}
	// While the newest snapshot is past the high watermark or the log
	// end, an older one seeds the load, as the broker, which deletes one
	// past the log end, loads the one before: three tries bound both.
	var p *Partition
	var why string
	next := &snapshotBound{logEnd: -1, hwm: -1}
	for try := 0; next != nil; try++ {
		var w string
		if p, w, next, err = openTail(ctx, dir, cps, o, t, *next); err != nil {
			return nil, err
		}
		switch {
		case why == "":
			why = w
		case w != "":
			why += ", and " + w
		default:
			why = ""
		}
		if try == 2 {
			break
		}
	}
	if why != "" {
		if p, err = openPartition(ctx, dir, cps, o); err != nil {
			return nil, err
		}
		r := &txnindex.ReplayReport{Mode: txnindex.ReplayFull, Reason: why, SkippedMaxTimestamp: -1, Segments: len(p.Segments)}
		for i, s := range p.Segments {
			if i == 0 {
				r.FromOffset = s.Log.BaseOffset
			}
			r.Bytes += s.Log.Size
		}
		r.SegmentsRead, r.BytesRead = r.Segments, r.Bytes
		p.Input.Replay = r
	}
	if t.Checkpoints == nil {
		p.Damage = append(p.Damage, cps.Damage...)
	}
	return p, nil
}

// snapshotBound is which producer snapshots openTail may seed from: none
// past logEnd (they are the broker's to delete on startup) or hwm (-1:
// any). passed says why the newest was passed over.
type snapshotBound struct {
	logEnd, hwm int64
	passed      string
}

// openTail is OpenPartitionTail's seeded load; a non-empty reason instead
// of a partition says why it cannot be used, and next, when not nil, which
// older snapshots another attempt may seed from (the newest was past the
// high watermark or the log end). Its steps: the snapshot to seed from
// (tailSeed), where the scan begins (tailStart), the scan (tailScan).
func openTail(ctx context.Context, dir string, cps *LogDirCheckpoints, o ScanOptions, t TailOptions, b snapshotBound) (*Partition, string, *snapshotBound, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", nil, err
	}
	topic, num, kind, err := ParsePartitionDir(filepath.Base(filepath.Clean(dir)))
	if err != nil {
		return nil, "", nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", nil, err
	}
	p := &Partition{
		Dir: dir, DirKind: kind, Checkpoints: cps, RecoveryPoint: -1, CleanerOffset: -1,
		Input: &txnindex.Partition{Topic: topic, Partition: num, LogStartOffset: -1, HighWatermark: -1},
	}
	l := p.list(ents)
	if len(l.bases) == 0 {
		return nil, "no segment", nil, nil
	}
	for _, b := range l.bases {
		if l.segs[b].hasSwap {
			return nil, "a .swap segment, which the broker completes on startup", nil, nil
		}
	}
	sd, s, passed, why, err := p.tailSeed(dir, l, t, b)
	if err != nil || why != "" {
		return nil, why, nil, err
	}
	first, why, err := firstBatchOffset(dir, l)
	if err != nil || why != "" {
		return nil, why, nil, err
	}
	if s.Offset < first {
		return nil, fmt.Sprintf("the newest producer snapshot %s is older than the first batch, at offset %d", s.Name, first), nil, nil
	}
	if v, ok := cps.ReplicationOffset.Lookup(topic, num); ok && s.Offset > v {
		why := fmt.Sprintf("the newest producer snapshot %s is past the high watermark %d", s.Name, v)
		return nil, why, &snapshotBound{logEnd: b.logEnd, hwm: v, passed: fmt.Sprintf("the newer %s is past the high watermark %d", s.Name, v)}, nil
	}
	st, why, err := tailStart(dir, l, s, first, t)
	if err != nil || why != "" {
		return nil, why, nil, err
	}
	st.r.SnapshotPassed = passed
	if why, err := p.tailScan(ctx, dir, l, o, st); err != nil || why != "" {
		return nil, why, nil, err
	}
	if t.LastSegment {
		// The transactions open in s that began before the first batch
		// read are seeded from it, as the broker's recovery seeds them
		// (loadFromSnapshot); its entries give the coordinator epochs
		// up to its offset, the markers read those after.
		(&SnapshotSeed{Snapshot: s}).Apply(p.Input, st.r.FromOffset)
	} else {
		sd.Apply(p.Input, first)
	}
	if err := p.loadPartitionFiles(dir); err != nil {
		return nil, "", nil, err
	}
	p.applyCheckpoints()
	leo := l.bases[len(l.bases)-1]
	if n := len(p.Input.Batches); n > 0 {
		leo = max(leo, p.Input.Batches[n-1].NextOffset())
	}
	if n := p.Snapshot; n != s && n.Offset > leo {
		// The newest, which gives the coordinator epochs, is one the
		// broker deletes (past the high watermark and the log end).
		why := fmt.Sprintf("the newest producer snapshot %s is past the log end offset %d, so the broker deletes it on startup", n.Name, leo)
		return nil, why, &snapshotBound{logEnd: leo, hwm: b.hwm, passed: b.passed}, nil
	}
	if s.Offset > leo {
		// The broker deletes it (truncateAndReload) and loads the one
		// before: the full load does the same.
		why := fmt.Sprintf("the newest producer snapshot %s is past the log end offset %d, so the broker deletes it on startup", s.Name, leo)
		return nil, why, &snapshotBound{logEnd: leo, hwm: b.hwm, passed: fmt.Sprintf("the newer %s is past the log end offset %d, so the broker deletes it on startup", s.Name, leo)}, nil
	}
	p.Input.Replay = st.r
	return p, "", nil, nil
}

// tailSeed chooses the snapshot the tail's scan starts from
// (SeedSnapshots): the newest the broker keeps that decodes cleanly, or,
// past a bound, the newest at or below it; why says why there is none.
// The newest clean one stays p.Snapshot: it gives the coordinator epochs
// and the transactions open before the log start, as in the full load.
// passed says why a newer one was passed over.
func (p *Partition) tailSeed(dir string, l dirListing, t TailOptions, b snapshotBound) (sd *SnapshotSeed, s *ProducerSnapshot, passed, why string, err error) {
	// The snapshots the broker deletes on startup (SnapshotsKept) seed
	// nothing. The log end is not known before the scan: the newest stray
	// snapshot past it is found after it (openTail).
	logStart := l.bases[0]
	if v, ok := p.Checkpoints.logStart(p.Input.Topic, p.Input.Partition); ok && v > logStart {
		logStart = v
	}
	o := SeedOptions{Bases: l.bases, LogStart: logStart, LogEnd: b.logEnd, AtMost: -1, Every: true}
	sd, err = SeedSnapshots(dir, l.snapshots, o)
	if err != nil {
		return nil, nil, "", "", err
	}
	p.takeSeed(sd)
	s = sd.Snapshot
	// A snapshot past the high watermark is not the broker's to delete,
	// only not this load's to start from; nor is one past a consumer
	// position whose decisions are explained (Reasons: decide --from),
	// which name each transaction open there with its first offset: the
	// transactions open at the snapshot's offset are in it, those begun
	// between it and the position are read. The newest at or below both
	// seeds the load.
	limit, none := b.hwm, "no older snapshot at or below it decodes cleanly"
	passed = b.passed
	if q := t.Position; q >= 0 && t.Reasons && (limit < 0 || q < limit) {
		limit, none = q, fmt.Sprintf("no producer snapshot at or below the position %d decodes cleanly", q)
		if s != nil && s.Offset > q {
			passed = fmt.Sprintf("the newer %s is past the position %d", s.Name, q)
		}
	}
	if last := l.bases[len(l.bases)-1]; t.LastSegment && (limit < 0 || last < limit) {
		limit, none = last, fmt.Sprintf("no producer snapshot at or below the last segment's base offset %d decodes cleanly", last)
		if s != nil && s.Offset > last {
			passed = fmt.Sprintf("the newer %s is past the last segment's base offset %d", s.Name, last)
		}
	}
	if limit >= 0 && s != nil && s.Offset > limit {
		o.AtMost, o.Every = limit, false
		below, err := SeedSnapshots(dir, l.snapshots, o)
		if err != nil {
			return nil, nil, "", "", err
		}
		switch s = below.Snapshot; {
		case s == nil && len(below.Kept) == 0:
			return nil, nil, "", strings.TrimSuffix(none, " decodes cleanly"), nil
		case s == nil:
			return nil, nil, "", none, nil
		}
	}
	switch {
	case s == nil && len(p.Snapshots) > 0:
		return nil, nil, "", fmt.Sprintf("no producer snapshot decodes cleanly (%d damaged)", len(p.Snapshots)), nil
	case s == nil && len(sd.Deleted) > 0:
		d := sd.Deleted[len(sd.Deleted)-1]
		return nil, nil, "", fmt.Sprintf("every producer snapshot is one the broker deletes on startup (%s: %s)", d.Name, d.Reason), nil
	case s == nil:
		return nil, nil, "", "no producer snapshot (.snapshot file) in the partition directory", nil
	case s.Offset < 0:
		return nil, nil, "", fmt.Sprintf("the producer snapshot %s has no offset in its name", s.Name), nil
	}
	return sd, s, passed, "", nil
}

// tailRead is where the tail's scan begins and what it reads: the
// report it makes (r), the listing of the segments it scans (rl) and the
// segments before them, left unread (skip); untimed leaves one without a
// .timeindex unread all the same (TailOptions.LastSegment).
type tailRead struct {
	r       *txnindex.ReplayReport
	rl      dirListing
	skip    []int64
	untimed bool
}

// tailStart finds where the scan seeded from s begins: full is where every
// batch is read (s's offset, or a consumer position below it); before it,
// only the transactions open in s that began before it are read
// (spanScan), from the first offset of each, or from the log start for one
// that began before it and has data after. why, instead, says why every
// segment must be read.
func tailStart(dir string, l dirListing, s *ProducerSnapshot, first int64, t TailOptions) (tailRead, string, error) {
	// The lag split (diagnose --position) decides every offset from the
	// position on, as a read_committed consumer fetching from there: the
	// batches from the one holding it, and the aborted transactions the
	// broker collects for such a fetch, from the .txnindex of the segment
	// holding it and the later ones (UnifiedLog.collectAbortedTransactions).
	// With Reasons the snapshot is at or below the position already.
	full, why := s.Offset, fmt.Sprintf("the producer snapshot %s has no transaction open from before its offset %d", s.Name, s.Offset)
	if t.LastSegment {
		why = fmt.Sprintf("the LSO, the high watermark and the open transactions depend on nothing before the producer snapshot %s's offset %d; the transactions open in it are seeded from it", s.Name, s.Offset)
	}
	if s.Offset <= first {
		// At the first segment's base (the log start, which only a broker
		// that has not restarted since retention moved it there keeps,
		// SnapshotsKept; or, with tiered storage, the first local offset):
		// the transactions open in it began before any segment to read.
		why = fmt.Sprintf("the producer snapshot %s is at the first segment's base offset %d", s.Name, first)
	}
	if p := t.Position; p >= 0 && p < full {
		full, why = p, fmt.Sprintf("every offset from the position %d on is decided", p)
	}
	from := full
	keep := map[txnindex.ProducerID]int64{}
	for _, e := range s.Entries {
		g := e.CurrentTxnFirstOffset
		if g < 0 || g >= full || t.LastSegment {
			continue
		}
		switch {
		case g >= first:
			keep[e.ProducerID] = g
			if g < from {
				from, why = g, fmt.Sprintf("producer %d's transaction, open in the producer snapshot %s, began at offset %d", e.ProducerID, s.Name, g)
			}
		case e.LastOffset >= first:
			keep[e.ProducerID] = first
			if first < from {
				from, why = first, fmt.Sprintf("producer %d's transaction, open in the producer snapshot %s, began at offset %d, before the log start, and has data up to offset %d", e.ProducerID, s.Name, g, e.LastOffset)
			}
		}
	}
	k := sort.Search(len(l.bases), func(i int) bool { return l.bases[i] > from }) - 1
	if k <= 0 {
		return tailRead{}, fmt.Sprintf("%s; offset %d is in the first segment, so every segment is read", why, from), nil
	}
	r := &txnindex.ReplayReport{Mode: txnindex.ReplaySnapshot, Snapshot: s.Name, FromOffset: l.bases[k], Segments: len(l.bases),
		SegmentsRead: len(l.bases) - k, SkippedMaxTimestamp: -1, Reason: why}
	// Inside the segment holding from, the scan begins at its .index
	// entry at or below from, as a fetch from that offset would
	// (OffsetIndex.lookup, then a walk forward): the batches before it
	// are not needed either. Their largest timestamp is the segment's,
	// the last entry of its .timeindex.
	var start int64
	if from > l.bases[k] {
		if pos, base := indexFloor(dir, l.segs[l.bases[k]], from); pos > 0 {
			ts, why, err := segmentMaxTimestamp(dir, l.segs[l.bases[k]])
			if err != nil {
				return tailRead{}, "", err
			}
			if why == "" {
				start, r.FromOffset = pos, base
				r.SkippedMaxTimestamp = max(r.SkippedMaxTimestamp, ts)
			}
		}
	}
	// Every batch is read from the .index entry at or below full (or the
	// start of the segment holding it); the span before it only for the
	// transactions in keep.
	rl := dirListing{segs: l.segs, bases: l.bases[k:], from: start}
	if from < full {
		kf := sort.Search(len(l.bases), func(i int) bool { return l.bases[i] > full }) - 1
		// everyFrom is the base offset of the batch at fullPos.
		fullPos, everyFrom := int64(0), l.bases[kf]
		if full > everyFrom {
			fullPos, everyFrom = indexFloor(dir, l.segs[l.bases[kf]], full)
		}
		if kf > k || fullPos > start {
			rl.span, rl.fullBase, rl.fullPos = newSpanScan(keep), l.bases[kf], fullPos
			r.EveryBatchFrom = everyFrom
			for pid := range keep {
				r.SpanProducers = append(r.SpanProducers, pid)
			}
			slices.Sort(r.SpanProducers)
		}
	}
	return tailRead{r: r, rl: rl, skip: l.bases[:k], untimed: t.LastSegment}, "", nil
}

// tailScan reads what st says into p: the sizes and largest timestamps of
// the segments skipped, and the scan of the others; why says why it
// cannot be used after all (a skipped segment with no .timeindex).
func (p *Partition) tailScan(ctx context.Context, dir string, l dirListing, o ScanOptions, st tailRead) (string, error) {
	r, rl := st.r, st.rl
	// As broker recovery does, CRCs are checked only in the segments
	// from the recovery point on: the flushed ones are trusted, like
	// the snapshot.
	// After a clean shutdown (the marker still in the log directory)
	// the broker recovers no segment at all.
	rl.crc = NewServedCRCs(p.Checkpoints, p.Input.Topic, p.Input.Partition, l.bases)
	rl.crc.trusted = true
	var skipped []*SegmentFiles
	for _, b := range st.skip {
		sf, why, err := p.skipSegment(dir, l.segs[b], r, st.untimed)
		if err != nil || why != "" {
			return why, err
		}
		if why, err := recoveredIntact(ctx, dir, l.segs[b], rl.crc, o); err != nil || why != "" {
			return why, err
		}
		skipped = append(skipped, sf)
	}
	if rl.crc.clean && o.VerifyCRC {
		r.CleanShutdown = true
	} else if o.VerifyCRC {
		for _, b := range rl.bases {
			if rl.crc.below(b) {
				r.CRCFrom = rl.crc.recoveryPoint
			}
		}
	}
	p.keepSpare = true
	ndamage, nignored := len(p.Damage), len(p.Ignored)
	loaded, err := p.scanSegments(ctx, dir, rl, o)
	if errors.Is(err, errSpanWhole) {
		// The span holds what a full replay counts and keeping the open
		// transactions' batches alone would lose (the cleaner's marks):
		// it is read whole, as the segments from its start always are.
		p.Damage, p.Ignored = p.Damage[:ndamage], p.Ignored[:nignored]
		rl.span, r.EveryBatchFrom, r.SpanProducers = nil, 0, nil
		loaded, err = p.scanSegments(ctx, dir, rl, o)
	}
	if err != nil {
		return "", err
	}
	for _, sf := range loaded {
		r.Bytes += sf.Log.Size
		r.BytesRead += sf.Log.Size - sf.Log.Start
		// Damage a restart recovers below where every batch is read:
		// the transactions its truncation reopens may have closed
		// before the snapshot, which lists only those open at it.
		if d := sf.Log.StoppedAt(); d != nil && d.Offset < r.EveryFrom() && rl.crc.recovered(sf.Log.BaseOffset) {
			return truncatedWhy(sf.Log.Name, rl.crc.recoveryPoint, d), nil
		}
	}
	if rl.span != nil {
		r.SkippedMaxTimestamp = max(r.SkippedMaxTimestamp, rl.span.maxTS)
	}
	p.Segments = append(skipped, loaded...)
	p.assemble()
	return "", nil
}

// skipSegment is a segment left unread: its size, and its largest
// timestamp, the last .timeindex entry, into r; untimed leaves it out
// when the .timeindex does not give it.
func (p *Partition) skipSegment(dir string, s *segFiles, r *txnindex.ReplayReport, untimed bool) (*SegmentFiles, string, error) {
	path := filepath.Join(dir, s.log)
	st, err := os.Lstat(path)
	if err != nil {
		return nil, "", err
	}
	out := &SegmentFiles{Log: &SegmentFile{Name: s.log, BaseOffset: s.base, Size: st.Size(), ValidBytes: st.Size(), path: path}}
	r.Bytes += st.Size()
	if err := p.skippedTxnIndex(dir, s, out); err != nil {
		return nil, "", err
	}
	if st.Size() == 0 {
		return out, "", nil
	}
	ts, why, err := segmentMaxTimestamp(dir, s)
	switch {
	case err != nil:
		return nil, "", err
	case why != "" && untimed:
		return out, "", nil
	case why != "":
		return nil, why, nil
	}
	r.SkippedMaxTimestamp = max(r.SkippedMaxTimestamp, ts)
	return out, "", nil
}

// skippedTxnIndex reads the .txnindex of a segment left unread for an
// entry whose version Kafka refuses: a fetch from the tail never consults
// it, but the broker's startup reads every segment's
// (LogSegment.sanityCheck, where the .index exists) and fails on it. The
// file's damage is reported as a whole load reports it.
func (p *Partition) skippedTxnIndex(dir string, s *segFiles, out *SegmentFiles) error {
	if s.index == "" || s.txn == "" {
		return nil // none, or the segment is recovered and its .txnindex rebuilt
	}
	var x *TxnIndexFile
	err := withFile(filepath.Join(dir, s.txn), func(fh *os.File, size int64) (err error) {
		x, err = ReadTxnIndexFile(fh, size, s.txn, s.base)
		return err
	})
	if err := p.damage(err); err != nil {
		return err
	}
	out.txnRejected = x.BrokerRefuses()
	return nil
}

// recoveredIntact says why the tail cannot be read when segment s,
// which it leaves unread, is damaged and a restart after an unclean
// shutdown recovers it: LogLoader.recoverLog truncates the log at the
// damage and deletes every later segment, and what that takes (the
// transactions whose markers it holds, open again) only a replay from
// before the damage knows. Reading the whole log then says it
// (txnindex.Log.RecoveryTruncation). A broker's recovery point lies in its
// active segment unless it has not flushed since the segments before it
// rolled, so this reads no segment in the common case. A read without
// VerifyCRC does not look.
func recoveredIntact(ctx context.Context, dir string, s *segFiles, c ServedCRCs, o ScanOptions) (string, error) {
	if !c.recovered(s.base) || !o.VerifyCRC {
		// A read of batch headers only (a log directory's index) checks
		// no CRC in what it reads either: it answers a quick question,
		// and the partition's own page reads it with CRCs.
		return "", nil
	}
	name := s.log
	if s.hasSwap {
		name = s.swapLog
	}
	fh, size, err := openInside(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	defer fh.Close()
	f, err := NewSegmentContext(ctx, fh, size, name, DefaultScanOptions)
	if err != nil {
		return "", err
	}
	if d := f.StoppedAt(); d != nil {
		return truncatedWhy(name, c.recoveryPoint, d), nil
	}
	return "", nil
}

// truncatedWhy is the replay's reason for reading every segment when
// segment name, which a restart recovers, is damaged at d.
func truncatedWhy(name string, rp int64, d *txnindex.SegmentDamage) string {
	return fmt.Sprintf("%s, which a restart after an unclean shutdown recovers (the recovery point is %d), is damaged at byte %#x: that restart truncates the log at offset %d", name, rp, d.Position, d.Offset)
}
