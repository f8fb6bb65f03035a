package loader

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// KRaftSnapshot is one snapshot of the KRaft metadata log: a file named
// <end offset, 20 digits>-<epoch, 10 digits>.checkpoint (Snapshots.filenameFromSnapshotId
// in Kafka's raft module), holding the metadata state up to, not
// including, EndOffset.
type KRaftSnapshot struct {
	Name      string `json:"name"`
	EndOffset int64  `json:"end_offset"`
	Epoch     int32  `json:"epoch"`
	Bytes     int64  `json:"bytes"`
}

// isKRaftSnapshotName reports whether name is <20 digits>-<10 digits>.checkpoint.
func isKRaftSnapshotName(name string) bool {
	stem, ok := strings.CutSuffix(name, ".checkpoint")
	if !ok || len(stem) != 31 || stem[20] != '-' {
		return false
	}
	for i, c := range stem {
		if i != 20 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// kraftSnapshot reads a snapshot's end offset and epoch from its name. A
// name whose offset passes the largest int64 or whose epoch passes the
// largest int32 is no snapshot Kafka writes (Snapshots.parse reads them
// with Long.parseLong and Integer.parseInt, which refuse them): the error
// names the file instead of a snapshot at 9223372036854775807.
func kraftSnapshot(name string, e fs.DirEntry) (KRaftSnapshot, *FormatError) {
	s := KRaftSnapshot{Name: name, Bytes: -1}
	var err error
	if s.EndOffset, err = strconv.ParseInt(name[:20], 10, 64); err != nil {
		return s, formatErr(name, 0, "file name", "end offset %s: want at most %d (the largest offset), found a larger number", name[:20], int64(math.MaxInt64))
	}
	ep, err := strconv.ParseInt(name[21:31], 10, 32)
	if err != nil {
		return s, formatErr(name, 21, "file name", "epoch %s: want at most %d (the largest epoch), found a larger number", name[21:31], int32(math.MaxInt32))
	}
	s.Epoch = int32(ep)
	if fi, err := e.Info(); err == nil {
		s.Bytes = fi.Size()
	}
	return s, nil
}

// IsKRaftMetadataDir reports whether dir is the KRaft metadata log's
// partition directory (__cluster_metadata-0): loaded even without a .log
// segment, since a node that has just taken a snapshot may hold only
// .checkpoint files and indexes.
func IsKRaftMetadataDir(dir string) bool {
	topic, _, _, err := ParsePartitionDir(filepath.Base(filepath.Clean(dir)))
	if err != nil || topic != txnindex.ClusterMetadataTopic {
		return false
	}
	_, err = os.Stat(dir)
	return err == nil
}

// ListKRaftSnapshots lists the .checkpoint snapshots of a KRaft metadata
// log directory by name, as loading it does, without reading the rest;
// names that do not parse are left out (loading reports them).
func ListKRaftSnapshots(dir string) []KRaftSnapshot {
	ents, _ := os.ReadDir(dir) // unreadable: no snapshot to read
	var out []KRaftSnapshot
	for _, e := range ents {
		if name := e.Name(); e.Type().IsRegular() && isKRaftSnapshotName(name) {
			if ks, err := kraftSnapshot(name, e); err == nil {
				out = append(out, ks)
			}
		}
	}
	return out
}
