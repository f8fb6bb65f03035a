package txnindex

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Build replays p's batches the way the broker's producer state does and
// returns the resulting Log. p's slices are shared, not copied. Batches
// from the first one with unusable offsets on are left out (Log.Refused).
func Build(p *Partition) *Log {
	l := &Log{
		Topic:               p.Topic,
		Partition:           p.Partition,
		clients:             &clientsMemo{},
		Segments:            p.Segments,
		Batches:             p.Batches,
		HighWatermarkSource: p.HighWatermarkSource,
		CleanerOffset:       p.CleanerOffset,
		CleanerOffsetKnown:  p.CleanerOffsetKnown,
		RecoveryPoint:       p.RecoveryPoint,
		RecoveryPointKnown:  p.RecoveryPointKnown,
		CleanShutdown:       p.CleanShutdown,
		Replay:              p.Replay,
		window:              p.Window,
		NoSegment:           p.NoSegment && len(p.Batches) == 0,
		NoSegmentEvidence:   p.NoSegmentEvidence,
		TopicUnknown:        p.TopicUnknown,
		Tiered:              p.Tiered,
	}
	i, why, markers := firstUnusable(l.Batches)
	if i >= 0 {
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
	// Which segments are dense and where offsets are missing are passes
	// over the batches that read nothing the replay writes, and nothing
	// after it reads what they write: on a large log they run beside the
	// replay, on the other core (a seeded diagnose of 2M batches used to
	// wait for Build with that core idle).
	passes := func() {
		l.denseSegments()
		l.findGaps()
	}
	if len(l.Batches) >= parallelBuildBatches {
		done := make(chan struct{})
		go func() { passes(); close(done) }()
		defer func() { <-done }()
	} else {
		passes()
	}
	l.replay(p.Ongoing, markers)
	l.applySnapshot(p)
	l.buildIndexes()
	l.computeLSO()
	return l
}

// parallelBuildBatches is the number of batches from which Build runs
// its independent passes on a second goroutine: below it, starting one
// costs more than the pass.
var parallelBuildBatches = 1 << 16 // a variable for TestBuildParallelPasses

// firstUnusable returns the index of the first batch whose offsets break
// what the offset arithmetic here relies on, with the reason, or -1; and
// the number of end-transaction markers before it, which sizes the
// replay's transactions (one pass over the batches for both).
func firstUnusable(bs []Batch) (int, string, int) {
	markers := 0
	for i := range bs {
		b := &bs[i]
		d := int64(b.LastOffsetDelta())
		switch {
		case b.BaseOffset < 0:
			return i, fmt.Sprintf("batch %d: base offset %d is negative", i, b.BaseOffset), markers
		case d < 0:
			return i, fmt.Sprintf("batch %d at offset %d: last offset delta %d is negative", i, b.BaseOffset, d), markers
		case b.BaseOffset > math.MaxInt64-1-d:
			return i, fmt.Sprintf("batch %d: base offset %d + last offset delta %d overflows int64", i, b.BaseOffset, d), markers
		}
		if b.IsEndTxnMarker() {
			markers++
		}
	}
	return -1, "", markers
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

// denseSegments says which segments are dense (see dense).
func (l *Log) denseSegments() {
	segDense := make([]bool, len(l.Segments))
	for si := range l.Segments {
		segDense[si] = dense(l.Batches[l.segFirst[si]:l.segFirst[si+1]])
	}
	l.segDense = segDense
}

// dense reports whether bs lie end to end in their file, as a broker
// appends them: known positions, each batch starting where the one before
// ends, and offsets that only grow. A fetch then finds where its bytes end
// by binary search (FetchInto) instead of adding up sizes batch by batch.
func dense(bs []Batch) bool {
	for j := range bs {
		b := &bs[j]
		if b.position < 0 || b.Size < 0 {
			return false
		}
		if j > 0 {
			p := &bs[j-1]
			if int64(b.position) != int64(p.position)+int64(p.Size) || b.BaseOffset <= p.LastOffset() {
				return false
			}
		}
	}
	return true
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
	if w := p.Window; w != nil && w.LogEndOffset > l.LogEndOffset {
		l.LogEndOffset = w.LogEndOffset // batches after the window exist
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
func (l *Log) replay(seed []OngoingTxn, markers int) {
	l.RebuiltIndex = make([][]AbortedTxn, len(l.Segments))
	// A segment's rebuilt .txnindex is as long as the broker's when it
	// has one (compareIndex tells where not): sized from it, it is
	// touched once instead of grown by doubling (30,000 entries a 1 GiB
	// segment of 1 KiB batches, some 750 page faults of the replay). No
	// longer than the log's markers: it holds an entry per ABORT, and a
	// damaged .txnindex of 256 MiB sized it at 300 MB.
	for si := range l.Segments {
		if s := &l.Segments[si]; s.TxnIndexOnDisk && len(s.TxnIndex) > 0 {
			l.RebuiltIndex[si] = make([]AbortedTxn, 0, min(len(s.TxnIndex), markers))
		}
	}

	// Every transaction but the ones still open at the end is closed by
	// one end-transaction marker, so the markers firstUnusable counted
	// size Txns once (growing it by doubling first-touches twice its
	// memory). The room for those left open is at most a batch each: an
	// empty log's 64 spare entries cost 6 KB, which a log directory of
	// empty partitions, or a dump naming a partition a line, paid per
	// partition.
	l.Txns = make([]Txn, 0, markers+len(seed)+min(64, len(l.Batches)))

	// One map lookup per batch: a producer's entry in Producers (-1 until
	// it is seen in a batch; seeds come from a snapshot) and its open
	// transaction (the producer state's currentTxnFirstOffset), -1 if none.
	// ce and ceBatch are the largest coordinator epoch of the
	// producer's end-transaction markers and the first marker that
	// carries it (-1, -1 for none): CoordinatorEpochEvidence's answer,
	// kept here so that it costs no pass over the batches.
	// txns is the producer's list for txnsOf, which is filled once at
	// the end: a map assignment per transaction cost a tenth of the
	// replay.
	type pstate struct {
		prod, open, ce, ceBatch int32
		txns                    []int32
	}
	// A window of a large partition is seeded with every transaction
	// open at its start, and each one costs these tables an entry: they
	// are sized for the seeds, not grown to them by doubling (a window
	// after a segment that left 20,000 transactions open rehashed
	// states four times).
	ps := make([]pstate, 0, len(seed))
	states := make(map[ProducerID]int32, len(seed))
	state := func(pid ProducerID) int32 {
		k, ok := states[pid]
		if !ok {
			ps = append(ps, pstate{prod: -1, open: -1, ce: -1, ceBatch: -1})
			k = int32(len(ps) - 1)
			states[pid] = k
		}
		return k
	}

	// ongoing is ProducerStateManager.ongoingTxns: undecided transactions
	// ordered by first offset (a TreeMap keyed by it), which
	// lastStableOffset(completedTxn) walks for the first of another
	// producer. Transactions open in offset order, so appending keeps it
	// sorted; decided ones are skipped lazily from head. Where segments
	// overlap (a segment's first batches below the end of the one
	// before) a transaction can open below one opened earlier: open
	// inserts it in its place, as the TreeMap does, and a window seeded
	// with the transactions open at its start (sorted below) then finds
	// the same one a full pass does.
	ongoing := make([]int32, 0, cap(l.Txns))
	head := 0
	open := func(ti int32) {
		first := l.Txns[ti].FirstOffset
		i := len(ongoing)
		for i > head && l.Txns[ongoing[i-1]].FirstOffset > first {
			i--
		}
		ongoing = append(ongoing, 0)
		copy(ongoing[i+1:], ongoing[i:])
		ongoing[i] = ti
	}
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

	seeded := seed
	byFirst := func(a, b OngoingTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) }
	if !slices.IsSortedFunc(seeded, byFirst) {
		seeded = slices.Clone(seed)
		slices.SortStableFunc(seeded, byFirst)
	}
	// Each seeded producer's list for txnsOf starts as one element of
	// a shared array, capped so that an append copies it out.
	firsts := make([]int32, len(seeded))
	for i, s := range seeded {
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
		open(st.open)
		firsts[i] = st.open
		st.txns = firsts[i : i+1 : i+1]
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
			if b.IsEndTxnMarker() && b.CoordinatorEpoch() > st.ce {
				st.ce, st.ceBatch = b.CoordinatorEpoch(), int32(i)
			}
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
			// The marker closes the producer's open transaction
			// whatever its epoch: ProducerAppendInfo.appendEndTxnMarker
			// checks the epoch (at least the producer's, strictly
			// above it for a transactions v2 marker) only when the
			// leader appends; recovery and replication replay what
			// the leader accepted and merely log a lower epoch. So a
			// KIP-890 marker at epoch E+1 closes the data written at
			// E, and the producer's epoch becomes E+1, the epoch of
			// its next transaction.
			st.open = -1
			t := &l.Txns[ti]
			t.MarkerOffset, t.MarkerEpoch, t.MarkerBatch = b.BaseOffset, b.ProducerEpoch, int32(i)
			if t.TV2() {
				pr.TV2Markers++
			}
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
			open(ti)
			st.txns = append(st.txns, ti)
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
	// Transactions left open past the markers' room grew Txns by
	// doubling (a producer a batch, each leaving one open: up to twice
	// the 96 bytes a transaction keeps); the log keeps its array as long
	// as it lives, so it is cut to its length when much of it is spare.
	if spare := cap(l.Txns) - len(l.Txns); spare > len(l.Txns)/8+64 {
		l.Txns = slices.Clone(l.Txns)
	}
	n := 0
	for i := range l.Txns {
		if l.Txns[i].State == TxnOpen {
			n++
		}
	}
	if n > 0 {
		l.Open = make([]int, 0, n)
	}
	for i := range l.Txns {
		if l.Txns[i].State == TxnOpen {
			l.Open = append(l.Open, i)
		}
	}
	l.txnsOf = make(map[ProducerID][]int32, len(states))
	for pid, k := range states {
		st := &ps[k]
		if len(st.txns) > 0 {
			l.txnsOf[pid] = st.txns
		}
		if st.ceBatch >= 0 {
			if l.markerCE == nil {
				l.markerCE = make(map[ProducerID][2]int32)
			}
			l.markerCE[pid] = [2]int32{st.ce, st.ceBatch}
		}
	}
}

// computeLSO follows ProducerStateManager.firstUnstableOffset and
// UnifiedLog.lastStableOffset: the unstable transactions are the undecided
// ones plus decided ones whose marker is not yet below the high watermark;
// the first unstable offset is clamped up to the log start offset (retention
// can delete the start of an open transaction); the LSO is it, when below
// the high watermark, else the high watermark.
func (l *Log) computeLSO() {
	if w := l.window; w != nil {
		// A window's open transactions may close after it: the LSO is
		// the whole log's.
		l.LastStableOffset = min(w.LastStableOffset, l.HighWatermark)
		return
	}
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
		fu = max(fu, l.LSOFloor())
		if fu < l.HighWatermark {
			l.LastStableOffset = fu
		}
	}
}

// damagedBetween is the first segment from a up to (not including) b whose
// read stopped at damage, or -1: the offsets missing between a batch of a
// and the next, of b, were in its bytes.
func (l *Log) damagedBetween(a, b int32) int32 {
	for s := max(a, 0); s < b && int(s) < len(l.Segments); s++ {
		if l.Segments[s].Damaged != nil {
			return s
		}
	}
	return -1
}

func (l *Log) findGaps() {
	// next is the first offset not yet accounted for: gaps are said of
	// offsets at or above the log start only. end is where the batches
	// so far end: a batch below it overlaps them (a batch below only the
	// log start is not an overlap, just a batch retention will delete).
	next, end := l.LogStartOffset, int64(math.MinInt64)
	if l.Replay.Seeded() {
		// The segments before FromOffset were not read, not missing,
		// and before EveryBatchFrom only the batches of the
		// transactions open in the snapshot were kept.
		next = max(next, l.Replay.EveryFrom())
	}
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
				seg = l.damagedBetween(l.Batches[i-1].Segment, b.Segment)
				if seg >= 0 {
					cause = GapDamaged
				}
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
