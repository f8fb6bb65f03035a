package txnindex

import "fmt"

// MismatchExplanation is why a .txnindex on disk differs from the one
// rebuilt from the batches still in the log. On a compacted or retained
// log the two differ by design: the rebuild replays only what survives,
// the file remembers what the broker saw when it appended the marker.
type MismatchExplanation uint8

// Explanations.
const (
	// ExplainUnknown: nothing in the log accounts for the difference.
	ExplainUnknown MismatchExplanation = iota
	// ExplainCleanerRemovedData: the log cleaner discarded batches of the
	// aborted transaction. CleanedTransactionMetadata.onBatchRead discards
	// every data batch of an aborted transaction it meets, and
	// onControlBatchRead keeps the ABORT marker, and appends its entry to
	// the cleaned .txnindex, while a round still meets batches of that
	// transaction; the file keeps the first offset the broker recorded,
	// the rebuild sees the transaction begin at its first surviving batch,
	// or not at all.
	ExplainCleanerRemovedData
	// ExplainEmptiedBatch: the cleaner removed the transaction's records
	// but kept a batch as an empty header, because it was the producer's
	// last data batch (the producer state needs it); recovery's replay
	// (ProducerAppendInfo.appendDataBatch) begins the transaction there.
	ExplainEmptiedBatch
	// ExplainCleanerShiftedLSO: only the entry's lastStableOffset differs:
	// the transaction that held the LSO when the marker was written lost
	// its first batches to the cleaner, so the rebuild sees it begin
	// later.
	ExplainCleanerShiftedLSO
	// ExplainRetention: the transaction began in a segment retention (or
	// DeleteRecords) deleted: its marker's segment remains, its start does
	// not.
	ExplainRetention
	// ExplainRecovery: the file lacks an entry the log implies, in a
	// segment a restart after an unclean shutdown recovers (or the
	// recovery point is unknown): the broker appends the marker before the
	// .txnindex entry, and that recovery rebuilds the index.
	ExplainRecovery
	// ExplainMarkerGone: the file names a marker that is not in the log.
	ExplainMarkerGone
	// ExplainIndexFileMissing: the segment has no .txnindex file at all,
	// though its .index is there. LogLoader rebuilds a segment's indexes
	// only when it recovers the segment: its .index missing or corrupt
	// (LogSegment.sanityCheck), or, after an unclean shutdown, from the
	// segment holding the recovery point on; TransactionIndex.sanityCheck
	// passes a file that does not exist. Until then the broker lists none
	// of the segment's aborted transactions in its fetch responses.
	ExplainIndexFileMissing
	// ExplainEntryLost: the file lacks an entry the log implies, in a
	// segment before the one holding the recovery point, which no restart
	// recovers: the entry stays missing.
	ExplainEntryLost
)

// String names the explanation in the JSON's words.
func (e MismatchExplanation) String() string {
	switch e {
	case ExplainCleanerRemovedData:
		return "cleaner_removed_aborted_data"
	case ExplainEmptiedBatch:
		return "emptied_batch_kept_for_producer_state"
	case ExplainCleanerShiftedLSO:
		return "cleaner_moved_lso_holder"
	case ExplainRetention:
		return "retention_removed_segment"
	case ExplainRecovery:
		return "index_behind_log"
	case ExplainMarkerGone:
		return "marker_not_in_log"
	case ExplainIndexFileMissing:
		return "txnindex_file_missing"
	case ExplainEntryLost:
		return "entry_lost_before_recovery_point"
	}
	return "unknown"
}

// holdsRecordAt reports whether some batch still in the log holds records at off.
func (l *Log) holdsRecordAt(off int64) bool {
	i := l.BatchAtOrAfter(off)
	return i < len(l.Batches) && l.Batches[i].BaseOffset <= off && l.Batches[i].Records > 0
}

// cleaned says whether the cleaner can have removed offsets from off on:
// with a cleaner-offset-checkpoint, only offsets below it were ever
// cleaned. The second result qualifies the claim for the note.
func (l *Log) cleaned(off int64) (bool, string) {
	if !l.CleanerOffsetKnown {
		return true, " (no cleaner-offset-checkpoint line for this partition: inferred from the missing batches)"
	}
	if off < l.CleanerOffset {
		return true, fmt.Sprintf(" (below the cleaner checkpoint %d)", l.CleanerOffset)
	}
	return false, ""
}

