package txnindex

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
)

// TxnState is what became of a transaction.
type TxnState uint8

// Transaction outcomes.
const (
	TxnOpen TxnState = iota
	TxnCommitted
	TxnAborted
)

// String returns "open", "committed" or "aborted".
func (s TxnState) String() string {
	switch s {
	case TxnCommitted:
		return "committed"
	case TxnAborted:
		return "aborted"
	}
	return "open"
}

// Txn is one transaction of one producer on this partition, as the broker's
// producer state sees it: it opens at the producer's first transactional data
// batch and ends at the producer's next COMMIT or ABORT marker.
type Txn struct {
	ProducerID     ProducerID
	ProducerEpoch  int16 // epoch of the first data batch
	MarkerEpoch    int16 // epoch of the marker; KIP-890 (TV2) markers carry epoch+1
	State          TxnState
	Seeded         bool  // opened by Partition.Ongoing (a producer snapshot), not by a batch seen here
	FirstOffset    int64 // first offset of the transaction's data
	LastDataOffset int64 // last offset of its data seen here
	MarkerOffset   int64 // offset of the COMMIT/ABORT marker; -1 while open
	FirstTimestamp int64
	LastTimestamp  int64 // max timestamp of its last batch (the producer state's lastTimestamp)
	Batches        int
	Records        int64
	Bytes          int64
	FirstBatch     int32 // index in Log.Batches of its first data batch; -1 when seeded
	MarkerBatch    int32 // index in Log.Batches of its marker; -1 while open

	// Entry is the aborted-transaction index entry the broker serves for
	// this transaction (from disk when the segment's .txnindex was read,
	// else rebuilt); nil unless aborted.
	Entry *AbortInfo
}

// AbortInfo is one aborted-transaction entry the broker would serve, with
// where it lives.
type AbortInfo struct {
	Entry       AbortedTxn
	Segment     int32  // index of the segment whose .txnindex holds it
	IndexName   string // e.g. "00000000000000000100.txnindex"
	FromDisk    bool   // read from the segment's .txnindex, not rebuilt
	Txn         *Txn   // the replayed transaction it closes, if one was seen
	MarkerFound bool
}

// Producer summarises one producer id's batches on the partition.
type Producer struct {
	ID            ProducerID
	FirstEpoch    int16
	LastEpoch     int16
	Transactional bool
	FirstOffset   int64
	LastOffset    int64
	LastTimestamp int64
	Batches       int
	Txns          int
}

// GapCause says why offsets are missing from the log.
type GapCause uint8

// Causes of missing offsets, as far as they can be known offline.
const (
	GapUnknown GapCause = iota
	// GapCompacted: offsets missing between two batches of one segment.
	// Only the log cleaner removes batches from the middle of a segment;
	// this includes markers removed once their delete horizon passed
	// (KIP-534) and aborted data the cleaner discarded.
	GapCompacted
	// GapSegmentBoundary: the next segment starts after the previous one's
	// last batch ended (its tail was cleaned, or a segment is missing).
	GapSegmentBoundary
	// GapEmptiedBatch: a batch kept as an empty header (recordsCount 0) by
	// the cleaner; its offsets hold no record.
	GapEmptiedBatch
	// GapBeforeFirstBatch: between the log start offset and the first batch.
	GapBeforeFirstBatch
	// GapOverlap: a batch starts below the end of the previous one, which a
	// broker never writes (a bad copy, or segments from two replicas).
	GapOverlap
)

// String names the cause.
func (c GapCause) String() string {
	switch c {
	case GapCompacted:
		return "compacted"
	case GapSegmentBoundary:
		return "segment_boundary"
	case GapEmptiedBatch:
		return "emptied_batch"
	case GapBeforeFirstBatch:
		return "before_first_batch"
	case GapOverlap:
		return "overlap"
	}
	return "unknown"
}

// Gap is a range of offsets [From, To] absent from the log.
type Gap struct {
	From, To int64
	Cause    GapCause
	Segment  int32 // segment it was found in, -1 if between segments
}

// MismatchKind classifies a difference between a .txnindex read from disk and
// the one rebuilt from the log.
type MismatchKind uint8

