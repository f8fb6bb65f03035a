package diagnosis

import (
	"fmt"
	"math"

	"github.com/txnscope/txnscope/txnindex"
)

// StateMarkerRemoved is a transaction the replay of the surviving batches
// leaves open although the broker had decided it: the log cleaner worked
// past its first offset, or a .txnindex entry records its ABORT, and its
// marker is gone. It holds no LSO and there is nothing to abort.
const StateMarkerRemoved OpenTxnState = "decided_marker_removed"

// CompactionReport is the log cleaner's evidence on a partition. Only a
// topic whose cleanup.policy includes compact is cleaned, so any of it says
// the topic is compacted. CleanedBelow is what the evidence proves about
// transactions: LogCleanerManager.cleanableOffsets never cleans at or past
// the log's last stable offset ("we do not clean beyond the last stable
// offset"; the first unstable offset before KAFKA-13194), so every
// transaction that began below an offset the cleaner worked at had been
// decided, its marker written and replicated, when it did.
type CompactionReport struct {
	Compacted bool `json:"compacted"`
	// CleanerCheckpoint is the partition's cleaner-offset-checkpoint line
	// (the cleaner's first dirty offset); nil when the log dir has none.
	CleanerCheckpoint *int64 `json:"cleaner_checkpoint"`
	// CleanedBelow: the cleaner has worked at offsets up to just below
	// it, at or above the log start; -1 when nothing shows it.
	CleanedBelow int64 `json:"cleaned_below"`
	// Evidence says what shows the cleaner's hand, one sentence each.
	Evidence []string `json:"evidence"`
	// Scope, for a log seeded from a producer snapshot, says that the
	// marks counted are those of the segments read: the ones before were
	// not read (the broker's recovery does not read them either), so a
	// full replay may count more. It changes no verdict: a transaction the
	// snapshot has open held the LSO, so the cleaner cannot have worked
	// past its first offset. "" when every segment was read.
	Scope string `json:"scope,omitempty"`
}

// cleanerMark counts one kind of the cleaner's marks on batches.
type cleanerMark struct {
	n       int
	offsets int64 // offsets removed, where the kind removes some
	first   int64
	last    int64 // the highest offset the mark is at
}