// explainMissing explains the entries the rebuild has and segment si's
// .txnindex lacks; it is the same for every such entry of the segment (the
// report's rebuilt entry says which transaction), so it is made once. What a
// consumer meets follows from the files: the broker lists only the entries
// in the file, so the records of those transactions reach read_committed
// consumers until a recovery of the segment rebuilds its index
// (LogSegment.recover, from the producer state it replays).
func (l *Log) explainMissing(si int32) (MismatchExplanation, string) {
	restart := ""
	recovered, known := l.recoveredAfterUncleanShutdown(int(si))
	switch {
	case !known:
		restart = "a restart after an unclean shutdown rebuilds it only if the segment holds or follows the recovery point (this partition has no recovery-point-offset-checkpoint line)"
	case recovered:
		restart = fmt.Sprintf("a restart after an unclean shutdown rebuilds it (the segment holds or follows the recovery point %d); a clean one does not", l.RecoveryPoint)
	default:
		restart = fmt.Sprintf("no restart rebuilds it: the segment lies before the recovery point %d, and LogLoader recovers such a segment only when its .index is missing or corrupt", l.RecoveryPoint)
	}
	name := l.Segments[si].TxnIndexName()
	switch {
	case l.Segments[si].TxnIndexAbsent:
		return ExplainIndexFileMissing, fmt.Sprintf("there is no %s, though the segment's .index is there: the broker lists none of the segment's aborted transactions, so read_committed consumers receive their records; %s", name, restart)
	case known && !recovered:
		return ExplainEntryLost, fmt.Sprintf("%s lacks the entry: the broker does not list the transaction, so read_committed consumers receive its records; %s", name, restart)
	}
	return ExplainRecovery, fmt.Sprintf("%s lacks the entry: the broker appends the marker to the log before the entry to the .txnindex, so a copy taken between the two lacks it; %s", name, restart)
}

// recoveredAfterUncleanShutdown reports whether a restart after an unclean
// shutdown recovers segment si, and whether the recovery point that
// decides it is known: LogLoader.recoverLog recovers the segments from the
// one holding the recovery point (LogSegments.values from its floor) to the
// end, the last segment always.
func (l *Log) recoveredAfterUncleanShutdown(si int) (recovered, known bool) {
	if !l.RecoveryPointKnown {
		return false, false
	}
	return si+1 >= len(l.Segments) || l.Segments[si+1].BaseOffset > l.RecoveryPoint, true
}

// explainExtra explains an entry on disk the rebuild does not have.
func (l *Log) explainExtra(d AbortedTxn) (MismatchExplanation, string) {
	i := l.BatchAtOrAfter(d.LastOffset)
	if i >= len(l.Batches) || l.Batches[i].BaseOffset != d.LastOffset || !l.Batches[i].IsAbortMarker() || l.Batches[i].ProducerID != d.ProducerID {
		if d.LastOffset < l.LogStartOffset {
			return ExplainRetention, fmt.Sprintf("its marker at %d is below the log start %d: retention deleted it", d.LastOffset, l.LogStartOffset)
		}
		return ExplainMarkerGone, fmt.Sprintf("its ABORT marker at %d is not in the log (removed by the cleaner or retention, or the file belongs to another copy of the log)", d.LastOffset)
	}
	// The marker is there and closed nothing: none of the transaction's
	// data survives before it.
	if d.FirstOffset < l.LogStartOffset || d.FirstOffset < l.firstBatchOffset() {
		return ExplainRetention, fmt.Sprintf("the transaction began at %d, before the log start %d: retention deleted the segment with its data, and its ABORT marker at %d, in a later segment, closes nothing the log still holds",
			d.FirstOffset, l.LogStartOffset, d.LastOffset)
	}
	ok, why := l.cleaned(d.FirstOffset)
	if !ok {
		return ExplainUnknown, fmt.Sprintf("none of the transaction's data (offsets %d–%d) is in the log, yet it lies at or above the cleaner checkpoint %d, which the cleaner has not reached",
			d.FirstOffset, d.LastOffset-1, l.CleanerOffset)
	}
	return ExplainCleanerRemovedData, fmt.Sprintf("the cleaner removed the aborted data (offsets %d–%d)%s and keeps the ABORT marker at %d and this entry until a round finds no batch of the transaction; the rebuild sees a marker that closes nothing",
		d.FirstOffset, d.LastOffset-1, why, d.LastOffset)
}