// Mismatch kinds.
const (
	MissingOnDisk MismatchKind = iota // the log has an aborted transaction the file lacks
	ExtraOnDisk                       // the file has an entry the log does not explain
	FieldsDiffer                      // same producer and marker, other offsets
)

// String names the kind.
func (k MismatchKind) String() string {
	switch k {
	case MissingOnDisk:
		return "missing_on_disk"
	case ExtraOnDisk:
		return "extra_on_disk"
	}
	return "fields_differ"
}

// IndexMismatch is one entry-level difference between disk and rebuilt index.
type IndexMismatch struct {
	Segment int32
	Kind    MismatchKind
	Disk    AbortedTxn // zero for MissingOnDisk
	Rebuilt AbortedTxn // zero for ExtraOnDisk
	Note    string     // a known benign cause, if one applies
}

// Log is a partition as the broker holds it: the batches, the transactions
// replayed from them, the aborted-transaction index of every segment, and
// the offsets that bound reads. Build makes one; it is read-only afterwards
// and safe for concurrent use.
type Log struct {
	Topic     string
	Partition int32
	Segments  []Segment
	Batches   []Batch

	LogStartOffset      int64
	LogEndOffset        int64
	HighWatermark       int64
	HighWatermarkSource string
	LastStableOffset    int64

	// Txns are the transactions in order of first offset; Open indexes the
	// ones still undecided at the end of the log.
	Txns      []Txn
	Open      []int
	Producers []Producer

	// RebuiltIndex is, per segment, the .txnindex the broker would have
	// written for these batches. Mismatches compares it with the files
	// read from disk.
	RebuiltIndex [][]AbortedTxn
	Mismatches   []IndexMismatch
	Gaps         []Gap

	// Refused counts the batches Build left out of Batches: every batch
	// from the first one whose offsets no log can hold (a negative base
	// offset or lastOffsetDelta, or a last offset whose next offset
	// overflows int64), and RefusedReason says why. The loaders refuse such
	// a batch with a positional error before it gets here; this guards the
	// offsets arithmetic (log end offset, gaps, counts) against batches
	// assembled any other way.
	Refused       int
	RefusedReason string

	// Fetches, for a log assembled from a capture, are the exchanges it
	// came from: the broker's own LSO, high watermark and aborted lists,
	// which Diagnose prefers to what the captured batches alone imply
	// (a read_committed fetch never returns the batches that pin the LSO).
	Fetches []CapturedFetch

	// Snapshot is the producer-state snapshot the replay was seeded from
	// (Partition.Snapshot); nil when none.
	Snapshot *SnapshotInfo

	// txnsOf lists, per producer, its transactions' indexes in Txns in
	// order of FirstBatch: TxnOf finds a batch's transaction by binary
	// search there, which costs 4 bytes per transaction instead of an index
	// of 4 bytes per batch (a Batch is 64 bytes, and a batch kept for the
	// timeline costs no more than that).
	txnsOf     map[ProducerID][]int32
	segFirst   []int             // per segment: index of its first batch in Batches (len Segments+1)
	offIndex   [][]IndexEntry    // per segment: .index entries from disk, nil when rebuilt
	rebuiltOff []lazyOffsetIndex // per segment: the rebuilt .index, when offIndex is nil
	effective  [][]AbortInfo     // per segment: the entries fetches use
	effSorted  []bool            // per segment: effective entries sorted by marker offset, as Kafka appends them
	abortByID  map[abortKey]*AbortInfo
}

type abortKey struct {
	pid   ProducerID
	first int64
}

// indexIntervalBytes is the broker default index.interval.bytes; a rebuilt
// .index gets an entry whenever more than this many bytes were appended
// since the last one (LogSegment.recover).
const indexIntervalBytes = 4096

