package inspect

import (
	"fmt"

	"github.com/txnscope/txnscope/loader"
)

// KindIndexFile is the Report.Kind of one side file of a segment inspected
// alone (NewFile).
const KindIndexFile = "index or snapshot file"

// File is one .index, .timeindex, .txnindex or producer .snapshot file
// inspected alone: its entries as `kafka-dump-log.sh --files` prints them
// (DumpLogSegments' dumpIndex, dumpTimeIndex, dumpTxnIndex and
// dumpProducerIdSnapshot), so that the two can be diffed.
type File struct {
	Path       string   `json:"path"`
	Kind       string   `json:"kind"` // offset index, time index, transaction index, producer snapshot
	BaseOffset int64    `json:"base_offset"`
	Bytes      int64    `json:"bytes"`
	Entries    []string `json:"entries"`
}

// NewFile reports f, and err (damage found while reading it, after the
// entries before it) as the report's problem.
func NewFile(f *loader.IndexFile, err error) Report {
	v := Report{Path: f.Path, Kind: KindIndexFile, Partitions: []Partition{}, Problems: []string{}}
	if err != nil {
		v.Problems = append(v.Problems, err.Error())
	}
	out := File{Path: f.Path, Entries: []string{}}
	switch {
	case f.Offset != nil:
		out.Kind, out.BaseOffset, out.Bytes = "offset index", f.Offset.BaseOffset, f.Offset.Size
		for _, e := range f.Offset.Entries {
			out.Entries = append(out.Entries, fmt.Sprintf("offset: %d position: %d", e.Offset, e.Position))
		}
	case f.Time != nil:
		out.Kind, out.BaseOffset, out.Bytes = "time index", f.Time.BaseOffset, f.Time.Size
		for _, e := range f.Time.Entries {
			out.Entries = append(out.Entries, fmt.Sprintf("timestamp: %d offset: %d", e.Timestamp, e.Offset))
		}
	case f.Txn != nil:
		out.Kind, out.BaseOffset, out.Bytes = "transaction index", f.Txn.BaseOffset, f.Txn.Size
		for _, e := range f.Txn.Entries {
			out.Entries = append(out.Entries, fmt.Sprintf("version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d",
				e.Version, e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset))
		}
	case f.Snapshot != nil:
		out.Kind, out.BaseOffset, out.Bytes = "producer snapshot", f.Snapshot.Offset, f.Snapshot.Size
		for _, e := range f.Snapshot.Entries {
			out.Entries = append(out.Entries, DumpSnapshotEntry(e))
		}
	default:
		return v // nothing was read: the problem says why
	}
	v.Files = []File{out}
	return v
}
