package input

import (
	"context"
	"path/filepath"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/internaltopic"
)

// OpenTail is OpenContext for a diagnosis of a partition's end (`server
// diagnose`): a <topic>-<partition> directory of a data topic holding
// segments is read the way broker recovery reads it, from its newest
// producer snapshot and only the segments after it
// (loader.OpenPartitionTail, whose diagnosis equals a full replay's; its
// Input.Replay says which segments were read, or why all were). t says
// what else the question needs: a consumer position whose offsets must all
// be decided (Position, -1 for none), explained or only counted (Reasons).
//
// Every other input is read by OpenContext, and so are the partitions of
// __consumer_offsets and __transaction_state: their records are the
// evidence of diagnose's join (package internaltopic), not only their
// transactions.
func OpenTail(ctx context.Context, path string, t loader.TailOptions) (*Contents, error) {
	if !DataPartition(path) {
		return OpenContext(ctx, path)
	}
	p, err := loader.OpenPartitionTail(ctx, path, loader.DefaultScanOptions, t)
	if err != nil {
		return nil, err
	}
	return partitionContents(p), nil
}

// DataPartition reports whether path is a <topic>-<partition> directory
// of a data topic holding segments: what OpenTail reads from a producer
// snapshot and package segsum reads a segment at a time. Not a file, a log
// dir, a directory without segments (KRaft snapshots only), nor
// __consumer_offsets or __transaction_state, whose records are diagnose's
// evidence and are read whole.
func DataPartition(path string) bool {
	topic, _, _, err := loader.ParsePartitionDir(filepath.Base(filepath.Clean(path)))
	if err != nil || topic == internaltopic.ConsumerOffsetsTopic || topic == internaltopic.TransactionStateTopic {
		return false
	}
	return loader.HasLogFile(path)
}