// Build replays p's batches the way the broker's producer state does and
// returns the resulting Log. p's slices are shared, not copied. Batches
// from the first one with unusable offsets on are left out (Log.Refused).
func Build(p *Partition) *Log {
	l := &Log{
		Topic:               p.Topic,
		Partition:           p.Partition,
		Segments:            p.Segments,
		Batches:             p.Batches,
		HighWatermarkSource: p.HighWatermarkSource,
	}
	if i, why := firstUnusable(l.Batches); i >= 0 {
		l.Batches, l.Refused, l.RefusedReason = l.Batches[:i:i], len(l.Batches)-i, why
	}
	if len(l.Segments) == 0 {
		// A capture or a bare batch list: one pseudo-segment.
		base := int64(0)
		if len(l.Batches) > 0 {
			base = l.Batches[0].BaseOffset
		}
		l.Segments = []Segment{{Name: "batches", BaseOffset: base}}
		for i := range l.Batches {
			l.Batches[i].Segment = 0
		}
	}
	l.indexSegments()
	l.offsets(p)
	l.replay(p.Ongoing)
	l.applySnapshot(p)
	l.buildIndexes()
	l.computeLSO()
	l.findGaps()
	return l
}

// firstUnusable returns the index of the first batch whose offsets break
// what the offset arithmetic here relies on, with the reason, or -1.
func firstUnusable(bs []Batch) (int, string) {
	for i := range bs {
		b := &bs[i]
		d := int64(b.LastOffsetDelta())
		switch {
		case b.BaseOffset < 0:
			return i, fmt.Sprintf("batch %d: base offset %d is negative", i, b.BaseOffset)
		case d < 0:
			return i, fmt.Sprintf("batch %d at offset %d: last offset delta %d is negative", i, b.BaseOffset, d)
		case b.BaseOffset > math.MaxInt64-1-d:
			return i, fmt.Sprintf("batch %d: base offset %d + last offset delta %d overflows int64", i, b.BaseOffset, d)
		}
	}
	return -1, ""
}

// indexSegments maps each segment to its range of batches.
func (l *Log) indexSegments() {
	l.segFirst = make([]int, len(l.Segments)+1)
	bi := 0
	for si := range l.Segments {
		l.segFirst[si] = bi
		for bi < len(l.Batches) && int(l.Batches[bi].Segment) <= si {
			bi++
		}
	}
	l.segFirst[len(l.Segments)] = len(l.Batches)
}

func (l *Log) offsets(p *Partition) {
	l.LogStartOffset = l.Segments[0].BaseOffset
	if p.LogStartOffset > l.LogStartOffset {
		l.LogStartOffset = p.LogStartOffset
	}
	l.LogEndOffset = l.LogStartOffset
	if n := len(l.Batches); n > 0 && l.Batches[n-1].NextOffset() > l.LogEndOffset {
		l.LogEndOffset = l.Batches[n-1].NextOffset()
	}
	if last := l.Segments[len(l.Segments)-1].BaseOffset; last > l.LogEndOffset {
		// An empty active segment rolled at its base offset.
		l.LogEndOffset = last
	}
	l.HighWatermark = p.HighWatermark
	switch {
	case l.HighWatermark < 0:
		l.HighWatermark = l.LogEndOffset
		if l.HighWatermarkSource == "" {
			l.HighWatermarkSource = "log_end_offset"
		}
	case l.HighWatermark > l.LogEndOffset:
		// A checkpoint ahead of the log (a truncated copy): the broker
		// would truncate its HWM to the LEO on load.
		l.HighWatermark = l.LogEndOffset
		l.HighWatermarkSource += " (clamped to log end offset)"
	}
}