// explainFields explains an entry whose offsets differ from the rebuilt
// one of the same producer and marker.
func (l *Log) explainFields(d, r AbortedTxn) (MismatchExplanation, string) {
	switch {
	case d.Version != AbortedTxnVersion:
		return ExplainUnknown, fmt.Sprintf("the file's entry has version %d; Kafka writes only version %d", d.Version, AbortedTxnVersion)
	case d.FirstOffset < r.FirstOffset:
		if d.FirstOffset < l.LogStartOffset || d.FirstOffset < l.firstBatchOffset() {
			return ExplainRetention, fmt.Sprintf("the transaction began at %d, before the first batch still in the log (%d): retention deleted its start; the rebuild begins it at %d",
				d.FirstOffset, l.firstBatchOffset(), r.FirstOffset)
		}
		ok, why := l.cleaned(d.FirstOffset)
		if !ok {
			return ExplainUnknown, fmt.Sprintf("the transaction's batches at %d–%d are gone, yet they lie at or above the cleaner checkpoint %d, which the cleaner has not reached",
				d.FirstOffset, r.FirstOffset-1, l.CleanerOffset)
		}
		if i := l.BatchAtOrAfter(r.FirstOffset); i < len(l.Batches) && l.Batches[i].BaseOffset == r.FirstOffset && l.Batches[i].Records == 0 {
			return ExplainEmptiedBatch, fmt.Sprintf("the cleaner removed the aborted data from %d on%s and kept the batch at %d as an empty header, the producer's last data batch, for its producer state; the rebuild, like recovery, begins the transaction there",
				d.FirstOffset, why, r.FirstOffset)
		}
		return ExplainCleanerRemovedData, fmt.Sprintf("the cleaner removed the transaction's first batches (offsets %d–%d)%s; the rebuild begins it at its first surviving batch, %d",
			d.FirstOffset, r.FirstOffset-1, why, r.FirstOffset)
	case d.FirstOffset == r.FirstOffset && d.LastStableOffset < r.LastStableOffset && !l.holdsRecordAt(d.LastStableOffset):
		if d.LastStableOffset < l.LogStartOffset || d.LastStableOffset < l.firstBatchOffset() {
			return ExplainRetention, fmt.Sprintf("the transaction that held the LSO at the marker began at %d, before the first batch still in the log: retention deleted its start, so the rebuild records %d",
				d.LastStableOffset, r.LastStableOffset)
		}
		ok, why := l.cleaned(d.LastStableOffset)
		if !ok {
			break
		}
		return ExplainCleanerShiftedLSO, fmt.Sprintf("the transaction that held the LSO when the marker was written began at %d; the cleaner removed that batch%s, so the rebuild sees it begin later and records %d",
			d.LastStableOffset, why, r.LastStableOffset)
	}
	return ExplainUnknown, fmt.Sprintf("the file says first offset %d, last stable offset %d; the log implies %d and %d, and nothing missing from it accounts for that",
		d.FirstOffset, d.LastStableOffset, r.FirstOffset, r.LastStableOffset)
}

// MismatchReport is one difference between a segment's .txnindex on disk
// and the one rebuilt from the batches, with its explanation: what
// `inspect` and `diagnose` print.
type MismatchReport struct {
	Segment string `json:"segment"` // the .txnindex file
	Kind    string `json:"kind"`
	Disk    string `json:"disk,omitempty"`
	Rebuilt string `json:"rebuilt,omitempty"`
	// Explanation is MismatchExplanation's name
	// ("cleaner_removed_aborted_data", …, "unknown"); Note says it.
	Explanation string `json:"explanation"`
	Note        string `json:"note,omitempty"`
}

// MismatchReports lists l.Mismatches in the words of the JSON.
func (l *Log) MismatchReports() []MismatchReport {
	out := make([]MismatchReport, 0, len(l.Mismatches))
	for _, m := range l.Mismatches {
		// A replay seeded from a producer snapshot (Replay) did not read
		// the batches before FromOffset, nor keep every batch before
		// EveryBatchFrom: an entry whose transaction or LSO lies before
		// them cannot be rebuilt whole, so a difference there says
		// nothing about the files (a full replay finds none).
		if l.Replay.Seeded() && m.Kind != MissingOnDisk &&
			(m.Disk.FirstOffset < l.Replay.EveryFrom() || m.Disk.LastStableOffset < l.Replay.EveryFrom()) {
			continue
		}
		r := MismatchReport{Kind: m.Kind.String(), Explanation: m.Explanation.String(), Note: m.Note}
		if int(m.Segment) < len(l.Segments) {
			r.Segment = l.Segments[m.Segment].TxnIndexName()
		}
		if m.Kind != MissingOnDisk {
			r.Disk = m.Disk.String()
		}
		if m.Kind != ExtraOnDisk {
			r.Rebuilt = m.Rebuilt.String()
		}
		out = append(out, r)
	}
	return out
}

// CleanerMarked reports whether a v2 batch header carries one of the marks
// compaction counts as the cleaner's: no records left, fewer records than
// offsets in a data batch, or the KIP-534 delete horizon. (Offsets missing
// between two batches of a segment are the fourth, a property of the pair.)
func CleanerMarked(attributes int16, lastOffsetDelta, records int32) bool {
	data := attributes&AttrControl == 0
	return records == 0 || data && int64(records) < int64(lastOffsetDelta)+1 || attributes&AttrDeleteHorizon != 0
}
