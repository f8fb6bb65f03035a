package txnindex

// TieredStorage is a partition that keeps its older segments in remote
// storage (KIP-405). With remote storage enabled, LogLoader.load takes the
// log start from log-start-offset-checkpoint as it is, where without it
// takes the larger of it and the first local segment's base: the log start
// lies below the local segments, the producer snapshot at the first local
// offset is above it and kept, and a transaction open there may pin the
// LSO below the first local offset (UnifiedLog keeps a message-offset-only
// first unstable offset). A follower rebuilt from remote storage
// (TierStateMachine.buildRemoteLogAuxState) shows this shape.
type TieredStorage struct {
	LogStartOffset int64    // the partition's log start (the checkpoint's)
	Evidence       []string // what on disk shows remote storage, each decisive
}

// LSOFloor is the offset the broker clamps the first unstable offset to:
// the log start, which with tiered storage lies below the local segments.
func (l *Log) LSOFloor() int64 {
	if l.Tiered != nil {
		return min(l.Tiered.LogStartOffset, l.LogStartOffset)
	}
	return l.LogStartOffset
}