// replay runs ProducerAppendInfo's state machine over every batch and
// rebuilds each aborted transaction's index entry with the LSO Kafka records.
func (l *Log) replay(seed []OngoingTxn) {
	l.txnsOf = make(map[ProducerID][]int32)
	l.RebuiltIndex = make([][]AbortedTxn, len(l.Segments))

	// Every transaction but the ones still open at the end is closed by
	// one end-transaction marker, so counting markers sizes Txns once
	// (growing it by doubling first-touches twice its memory).
	markers := 0
	for i := range l.Batches {
		if l.Batches[i].IsEndTxnMarker() {
			markers++
		}
	}
	l.Txns = make([]Txn, 0, markers+len(seed)+64)

	// One map lookup per batch: a producer's entry in Producers (-1 until
	// it is seen in a batch; seeds come from a snapshot) and its open
	// transaction (the producer state's currentTxnFirstOffset), -1 if none.
	type pstate struct{ prod, open int32 }
	var ps []pstate
	states := make(map[ProducerID]int32)
	state := func(pid ProducerID) int32 {
		k, ok := states[pid]
		if !ok {
			ps = append(ps, pstate{-1, -1})
			k = int32(len(ps) - 1)
			states[pid] = k
		}
		return k
	}

	// ongoing is ProducerStateManager.ongoingTxns: undecided transactions
	// ordered by first offset. Transactions open in offset order, so
	// appending keeps it sorted; decided ones are skipped lazily from head.
	ongoing := make([]int32, 0, cap(l.Txns))
	head := 0
	firstUndecided := func(except ProducerID) (int64, bool) {
		for head < len(ongoing) && l.Txns[ongoing[head]].State != TxnOpen {
			head++
		}
		for i := head; i < len(ongoing); i++ {
			t := &l.Txns[ongoing[i]]
			if t.State == TxnOpen && t.ProducerID != except {
				return t.FirstOffset, true
			}
		}
		return 0, false
	}

	seeded := append([]OngoingTxn(nil), seed...)
	sort.SliceStable(seeded, func(i, j int) bool { return seeded[i].FirstOffset < seeded[j].FirstOffset })
	for _, s := range seeded {
		st := &ps[state(s.ProducerID)]
		if st.open >= 0 {
			continue
		}
		l.Txns = append(l.Txns, Txn{
			ProducerID: s.ProducerID, ProducerEpoch: s.ProducerEpoch, MarkerEpoch: -1,
			Seeded: true, FirstOffset: s.FirstOffset, LastDataOffset: -1, MarkerOffset: -1,
			FirstTimestamp: -1, LastTimestamp: -1, FirstBatch: -1, MarkerBatch: -1,
		})
		st.open = int32(len(l.Txns) - 1)
		ongoing = append(ongoing, st.open)
		l.txnsOf[s.ProducerID] = append(l.txnsOf[s.ProducerID], st.open)
	}

	lastPID, lastState := NoProducerID, int32(-1)
	for i := range l.Batches {
		b := &l.Batches[i]
		if !b.HasProducerID() {
			continue
		}
		if b.ProducerID != lastPID || lastState < 0 {
			lastPID, lastState = b.ProducerID, state(b.ProducerID)
		}
		st := &ps[lastState]
		if st.prod < 0 {
			l.Producers = append(l.Producers, Producer{ID: b.ProducerID, FirstEpoch: b.ProducerEpoch, FirstOffset: b.BaseOffset})
			st.prod = int32(len(l.Producers) - 1)
		}
		pr := &l.Producers[st.prod]
		pr.LastEpoch, pr.LastOffset, pr.Batches = b.ProducerEpoch, b.LastOffset(), pr.Batches+1
		if b.MaxTimestamp > pr.LastTimestamp || pr.Batches == 1 {
			pr.LastTimestamp = b.MaxTimestamp
		}
		if b.IsTransactional() {
			pr.Transactional = true
		}

		if b.IsControl() {
			// ProducerAppendInfo.append: a control batch with no records
			// (emptied by the cleaner) is ignored entirely; otherwise only
			// its first record is read as an end-transaction marker.
			if b.Records == 0 || !b.IsEndTxnMarker() {
				continue
			}
			ti := st.open
			if ti < 0 {
				// A marker for an empty transaction: nothing is emitted,
				// so no index entry and no effect on the LSO.
				continue
			}
			st.open = -1
			t := &l.Txns[ti]
			t.MarkerOffset, t.MarkerEpoch, t.MarkerBatch = b.BaseOffset, b.ProducerEpoch, int32(i)
			if b.IsAbortMarker() {
				t.State = TxnAborted
			} else {
				t.State = TxnCommitted
			}
			// ProducerStateManager.lastStableOffset(completedTxn): the
			// first undecided transaction of another producer, else the
			// offset after the marker. Computed before t leaves ongoing,
			// but t's own producer is excluded, so marking it decided
			// first is equivalent.
			lso, found := firstUndecided(b.ProducerID)
			if !found {
				lso = b.BaseOffset + 1
			}
			if t.State == TxnAborted {
				seg := b.Segment
				l.RebuiltIndex[seg] = append(l.RebuiltIndex[seg], AbortedTxn{
					ProducerID: b.ProducerID, FirstOffset: t.FirstOffset,
					LastOffset: b.BaseOffset, LastStableOffset: lso,
				})
			}
			continue
		}
		if !b.IsTransactional() {
			continue
		}
		ti := st.open
		if ti < 0 {
			l.Txns = append(l.Txns, Txn{
				ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, MarkerEpoch: -1,
				FirstOffset: b.BaseOffset, MarkerOffset: -1, FirstTimestamp: b.BaseTimestamp,
				FirstBatch: int32(i), MarkerBatch: -1,
			})
			ti = int32(len(l.Txns) - 1)
			st.open = ti
			ongoing = append(ongoing, ti)
			l.txnsOf[b.ProducerID] = append(l.txnsOf[b.ProducerID], ti)
			pr.Txns++
		}
		t := &l.Txns[ti]
		if t.FirstTimestamp < 0 {
			t.FirstTimestamp = b.BaseTimestamp
		}
		t.LastDataOffset, t.LastTimestamp = b.LastOffset(), b.MaxTimestamp
		t.Batches++
		t.Records += int64(b.Records)
		t.Bytes += int64(b.Size)
	}
	for i := range l.Txns {
		if l.Txns[i].State == TxnOpen {
			l.Open = append(l.Open, i)
		}
	}
}

