package txnindex

// Replay modes of a ReplayReport.
const (
	ReplaySnapshot = "snapshot" // seeded from a producer snapshot; earlier segments not read
	ReplayFull     = "full"     // every segment read
)

// ReplayReport says how much of a partition's log a Log was built from.
// As broker recovery does (LogLoader loads the newest producer snapshot and
// replays only the segments after it), a loader may seed the producer state
// from a .snapshot and read only the segments from the one holding the
// snapshot's offset, or the first offset of a transaction still open in the
// snapshot, on. The diagnosis is then a full replay's (see
// loader.OpenPartitionTail for why), but for what only the segments not
// read could show: the log cleaner's marks on their batches
// (CompactionReport.Scope says so), differences between their .txnindex
// and their batches, which broker recovery does not check either,
// their transactions whose marker the cleaner removed (a full replay lists
// them as decided, the snapshot has them closed), and what the clients
// that depart from Kafka's rule deliver from them (ClientsReport covers
// the batches read).
type ReplayReport struct {
	Mode     string `json:"mode"`
	Snapshot string `json:"snapshot,omitempty"` // the .snapshot seeded from
	// FromOffset is the first offset read: the base offset of the first
	// segment read, or, when the reading began inside it at the .index
	// entry at or below the first offset needed, the base offset of the
	// batch there.
	FromOffset int64 `json:"from_offset"`
	// EveryBatchFrom, when above 0, is where every batch was kept: from
	// FromOffset up to it only the batches of SpanProducers were, the
	// producers whose transaction is open in the snapshot and began
	// before it (their transactions' batches, counts and discard ranges
	// are a full replay's); the other batches there were read over, not
	// replayed (every transaction of theirs closed before the snapshot's
	// offset), and no .txnindex entry before it is compared.
	EveryBatchFrom int64        `json:"every_batch_from,omitempty"`
	SpanProducers  []ProducerID `json:"span_producers,omitempty"`
	SegmentsRead   int          `json:"segments_read"`
	Segments       int          `json:"segments"`
	BytesRead      int64        `json:"bytes_read"`
	Bytes          int64        `json:"bytes"`
	Reason         string       `json:"reason"`
	// SkippedMaxTimestamp is the largest batch timestamp of the segments
	// not read, from the last entry of their .timeindex (the broker appends
	// the segment's largest timestamp when it rolls it,
	// LogSegment.onBecomeInactiveSegment), and of the batches read over
	// from SpanFrom; -1 when every segment was read, or when none of those
	// not read had a .timeindex to give it (loader.TailOptions.LastSegment
	// reads on without).
	SkippedMaxTimestamp int64 `json:"skipped_max_timestamp"`
	// CRCFrom, when above 0, is the recovery point: the segments read that
	// end at or below it were read without checking CRCs, as broker
	// recovery checks only the segments from the recovery point on
	// (LogLoader.recoverLog); 0 when every batch read was checked.
	CRCFrom int64 `json:"crc_checked_from,omitempty"`
	// CleanShutdown: the log directory holds the broker's clean shutdown
	// marker (.kafka_cleanshutdown), so no CRC was checked, as the
	// broker's start after a clean shutdown recovers no segment.
	CleanShutdown bool `json:"clean_shutdown,omitempty"`
	// SnapshotPassed, when not empty, says why a newer snapshot than
	// Snapshot was passed over (past the high watermark, or past the log
	// end: the broker deletes that one on startup and loads the one
	// before, ProducerStateManager.truncateAndReload).
	SnapshotPassed string `json:"snapshot_passed,omitempty"`
}

// Seeded reports whether batches before FromOffset were left unread.
func (r *ReplayReport) Seeded() bool { return r != nil && r.Mode == ReplaySnapshot }

// EveryFrom is, for a seeded replay, where every batch was kept:
// EveryBatchFrom, or FromOffset when the whole of what was read was kept.
func (r *ReplayReport) EveryFrom() int64 {
	if r.EveryBatchFrom > 0 {
		return r.EveryBatchFrom
	}
	return r.FromOffset
}
