package diagnosis

import (
	"fmt"
	"time"

	"github.com/txnscope/txnscope/txnindex"
)

// openTxnReport reports the open transaction l.Txns[ti]: its age from its
// last write (the snapshot's Timestamp for one that began before the log
// start, unless a later batch of it survives), its classification, the
// abort commands the broker accepts and what aborting discards.
func (l plog) openTxnReport(ti int, lso, now int64, o Options, bootstrap string) OpenTxnReport {
	t := &l.Txns[ti]
	r := OpenTxnReport{
		ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, FirstOffset: t.FirstOffset, LastOffset: t.LastDataOffset,
		Batches: t.Batches, Records: t.Records, Bytes: t.Bytes, FirstTimestamp: t.FirstTimestamp, LastTimestamp: t.LastTimestamp,
		Seeded: t.Seeded, PinsLSO: max(t.FirstOffset, l.LSOFloor()) == lso,
		BeganBeforeLogStart:  t.FirstOffset < l.LSOFloor(),
		BeganInRemoteStorage: l.Tiered != nil && t.FirstOffset >= l.LSOFloor() && t.FirstOffset < l.LogStartOffset,
		Remedy:               l.remedy(bootstrap),
	}
	last := t.LastTimestamp
	r.AgeMs = now - last
	if last < 0 {
		r.AgeMs, r.AgeUnknown = 0, true
	}
	if r.AgeMs < 0 {
		// CreateTime comes from the producer's clock: a timestamp
		// ahead of "now" is skew, not a young transaction.
		r.ClockSkew, r.AgeMs = true, 0
	}
	age := time.Duration(r.AgeMs) * time.Millisecond
	switch {
	case r.AgeUnknown:
		r.State = StateOpen
		r.Reason = "its last write time is unknown (the snapshot entry carries none and no batch of it survives), so it is not classified by age; kafka-transactions.sh find-hanging asks the broker"
	case age > o.MaxTxnTimeout+LateTransactionBuffer:
		r.State, r.Late = StateLate, true
		r.Reason = fmt.Sprintf("producer %d wrote nothing for %s, longer than transaction.max.timeout.ms (%s) plus the broker's %s, so the broker calls it late (ProducerStateManager.hasLateTransaction; the broker counts the partition in PartitionsWithLateTransactionsCount); "+
			"hanging, that its coordinator no longer has this transaction on this partition (KIP-664), is not confirmed: no coordinator evidence was read (__transaction_state in the same log dir, or %s); find-hanging asks the coordinator",
			t.ProducerID, fmtDur(r.AgeMs), txnindex.Duration(o.MaxTxnTimeout), txnindex.Duration(LateTransactionBuffer), o.Hints.coordinators())
		r.Remedy.ConfirmHanging = true
		if o.MaxTxnTimeout != DefaultMaxTxnTimeout {
			r.Remedy.MaxTxnTimeout = o.MaxTxnTimeout
		}
	case age > o.MaxTxnTimeout:
		r.State = StateExpired
		r.Reason = fmt.Sprintf("last write %s ago, longer than transaction.max.timeout.ms (%s): its coordinator should have aborted it after transaction.timeout.ms (%s); the broker calls it late %s from now",
			fmtDur(r.AgeMs), txnindex.Duration(o.MaxTxnTimeout), txnindex.Duration(o.TxnTimeout), fmtDur((o.MaxTxnTimeout+LateTransactionBuffer).Milliseconds()-r.AgeMs))
	case age > o.TxnTimeout:
		r.State = StateExpired
		r.Reason = fmt.Sprintf("last write %s ago, longer than transaction.timeout.ms (%s): the coordinator should abort it; if it is still open %s from now, the broker calls it late (transaction.max.timeout.ms, %s, plus %s)",
			fmtDur(r.AgeMs), txnindex.Duration(o.TxnTimeout), fmtDur((o.MaxTxnTimeout+LateTransactionBuffer).Milliseconds()-r.AgeMs), txnindex.Duration(o.MaxTxnTimeout), txnindex.Duration(LateTransactionBuffer))
	default:
		r.State = StateOpen
		r.Reason = fmt.Sprintf("last write %s ago, within transaction.timeout.ms (%s)", fmtDur(r.AgeMs), txnindex.Duration(o.TxnTimeout))
	}
	if r.ClockSkew {
		r.Reason += "; its timestamps are ahead of the clock (producer clock skew), so its age is unknown"
	}
	if r.BeganBeforeLogStart {
		// A log seeded from a broker's .snapshot starts at the real log
		// start; a live window's seeds come from DescribeProducers and its
		// start is only where reading began.
		src := "the producer state"
		r.Cut = fmt.Sprintf("before offset %d, where the data read here starts", l.LogStartOffset)
		if l.Snapshot != nil && l.Snapshot.Window {
			src = "the " + l.Snapshot.Label()
		} else if l.Snapshot != nil {
			src, r.Cut = "the "+l.Snapshot.Label(), fmt.Sprintf("before the log start %d (deleted by retention)", l.LSOFloor())
		}
		r.StartEvidence = fmt.Sprintf("%s: the transaction began at offset %d, %s", src, t.FirstOffset, r.Cut)
		if t.LastDataOffset < 0 && last >= 0 {
			r.StartEvidence += fmt.Sprintf("; its last write, %s, is the snapshot's timestamp", time.UnixMilli(last).UTC().Format(time.RFC3339))
		}
	} else if r.BeganInRemoteStorage {
		// Tiered storage (KIP-405): below the first local segment and at
		// or above the log start, the data is in remote storage, not
		// deleted.
		src := "the producer state"
		if l.Snapshot != nil {
			src = "the " + l.Snapshot.Label()
		}
		r.Cut = fmt.Sprintf("in remote storage (the first local segment begins at %d; the log start is %d)", l.LogStartOffset, l.LSOFloor())
		r.StartEvidence = fmt.Sprintf("%s: the transaction began at offset %d, %s", src, t.FirstOffset, r.Cut)
	} else if l.mayHaveBegunEarlier(t) {
		r.MayHaveBegunBeforeLogStart = true
		r.StartEvidence = fmt.Sprintf("no producer snapshot: producer %d's first surviving batch, at offset %d, is this transaction's data with no marker before it, so it may have begun before the log start %d (retention deleted what came before); the broker's producer snapshot (a .snapshot file in the partition directory, whose entry for producer %d has its currentTxnFirstOffset) or kafka-transactions.sh describe-producers (CurrentTransactionStartOffset) would settle it, and if that offset is lower, abort with --start-offset at it",
			t.ProducerID, t.FirstOffset, l.LogStartOffset, t.ProducerID)
	}
	// kafka-transactions.sh abort --start-offset finds the producer through
	// DescribeProducers, whose currentTxnStartOffset is the producer
	// state's currentTxnFirstOffset: the first offset even after retention
	// deleted it, and the broker fills in the epochs itself.
	r.CoordinatorEpoch, r.CoordinatorEpochSource = l.CoordinatorEpochEvidence(t.ProducerID)
	r.Remedy.Abort, r.Remedy.StartOffset = true, t.FirstOffset
	r.Remedy.ByProducer, r.Remedy.ProducerID, r.Remedy.ProducerEpoch, r.Remedy.CoordinatorEpoch = true, t.ProducerID, t.ProducerEpoch, r.CoordinatorEpoch
	r.Discards = Discards{Records: t.Records, Ranges: l.TxnDataRanges(ti)}
	if r.Discards.Ranges == nil {
		r.Discards.Ranges = []txnindex.OffsetRange{}
	}
	// Only what survives can be printed, and only its records: the
	// other producers' records between them are not the abort's.
	r.Remedy.Print = l.printRanges(t, r.Discards.Ranges)
	return r
}

