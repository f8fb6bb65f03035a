package txnindex

import (
	"cmp"
	"slices"
	"strings"
)

// GroupOffset is one consumer group's committed offset for one partition,
// as its group coordinator serves it to OffsetFetch: the last offset
// commit of the key (group, topic, partition) in __consumer_offsets that
// the coordinator materialised (a transactional commit counts once its
// transaction committed), or the OffsetFetch answer in live mode.
type GroupOffset struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Offset is the committed offset: the next offset the group's
	// consumer reads, where it resumes after a restart or rebalance.
	Offset          int64  `json:"committed_offset"`
	LeaderEpoch     int32  `json:"committed_leader_epoch"` // -1 when the commit carried none (value v0-v2)
	Metadata        string `json:"metadata"`
	CommitTimestamp int64  `json:"commit_timestamp"`
	ExpireTimestamp int64  `json:"expire_timestamp"` // OffsetCommitValue v1 only; -1 otherwise

	// ProducerID is the transactional producer whose TxnOffsetCommit
	// wrote the offset (it counts because that transaction committed), or
	// -1 for a plain OffsetCommit.
	ProducerID ProducerID `json:"producer_id"`
	// Source says where the offset was read: "__consumer_offsets-12" with
	// RecordOffset the offset of the commit's record there, or
	// "OffsetFetch" with RecordOffset -1.
	Source       string `json:"source"`
	RecordOffset int64  `json:"source_offset"`
	// Kind is the group's protocol, from its metadata record in
	// __consumer_offsets or ListGroups' group type; "" when unknown.
	Kind GroupKind `json:"group_kind,omitempty"`
}

// CompareGroupOffsets orders offsets by group, topic, partition.
func CompareGroupOffsets(a, b GroupOffset) int {
	return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// GroupPosition places a group's committed offset on one partition
// against the partition's last stable offset.
//
// A read_committed consumer at position P fetches nothing at or past the
// LSO: the broker caps a read_committed fetch at the LSO
// (LocalLog.read with FetchIsolation.TXN_COMMITTED), so its position never
// passes the LSO, and a read_committed group's committed offset is at most
// the LSO. Three cases:
//
//   - committed < LSO: the group still has RecordsToLSO records to receive,
//     then waits at the LSO: affected (BehindLSO), not yet blocked;
//   - committed == LSO (or no record left before it): it has consumed
//     everything it can and receives nothing until the LSO moves:
//     affected and Blocked, the group the pinned LSO is holding up now;
//   - committed > LSO: only a read_uncommitted consumer gets there (its
//     fetches are capped at the high watermark instead), so an open
//     transaction does not hold it up: not affected.
type GroupPosition struct {
	GroupOffset
	// BehindLSO: Offset <= LSO, the group is affected by what holds the
	// LSO (live.GroupBehind uses the same rule for a cluster scan).
	BehindLSO bool `json:"behind_lso"`
	// Blocked: BehindLSO with nothing left to receive before the LSO
	// (Offset == LSO, or RecordsToLSO == 0 when counted): its consumers
	// wait at the LSO and receive nothing on this partition until it moves.
	Blocked bool `json:"blocked"`
	// OffsetsToLSO is LSO - Offset when the group is below the LSO, else 0.
	OffsetsToLSO int64 `json:"offsets_to_lso"`
	// RecordsToLSO is how many records a read_committed consumer at Offset
	// receives before its position reaches the LSO: delivered records,
	// not offsets (markers, aborted records and compacted offsets take
	// offsets but deliver nothing). 0 at or past the LSO; -1 when not
	// counted (PlaceGroups has no log to count in).
	RecordsToLSO int64 `json:"records_to_lso"`
	// OutOfRange: Offset is below the log start offset or past the log end
	// offset. A fetch there fails with OFFSET_OUT_OF_RANGE
	// (UnifiedLog.read), and the consumer moves to the position
	// auto.offset.reset names instead of resuming at Offset.
	OutOfRange bool `json:"out_of_range,omitempty"`
}

// PlaceGroups returns the committed offsets for topic/partition, placed
// against lso, ordered by group. logStart and logEnd bound the offsets a
// fetch accepts (OutOfRange). RecordsToLSO is -1 below the LSO: counting
// records needs the log ((*Log).GroupPositions).
func PlaceGroups(offsets []GroupOffset, topic string, partition int32, lso, logStart, logEnd int64) []GroupPosition {
	var out []GroupPosition
	for _, o := range offsets {
		if o.Topic != topic || o.Partition != partition {
			continue
		}
		g := GroupPosition{GroupOffset: o, RecordsToLSO: -1}
		g.OutOfRange = o.Offset < logStart || o.Offset > logEnd
		switch {
		case o.Offset > lso:
			g.RecordsToLSO = 0 // a read_uncommitted position: not held by the LSO
		case o.Offset == lso:
			g.BehindLSO, g.Blocked, g.RecordsToLSO = true, true, 0
		default:
			g.BehindLSO, g.OffsetsToLSO = true, lso-o.Offset
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b GroupPosition) int { return CompareGroupOffsets(a.GroupOffset, b.GroupOffset) })
	return out
}

// GroupPositions is PlaceGroups for this log's partition, LSO, log start
// and log end, with RecordsToLSO counted from the read_committed decisions
// in one walk of the log; a group below the LSO with no record left to
// receive before it (only markers, aborted data or gaps) is Blocked too. A group below the log start counts from the log
// start, where a consumer with auto.offset.reset=earliest resumes (other
// reset policies are the consumer's choice, not the log's). Records are
// counted as Counts does: a batch cut by the committed offset counts its
// offsets from there, capped at its record count.
func (l *Log) GroupPositions(offsets []GroupOffset) []GroupPosition {
	gs := PlaceGroups(offsets, l.Topic, l.Partition, l.LastStableOffset, l.LogStartOffset, l.LogEndOffset)
	var below []int
	for i := range gs {
		if gs[i].BehindLSO && !gs[i].Blocked {
			below = append(below, i)
		}
	}
	if len(below) == 0 {
		return gs
	}
	// from is where each group's consumer starts reading.
	from := func(i int) int64 { return max(gs[i].Offset, l.LogStartOffset) }
	slices.SortFunc(below, func(a, b int) int { return cmp.Compare(from(a), from(b)) })
	// total is the records delivered so far in the walk; start[k] is what
	// total was where below[k] starts reading (less the part of a batch
	// before its offset), so its count is the final total minus start[k].
	start := make([]int64, len(below))
	var total int64
	k := 0
	for d := range l.Decisions(ConsumeOptions{From: from(below[0]), Isolation: ReadCommitted}) {
		var full int64
		if d.Verdict == Delivered {
			full = d.Offsets()
			if d.Batch != nil {
				full = min(full, int64(d.Batch.Records))
			}
		}
		for ; k < len(below) && from(below[k]) <= d.From; k++ {
			start[k] = total
		}
		for ; k < len(below) && from(below[k]) <= d.To; k++ {
			// The group starts inside d: only the part from its
			// offset on counts.
			part := int64(0)
			if full > 0 {
				part = min(d.To-from(below[k])+1, full)
			}
			start[k] = total + full - part
		}
		total += full
	}
	for ; k < len(below); k++ {
		start[k] = total
	}
	for j, i := range below {
		gs[i].RecordsToLSO = total - start[j]
		gs[i].Blocked = gs[i].RecordsToLSO == 0
	}
	return gs
}
