package txnindex

// Truncation is what the broker's next start after an unclean shutdown
// does to a partition when a segment it recovers is damaged.
// LogLoader.recoverLog recovers the segments from the one holding the
// recovery point to the end (recoveredAfterUncleanShutdown);
// LogSegment.recover truncates a segment at its first invalid batch (a
// size below the minimum, a bad CRC, a batch cut short), and recoverLog
// then deletes every later segment. The markers among the lost offsets go
// with them: the producer state rebuilt from the surviving log holds the
// transactions they ended open again, and nothing ends them, since their
// coordinator wrote its markers and completed them.
type Truncation struct {
	Segment  int    // index in Log.Segments of the segment truncated
	Position int64  // the byte it is truncated at
	Reason   string // why its read stopped there (SegmentDamage.Reason)
	// Offset is the log end after the truncation: the first offset lost.
	Offset int64
	// Deleted are the indexes in Log.Segments of the segments deleted.
	Deleted []int
	// Batches and Records are what was read at or above Offset: lost.
	Batches int
	Records int64
	// Reopened are the transactions that began below Offset and whose
	// markers lie at or above it, in Txns' order.
	Reopened []*Txn
	// HighWatermark and LastStableOffset are what the broker reports
	// after the restart: the high watermark it checkpointed is bounded by
	// the new log end, and the LSO by the transactions still open.
	HighWatermark, LastStableOffset int64
}

// RecoveryTruncation returns what a restart after an unclean shutdown
// takes from the log as read, nil when it takes no batch: the recovery
// point is unknown, the log directory holds the clean shutdown marker (no
// segment is recovered), no recovered segment was damaged before its
// last batch read, or l is a window of segments.
func (l *Log) RecoveryTruncation() *Truncation {
	if !l.RecoveryPointKnown || l.CleanShutdown || l.window != nil {
		return nil
	}
	si := -1
	for i := range l.Segments {
		if recovered, _ := l.recoveredAfterUncleanShutdown(i); recovered && l.Segments[i].Damaged != nil {
			si = i
			break
		}
	}
	if si < 0 {
		return nil
	}
	dm := l.Segments[si].Damaged
	t := &Truncation{Segment: si, Position: dm.Position, Reason: dm.Reason, Offset: dm.Offset}
	for i := si + 1; i < len(l.Segments); i++ {
		t.Deleted = append(t.Deleted, i)
	}
	for i := l.segFirst[si+1]; i < len(l.Batches); i++ {
		t.Batches++
		t.Records += int64(l.Batches[i].Records)
	}
	if t.Batches == 0 {
		return nil
	}
	t.HighWatermark = min(l.HighWatermark, t.Offset)
	fu := int64(-1)
	for i := range l.Txns {
		x := &l.Txns[i]
		switch {
		case x.FirstOffset >= t.Offset:
			continue // lost with its offsets
		case x.State != TxnOpen && x.MarkerOffset >= t.Offset:
			t.Reopened = append(t.Reopened, x)
		case x.State != TxnOpen:
			continue
		}
		if fu < 0 || x.FirstOffset < fu {
			fu = x.FirstOffset
		}
	}
	t.LastStableOffset = t.HighWatermark
	if fu >= 0 {
		t.LastStableOffset = min(max(fu, l.LSOFloor()), t.HighWatermark)
	}
	return t
}