// buildIndexes picks, per segment, the .txnindex fetches use and the .index
// that bounds them, and compares disk and rebuilt transaction indexes.
func (l *Log) buildIndexes() {
	byMarker := make(map[abortKey]*Txn) // (pid, marker offset) -> txn
	for i := range l.Txns {
		if t := &l.Txns[i]; t.State == TxnAborted {
			byMarker[abortKey{t.ProducerID, t.MarkerOffset}] = t
		}
	}
	l.offIndex = make([][]IndexEntry, len(l.Segments))
	l.rebuiltOff = make([]lazyOffsetIndex, len(l.Segments))
	l.effective = make([][]AbortInfo, len(l.Segments))
	l.effSorted = make([]bool, len(l.Segments))
	l.abortByID = make(map[abortKey]*AbortInfo)
	for si := range l.Segments {
		s := &l.Segments[si]
		// A segment without a usable .index gets the sparse one
		// LogSegment.recover would rebuild, on its first fetch.
		l.offIndex[si] = s.OffsetIndex
		entries := l.RebuiltIndex[si]
		if s.TxnIndexOnDisk {
			entries = s.TxnIndex
			l.compareIndex(int32(si))
		}
		eff := make([]AbortInfo, len(entries))
		name := ""
		if len(entries) > 0 {
			name = s.TxnIndexName()
		}
		for k, e := range entries {
			eff[k] = AbortInfo{Entry: e, Segment: int32(si), IndexName: name, FromDisk: s.TxnIndexOnDisk}
			if t := byMarker[abortKey{e.ProducerID, e.LastOffset}]; t != nil {
				eff[k].Txn, eff[k].MarkerFound = t, true
			}
		}
		l.effective[si] = eff
		l.effSorted[si] = sort.SliceIsSorted(eff, func(i, j int) bool { return eff[i].Entry.LastOffset < eff[j].Entry.LastOffset })
	}
	// Link in a second pass: eff slices no longer move.
	for si := range l.effective {
		for k := range l.effective[si] {
			a := &l.effective[si][k]
			key := abortKey{a.Entry.ProducerID, a.Entry.FirstOffset}
			if _, dup := l.abortByID[key]; !dup {
				l.abortByID[key] = a
			}
			if a.Txn != nil {
				a.Txn.Entry = a
			}
		}
	}
}