// printRanges is rs, the ranges of t's data (TxnDataRanges), with the
// records of t's batches in each; only what survives can be printed, so
// they start at the log start (a batch across it counted from there).
func (l plog) printRanges(t *txnindex.Txn, rs []txnindex.OffsetRange) []PrintRange {
	out := make([]PrintRange, len(rs))
	if len(rs) == 0 {
		return out
	}
	floor := l.LSOFloor()
	for k := range rs {
		out[k].OffsetRange = txnindex.OffsetRange{From: max(rs[k].From, floor), To: rs[k].To}
	}
	k := 0
	for i := l.BatchAtOrAfter(rs[0].From); i < len(l.Batches) && l.Batches[i].BaseOffset <= rs[len(rs)-1].To; i++ {
		b := &l.Batches[i]
		if b.ProducerID != t.ProducerID || b.IsControl() || l.TxnOf(i) != t || b.LastOffset() < floor {
			continue
		}
		for k < len(rs)-1 && rs[k].To < b.BaseOffset {
			k++
		}
		out[k].Records += min(int64(b.Records), b.LastOffset()-floor+1)
	}
	return out
}

// mayHaveBegunEarlier: with no snapshot to say otherwise, t is its
// producer's first surviving batch (no marker of that producer before it)
// and something below the log start was deleted.
func (l plog) mayHaveBegunEarlier(t *txnindex.Txn) bool {
	if l.Snapshot != nil || t.Seeded || t.FirstBatch < 0 || l.LogStartOffset <= 0 || l.Tiered != nil {
		return false
	}
	for i := range l.Producers {
		if pr := &l.Producers[i]; pr.ID == t.ProducerID {
			return pr.FirstOffset == t.FirstOffset
		}
	}
	return false
}

