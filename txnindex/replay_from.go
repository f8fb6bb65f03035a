package txnindex

import "fmt"

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
// and their batches, which broker recovery does not check either, and
// their transactions whose marker the cleaner removed (a full replay lists
// them as decided, the snapshot has them closed).
type ReplayReport struct {
	Mode     string `json:"mode"`
	Snapshot string `json:"snapshot,omitempty"` // the .snapshot seeded from
	// FromOffset is the first offset read: the base offset of the first
	// segment read, or, when the reading began inside it at the .index
	// entry at or below the first offset needed, the base offset of the
	// batch there.
	FromOffset   int64  `json:"from_offset"`
	SegmentsRead int    `json:"segments_read"`
	Segments     int    `json:"segments"`
	BytesRead    int64  `json:"bytes_read"`
	Bytes        int64  `json:"bytes"`
	Reason       string `json:"reason"`
	// SkippedMaxTimestamp is the largest batch timestamp of the segments
	// not read, from the last entry of their .timeindex (the broker appends
	// the segment's largest timestamp when it rolls it,
	// LogSegment.onBecomeInactiveSegment); -1 when every segment was read.
	SkippedMaxTimestamp int64 `json:"skipped_max_timestamp"`
	// CRCFrom, when above 0, is the recovery point: the segments read that
	// end at or below it were read without checking CRCs, as broker
	// recovery checks only the segments from the recovery point on
	// (LogLoader.recoverLog); 0 when every batch read was checked.
	CRCFrom int64 `json:"crc_checked_from,omitempty"`
}

// seeded reports whether batches before FromOffset were left unread.
func (r *ReplayReport) seeded() bool { return r != nil && r.Mode == ReplaySnapshot }

// Line is the one-line account the runbook prints.
func (r *ReplayReport) Line() string {
	if r.Mode == ReplaySnapshot {
		crc := ""
		if r.CRCFrom > 0 {
			crc = fmt.Sprintf(", CRCs checked from the recovery point %d on", r.CRCFrom)
		}
		return fmt.Sprintf("segments from offset %d on (%d of %d, %s of %s%s), producer state seeded from %s: %s; the batches and .txnindex files before offset %d were not read (--full-replay reads them)",
			r.FromOffset, r.SegmentsRead, r.Segments, Bytes(r.BytesRead), Bytes(r.Bytes), crc, r.Snapshot, r.Reason, r.FromOffset)
	}
	return fmt.Sprintf("every segment (%d, %s), full replay: %s", r.Segments, Bytes(r.Bytes), r.Reason)
}