// lazyOffsetIndex is the .index LogSegment.recover would rebuild for a
// segment, made on the segment's first fetch (a loaded partition that is
// only drawn never needs it). Its entries are kept as batch indexes, 4 bytes
// each: an entry's offset and position are its batch's LastOffset and
// Position.
type lazyOffsetIndex struct {
	once sync.Once
	at   []int32 // indexes into Log.Batches
}

// rebuiltOffsetIndex returns segment si's rebuilt index: an entry whenever
// more than index.interval.bytes were appended since the last one.
func (l *Log) rebuiltOffsetIndex(si int) []int32 {
	r := &l.rebuiltOff[si]
	r.once.Do(func() {
		var lastEntry int64
		for bi := l.segFirst[si]; bi < l.segFirst[si+1]; bi++ {
			if p := l.Batches[bi].Position(); p-lastEntry > indexIntervalBytes {
				r.at = append(r.at, int32(bi))
				lastEntry = p
			}
		}
	})
	return r.at
}

func (l *Log) compareIndex(si int32) {
	disk, rebuilt := l.Segments[si].TxnIndex, l.RebuiltIndex[si]
	type k struct {
		pid  ProducerID
		last int64
	}
	seen := make(map[k]int, len(rebuilt))
	for i, r := range rebuilt {
		seen[k{r.ProducerID, r.LastOffset}] = i
	}
	matched := make([]bool, len(rebuilt))
	for _, d := range disk {
		i, ok := seen[k{d.ProducerID, d.LastOffset}]
		if !ok {
			note := ""
			if d.LastOffset < l.firstBatchOffset() || !l.hasBatchAt(d.LastOffset) {
				note = "its marker is not in the log (removed by the cleaner or retention)"
			}
			l.Mismatches = append(l.Mismatches, IndexMismatch{Segment: si, Kind: ExtraOnDisk, Disk: d, Note: note})
			continue
		}
		matched[i] = true
		r := rebuilt[i]
		if r.FirstOffset != d.FirstOffset || r.LastStableOffset != d.LastStableOffset || d.Version != AbortedTxnVersion {
			note := ""
			if d.FirstOffset < r.FirstOffset && d.FirstOffset < l.firstBatchOffset() {
				note = "the transaction began before the first batch still in the log (retention)"
			}
			l.Mismatches = append(l.Mismatches, IndexMismatch{Segment: si, Kind: FieldsDiffer, Disk: d, Rebuilt: r, Note: note})
		}
	}
	for i, r := range rebuilt {
		if !matched[i] {
			l.Mismatches = append(l.Mismatches, IndexMismatch{Segment: si, Kind: MissingOnDisk, Rebuilt: r,
				Note: "the broker writes the data before the index and relies on recovery to repair it"})
		}
	}
}

func (l *Log) firstBatchOffset() int64 {
	if len(l.Batches) == 0 {
		return l.LogEndOffset
	}
	return l.Batches[0].BaseOffset
}

func (l *Log) hasBatchAt(off int64) bool {
	i := l.batchAtOrAfter(off)
	return i < len(l.Batches) && l.Batches[i].BaseOffset <= off
}

// batchAtOrAfter returns the index of the first batch whose LastOffset >= off.
func (l *Log) batchAtOrAfter(off int64) int {
	return sort.Search(len(l.Batches), func(i int) bool { return l.Batches[i].LastOffset() >= off })
}

// computeLSO follows ProducerStateManager.firstUnstableOffset and
// UnifiedLog.lastStableOffset: the unstable transactions are the undecided
// ones plus decided ones whose marker is not yet below the high watermark;
// the first unstable offset is clamped up to the log start offset (retention
// can delete the start of an open transaction); the LSO is it, when below
// the high watermark, else the high watermark.
func (l *Log) computeLSO() {
	fu := int64(-1)
	for i := range l.Txns {
		t := &l.Txns[i]
		if t.State == TxnOpen || t.MarkerOffset >= l.HighWatermark {
			if fu < 0 || t.FirstOffset < fu {
				fu = t.FirstOffset
			}
		}
	}
	l.LastStableOffset = l.HighWatermark
	if fu >= 0 {
		fu = max(fu, l.LogStartOffset)
		if fu < l.HighWatermark {
			l.LastStableOffset = fu
		}
	}
}