// unreplicated reports the decided transactions whose marker is at or
// above the high watermark. The broker keeps them in unreplicatedTxns until
// the high watermark passes the marker, and firstUnstableOffset (hence the
// LSO) counts them: a decided transaction can hold the LSO.
func (l plog) unreplicated(lso, hwm int64, hwmSource, bootstrap string) []OpenTxnReport {
	out := []OpenTxnReport{}
	for i := range l.Txns {
		t := &l.Txns[i]
		if t.State == txnindex.TxnOpen || t.MarkerOffset < hwm {
			continue
		}
		mb := &l.Batches[t.MarkerBatch]
		mo := t.MarkerOffset
		r := OpenTxnReport{
			ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, FirstOffset: t.FirstOffset, LastOffset: t.LastDataOffset,
			Batches: t.Batches, Records: t.Records, Bytes: t.Bytes, FirstTimestamp: t.FirstTimestamp, LastTimestamp: t.LastTimestamp,
			Seeded: t.Seeded, PinsLSO: max(t.FirstOffset, l.LSOFloor()) == lso, BeganBeforeLogStart: t.FirstOffset < l.LSOFloor(),
			State: StateDecidedUnreplicated, MarkerOffset: &mo, MarkerType: mb.Control().String(), HighWatermarkSource: hwmSource,
			Discards: Discards{Ranges: []txnindex.OffsetRange{}}, Remedy: l.remedy(bootstrap),
		}
		if r.BeganBeforeLogStart && (l.Snapshot == nil || l.Snapshot.Window) {
			r.Cut = fmt.Sprintf("before offset %d, where the data read here starts", l.LogStartOffset)
		}
		r.CoordinatorEpoch, r.CoordinatorEpochSource = l.CoordinatorEpochEvidence(t.ProducerID)
		r.Reason = fmt.Sprintf("decided: its %s marker is at offset %d, at or above the high watermark %d (%s); the LSO waits until the high watermark passes the marker (ProducerStateManager keeps it in unreplicatedTxns); nothing to abort: the followers must catch up (or, for a copied log dir, the checkpoint lags the log end %d)",
			r.MarkerType, mo, hwm, hwmSource, l.LogEndOffset)
		// The leader's high watermark is the smallest log end offset of
		// the in-sync replicas; a follower behind for longer than
		// replica.lag.time.max.ms leaves the ISR, and the high watermark
		// moves on without it. A copied log dir's
		// replication-offset-checkpoint is written every
		// replica.high.watermark.checkpoint.interval.ms, so it may lag.
		r.EndsWhen = fmt.Sprintf("nothing to abort: the %s marker is written; the LSO moves past offset %d when the high watermark passes the marker at %d, that is when the in-sync followers have fetched it (a follower behind for longer than replica.lag.time.max.ms leaves the ISR and the high watermark moves without it); if it stays, check the replicas; for a copied log dir, replication-offset-checkpoint (written every replica.high.watermark.checkpoint.interval.ms) may only lag the log end %d",
			r.MarkerType, max(r.FirstOffset, l.LogStartOffset), mo, l.LogEndOffset)
		r.Remedy.CheckReplicas = true
		out = append(out, r)
	}
	return out
}
