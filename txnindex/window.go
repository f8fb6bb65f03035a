package txnindex

// PartitionWindow says a Partition's Batches are the segments of one
// window of a larger partition, as package segsum hands them to Build: the
// timeline of a partition of any size scans only the segments in view.
// What a read_committed consumer does with the window's offsets then
// depends on three things the window alone cannot show, which the caller
// computed from the rest of the log and passes here or in the Partition:
//
//   - the transactions open where the window begins (Partition.Ongoing,
//     with Replay.Mode ReplaySnapshot and Replay.FromOffset the window's
//     first segment base, so the segments before are "not read", not
//     missing);
//   - the aborted-transaction entries of the segments after the window
//     (their Segment.TxnIndex with TxnIndexOnDisk): a fetch's aborted list
//     is collected from the fetch's segment onwards
//     (LocalLog.collectAbortedTransactions), and the consumer learns that
//     a transaction aborted only from that list, so data in the window is
//     skipped because of a marker in a later segment;
//   - the log end offset and last stable offset of the whole log, which
//     bound every fetch (UnifiedLog.read's maxOffset).
type PartitionWindow struct {
	// End is the first offset after the window: the base offset of the
	// first segment after it, or the log end offset. Segments at or past
	// it carry entries only; they are not compared with a rebuilt index
	// (Log.Mismatches), which the window cannot rebuild.
	End              int64
	LogEndOffset     int64
	LastStableOffset int64
}

// outsideWindow reports whether segment si lies outside the window of
// batches Build was given (before Replay.FromOffset or at or past
// Window.End): its .txnindex is served, not checked.
func (l *Log) outsideWindow(si int) bool {
	w := l.window
	if w == nil {
		return false
	}
	b := l.Segments[si].BaseOffset
	return b >= w.End || (l.Replay.Seeded() && b < l.Replay.FromOffset)
}
