package logindex

import (
	"context"
	"fmt"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// TailInfo says what a tail scan read.
type TailInfo struct {
	From     int64 // the first offset from which every batch was read: the snapshot's offset, or the log start
	Snapshot string
	Segments int // segments read
	Total    int // segments in the directory
	// Full is true when no usable snapshot let the scan skip anything:
	// every segment was replayed, for the reason Why.
	Full bool
	Why  string
}

func (t TailInfo) String() string {
	if t.Full {
		why := t.Why
		if why == "" {
			why = "no producer snapshot to start from"
		}
		return fmt.Sprintf("all %d segments replayed (%s)", t.Total, why)
	}
	return fmt.Sprintf("the last %d of %d segments, from offset %d, seeded from %s", t.Segments, t.Total, t.From, t.Snapshot)
}

// ScanTail reads only the end of a partition directory that the last
// stable offset depends on, through the loader's one tail reader
// (loader.OpenPartitionTail with TailOptions.LastSegment): producer state
// is seeded from the newest usable .snapshot at or below the last
// segment's base offset (the broker writes one at every segment roll),
// the transactions open in it seeded with their first offsets, so the LSO
// they pin is exact, and only the batches from there on are replayed.
// Without such a snapshot every segment is replayed (TailInfo.Full).
//
// Offsets below TailInfo.From were not read: the log is for the LSO, the
// high watermark and the open transactions, not for drawing (its Replay
// says so, and a partition page's first view draws nothing there). Batch
// headers only, no CRC (the index wants speed; the partition page opens
// the whole directory with every check). Damage met on the way is
// returned beside the log. cps is the log directory's checkpoints (HWM,
// log start), read when nil.
func ScanTail(ctx context.Context, dir string, cps *loader.LogDirCheckpoints) (*txnindex.Log, TailInfo, []*loader.FormatError, error) {
	p, err := loader.OpenPartitionTail(ctx, dir, loader.HeaderScanOptions, loader.TailOptions{Position: -1, Checkpoints: cps, LastSegment: true})
	if err != nil {
		return nil, TailInfo{}, nil, err
	}
	return p.Build(), tailInfo(p), p.Damage, nil
}

// tailInfo is what the tail read of p, from its replay report.
func tailInfo(p *loader.Partition) TailInfo {
	r := p.Input.Replay
	if r.Seeded() {
		return TailInfo{From: r.EveryFrom(), Snapshot: r.Snapshot, Segments: r.SegmentsRead, Total: r.Segments}
	}
	info := TailInfo{Segments: len(p.Segments), Total: len(p.Segments), Full: true}
	if len(p.Segments) > 0 {
		info.From = p.Segments[0].Log.BaseOffset
	}
	if r != nil {
		info.Why = r.Reason
	}
	return info
}