func (l *Log) findGaps() {
	// next is the first offset not yet accounted for: gaps are said of
	// offsets at or above the log start only. end is where the batches
	// so far end: a batch below it overlaps them (a batch below only the
	// log start is not an overlap, just a batch retention will delete).
	next, end := l.LogStartOffset, int64(math.MinInt64)
	for i := range l.Batches {
		b := &l.Batches[i]
		switch {
		case b.BaseOffset > next:
			cause := GapCompacted
			switch {
			case i == 0:
				cause = GapBeforeFirstBatch
			case l.Batches[i-1].Segment != b.Segment:
				cause = GapSegmentBoundary
			}
			seg := b.Segment
			if cause == GapSegmentBoundary {
				seg = -1
			}
			l.Gaps = append(l.Gaps, Gap{From: next, To: b.BaseOffset - 1, Cause: cause, Segment: seg})
		case b.BaseOffset < end:
			l.Gaps = append(l.Gaps, Gap{From: b.BaseOffset, To: min(b.LastOffset(), end-1), Cause: GapOverlap, Segment: b.Segment})
		}
		if b.Records == 0 && b.Magic() >= 2 {
			l.Gaps = append(l.Gaps, Gap{From: b.BaseOffset, To: b.LastOffset(), Cause: GapEmptiedBatch, Segment: b.Segment})
		}
		next, end = max(next, b.NextOffset()), max(end, b.NextOffset())
	}
}

// TxnOf returns the transaction batch i belongs to (its data or its marker).
func (l *Log) TxnOf(i int) *Txn {
	if ti := l.txnIndexOf(i); ti >= 0 {
		return &l.Txns[ti]
	}
	return nil
}

// txnIndexOf is TxnOf as an index into Txns, -1 for none. The replay gives
// a transactional data batch to its producer's open transaction and an
// end-transaction marker (with records) to the one it closes; a producer's
// transactions do not overlap in batch order, so the candidate is the last
// one that starts at or before i.
func (l *Log) txnIndexOf(i int) int {
	if i < 0 || i >= len(l.Batches) {
		return -1
	}
	b := &l.Batches[i]
	if !b.HasProducerID() {
		return -1
	}
	control := b.IsControl()
	if control && (b.Records == 0 || !b.IsEndTxnMarker()) || !control && !b.IsTransactional() {
		return -1
	}
	ts := l.txnsOf[b.ProducerID]
	k, _ := slices.BinarySearchFunc(ts, int32(i), func(ti, i int32) int { return cmp.Compare(l.Txns[ti].FirstBatch, i+1) })
	if k == 0 {
		return -1
	}
	t := &l.Txns[ts[k-1]]
	switch {
	case control && t.MarkerBatch != int32(i):
		return -1 // a marker for an empty transaction: it closed nothing
	case !control && t.MarkerBatch >= 0 && int32(i) > t.MarkerBatch:
		return -1
	}
	return int(ts[k-1])
}

// AbortedEntries returns the aborted-transaction entries fetches use for
// segment si, in file order.
func (l *Log) AbortedEntries(si int) []AbortInfo { return l.effective[si] }

// LookupAbort finds the served index entry for an aborted-list element.
func (l *Log) LookupAbort(pid ProducerID, firstOffset int64) *AbortInfo {
	return l.abortByID[abortKey{pid, firstOffset}]
}

// SegmentOf returns the index of the segment holding offset off (the floor
// segment by base offset), or -1 below the first.
func (l *Log) SegmentOf(off int64) int {
	i := sort.Search(len(l.Segments), func(i int) bool { return l.Segments[i].BaseOffset > off })
	return i - 1
}

// String summarises the log in one line.
func (l *Log) String() string {
	return fmt.Sprintf("%s-%d: %d segments, %d batches, log start %d, end %d, HWM %d, LSO %d, %d transactions (%d open)",
		l.Topic, l.Partition, len(l.Segments), len(l.Batches), l.LogStartOffset, l.LogEndOffset,
		l.HighWatermark, l.LastStableOffset, len(l.Txns), len(l.Open))
}