func (m *cleanerMark) add(from, at, removed int64) {
	if m.n == 0 {
		m.first = from
	}
	m.n++
	m.offsets += removed
	m.last = max(m.last, at)
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// compaction gathers the cleaner's evidence: the cleaner-offset-checkpoint
// line and its marks on the batches. Each mark is the cleaner's alone:
// producers write every offset of a batch (the broker assigns them
// contiguously), batches inside a segment are only ever removed by the
// cleaner, an empty batch header is its BatchRetention.RETAIN_EMPTY (the
// producer's last batch, or the last of a cleaning round), and the KIP-534
// delete-horizon bit is set by the cleaner on a marker it may remove once
// delete.retention.ms has passed. nil when nothing shows the cleaner.
func (l plog) compaction(h Hints) *CompactionReport {
	var inside, emptied, emptiedMarkers, horizon, gaps cleanerMark
	// A seeded replay kept only the batches of the transactions open in
	// its snapshot before EveryBatchFrom: the marks counted are those of
	// the batches from there on, as Scope says.
	from := int64(math.MinInt64)
	if l.Replay.Seeded() {
		from = l.Replay.EveryFrom()
	}
	for i := range l.Batches {
		b := &l.Batches[i]
		if b.Magic() < 2 || b.BaseOffset < from {
			continue
		}
		span := b.LastOffset() - b.BaseOffset + 1
		switch {
		case b.Records == 0 && b.IsControl():
			emptiedMarkers.add(b.BaseOffset, b.LastOffset(), 0)
		case b.Records == 0:
			emptied.add(b.BaseOffset, b.LastOffset(), span)
		case !b.IsControl() && int64(b.Records) < span:
			inside.add(b.BaseOffset, b.LastOffset(), span-int64(b.Records))
		}
		if b.HasDeleteHorizon() {
			horizon.add(b.BaseOffset, b.LastOffset(), 0)
		}
	}
	for _, g := range l.Gaps {
		if g.Cause == txnindex.GapCompacted {
			gaps.add(g.From, g.To, g.To-g.From+1)
		}
	}
	r := &CompactionReport{CleanedBelow: -1, Evidence: []string{}}
	// A mark proves the LSO was above it only at or above today's log
	// start: below it, the LSO may have been the log start clamping an
	// older open transaction (UnifiedLog.maybeIncrementFirstUnstableOffset).
	proves := func(at int64) {
		if at >= l.LogStartOffset {
			r.CleanedBelow = max(r.CleanedBelow, at+1)
		}
	}
	if l.CleanerOffsetKnown {
		c := l.CleanerOffset
		r.CleanerCheckpoint = &c
		r.Evidence = append(r.Evidence, fmt.Sprintf("cleaner-offset-checkpoint has a line for the partition: the cleaner has cleaned below offset %d", c))
		if c > l.LogStartOffset {
			proves(c - 1)
		}
	}
	add := func(m *cleanerMark, sentence string) {
		if m.n > 0 {
			r.Evidence = append(r.Evidence, sentence)
			proves(m.last)
		}
	}
	add(&inside, fmt.Sprintf("%s with %s missing inside them (records removed by compaction: a superseded key, or a tombstone past delete.retention.ms), from offset %d",
		count(inside.n, "batch", "batches"), txnindex.Plural(inside.offsets, "offset", "offsets"), inside.first))
	add(&gaps, fmt.Sprintf("%s of %s between batches of one segment (batches the cleaner removed), from offset %d",
		count(gaps.n, "gap", "gaps"), txnindex.Plural(gaps.offsets, "offset", "offsets"), gaps.first))
	add(&emptied, fmt.Sprintf("%s kept as empty headers over %s (BatchRetention.RETAIN_EMPTY: a producer's last batch or a cleaning round's last), from offset %d",
		count(emptied.n, "data batch", "data batches"), txnindex.Plural(emptied.offsets, "offset", "offsets"), emptied.first))
	add(&emptiedMarkers, fmt.Sprintf("%s with no record left (empty control batches: the transaction wholly cleaned, the batch kept for the producer's epoch or the round's last offset), from offset %d",
		count(emptiedMarkers.n, "marker", "markers"), emptiedMarkers.first))
	add(&horizon, fmt.Sprintf("%s carrying a delete horizon (KIP-534: the cleaner sets it on a marker or tombstone it removes after delete.retention.ms), from offset %d",
		count(horizon.n, "batch", "batches"), horizon.first))
	if len(r.Evidence) == 0 {
		return nil
	}
	r.Compacted = true
	if rp := l.Replay; rp.Seeded() && rp.EveryBatchFrom > 0 {
		r.Scope = fmt.Sprintf("the marks counted are those of the batches from offset %d on; before it only the open transactions' batches were kept, from offset %d, and %s not read (%s)",
			rp.EveryBatchFrom, rp.FromOffset, txnindex.Plural(rp.Segments-rp.SegmentsRead, "segment before that was", "segments before that were"), h.everySegment())
	} else if rp.Seeded() {
		r.Scope = fmt.Sprintf("the marks counted are those of the segments read, from offset %d on; %s not read (%s)",
			rp.FromOffset, txnindex.Plural(rp.Segments-rp.SegmentsRead, "segment before it was", "segments before it were"), h.everySegment())
	}
	return r
}

// MarkerRemovedEvidence says why t, a transaction of l open in the replay
// of the surviving batches, was decided by the broker, its marker removed
// by the log cleaner (StateMarkerRemoved); "" when nothing shows it. It
// reads the whole log: the timeline's banner asks it once per page.
func MarkerRemovedEvidence(l *txnindex.Log, t *txnindex.Txn) string {
	return plog{l}.markerRemovedEvidence(t)
}

func (l plog) markerRemovedEvidence(t *txnindex.Txn) string {
	if t == nil || t.State != txnindex.TxnOpen {
		return ""
	}
	return l.removedMarkerEvidence(t, l.compaction(Hints{}))
}

// removedMarkerEvidence says why the transaction t, open in the replay,
// was decided by the broker; "" when nothing shows it.
func (l plog) removedMarkerEvidence(t *txnindex.Txn, c *CompactionReport) string {
	if c != nil && t.FirstOffset < c.CleanedBelow {
		src := "its marks on the batches"
		if c.CleanerCheckpoint != nil && *c.CleanerCheckpoint == c.CleanedBelow {
			src = fmt.Sprintf("cleaner-offset-checkpoint %d", *c.CleanerCheckpoint)
		}
		return fmt.Sprintf("the log cleaner has cleaned up to offset %d (%s) and never cleans at or past the last stable offset (LogCleanerManager.cleanableOffsets), so this transaction, from offset %d, had been decided when it did; its marker was removed by the cleaner once delete.retention.ms had passed (an ABORT whose .txnindex entry was missing is removed while its data is kept, CleanedTransactionMetadata.onControlBatchRead)",
			c.CleanedBelow-1, src, t.FirstOffset)
	}
	// A .txnindex entry of this producer covering the transaction's start
	// records its ABORT at a marker the log no longer holds.
	for _, m := range l.Mismatches {
		d := m.Disk
		if m.Kind == txnindex.ExtraOnDisk && m.Explanation == txnindex.ExplainMarkerGone && d.ProducerID == t.ProducerID &&
			d.FirstOffset <= t.FirstOffset && t.FirstOffset < d.LastOffset {
			return fmt.Sprintf("%s records its ABORT: first offset %d, marker at offset %d, which the log no longer holds (the cleaner removes a marker after delete.retention.ms)",
				l.Segments[m.Segment].TxnIndexName(), d.FirstOffset, d.LastOffset)
		}
	}
	return ""
}

// markerRemovedReport reports l.Txns[ti] as decided with its marker
// removed: no age, no command, it holds nothing.
func (l plog) markerRemovedReport(ti int, evidence string) OpenTxnReport {
	t := &l.Txns[ti]
	r := OpenTxnReport{
		ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, FirstOffset: t.FirstOffset, LastOffset: t.LastDataOffset,
		Batches: t.Batches, Records: t.Records, Bytes: t.Bytes, FirstTimestamp: t.FirstTimestamp, LastTimestamp: t.LastTimestamp,
		Seeded: t.Seeded, BeganBeforeLogStart: t.FirstOffset < l.LogStartOffset, State: StateMarkerRemoved,
		Discards: Discards{Ranges: []txnindex.OffsetRange{}},
	}
	r.CoordinatorEpoch, r.CoordinatorEpochSource = l.CoordinatorEpochEvidence(t.ProducerID)
	r.Reason = "the replay of the surviving batches finds no marker for it, but the broker decided it: " + evidence +
		"; it does not hold the LSO and there is nothing to abort"
	return r
}

// lsoWithout is the LSO computeLSO gives when the transactions in gone
// (indexes into Txns) are not unstable.
func (l plog) lsoWithout(gone map[int]string) int64 {
	fu := int64(-1)
	for i := range l.Txns {
		t := &l.Txns[i]
		if _, g := gone[i]; g {
			continue
		}
		if (t.State == txnindex.TxnOpen || t.MarkerOffset >= l.HighWatermark) && (fu < 0 || t.FirstOffset < fu) {
			fu = t.FirstOffset
		}
	}
	if fu >= 0 && max(fu, l.LSOFloor()) < l.HighWatermark {
		return max(fu, l.LSOFloor())
	}
	return l.HighWatermark
}
