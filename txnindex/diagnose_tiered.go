package txnindex

import (
	"fmt"
	"strings"
)

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

// TieredReport is the diagnosis' account of tiered storage.
type TieredReport struct {
	LogStartOffset      int64    `json:"log_start_offset"`       // the partition's
	LocalLogStartOffset int64    `json:"local_log_start_offset"` // the first local segment's base
	Evidence            []string `json:"evidence"`
}

// lsoFloor is the offset the broker clamps the first unstable offset to:
// the log start, which with tiered storage lies below the local segments.
func (l *Log) lsoFloor() int64 {
	if l.Tiered != nil {
		return min(l.Tiered.LogStartOffset, l.LogStartOffset)
	}
	return l.LogStartOffset
}

func (l *Log) tieredReport(d *Diagnosis) {
	if l.Tiered == nil || d.OffsetsUnknown != nil {
		return
	}
	d.Tiered = &TieredReport{LogStartOffset: l.lsoFloor(), LocalLogStartOffset: l.LogStartOffset, Evidence: l.Tiered.Evidence}
	d.LogStartOffset = l.lsoFloor()
}

func (d *Diagnosis) runbookTiered(sb *strings.Builder) {
	t := d.Tiered
	if t == nil {
		return
	}
	fmt.Fprintf(sb, "  tiered storage (KIP-405): offsets %d-%d are in remote storage, the first local segment begins at %d; the broker takes the log start from log-start-offset-checkpoint as it is (LogLoader.load with remote storage)\n",
		t.LogStartOffset, t.LocalLogStartOffset-1, t.LocalLogStartOffset)
	for _, e := range t.Evidence {
		fmt.Fprintf(sb, "    - %s\n", e)
	}
}
