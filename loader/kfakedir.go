package loader

// kfake data directories.
//
// This file reads the directory a franz-go kfake cluster writes with
// kfake.DataDir(dir). That is kfake's own layout, not Kafka's: no
// <20 digits>.log segments, no .index/.timeindex/.txnindex, no producer
// snapshots, no offset checkpoints. What it shares with Kafka is the bytes of
// the segments, which are RecordBatch wire format, so the segment scanner of
// segment.go reads them unchanged. The layout (kfake persist.go, format
// version 1):
//
//	<dir>/meta.json                          {"version":1,"cluster_id":...}
//	<dir>/topics.json                        topics: name, id (std base64), partitions, replicas, configs
//	<dir>/partitions/<topic>-<partition>/    the topic url.PathEscape'd
//	    <base offset>.dat                    RecordBatch bytes, concatenated; the decimal base offset is not zero-padded
//	    <base offset>.idx                    15 bytes per batch of the .dat, in order: version, crc32c low byte
//	                                         of bytes [2,15), epoch (int32 LE), max earlier timestamp (int64 LE),
//	                                         flags (bit 0: the batch was written inside a transaction)
//	    snapshot.json                        written at shutdown: high_watermark, last_stable_offset,
//	                                         log_start_offset, aborted_txns, segments (base_offset, size)
//	<dir>/groups.log, pids.log, acls.json, sasl.json, quotas.json, broker_configs.json, seq_windows.json, session_state.json
//
// Only the partitions, topics.json and each partition's snapshot.json matter
// here. kfake trusts a snapshot.json only when its segment list matches the
// .dat files (base offsets and sizes); otherwise, as after a crash, it
// replays the segments and takes the high watermark from the last batch and
// the log start offset from the first. OpenKfakeDir does the same: a
// matching snapshot gives HighWatermark and LogStartOffset, anything else
// leaves them -1 (the log end offset and the first segment's base offset) and
// HighWatermarkSource says which was used. kfake keeps no transaction index
// file, so every segment has TxnIndexOnDisk false and txnindex.Build rebuilds
// the aborted-transaction index from the batches; nor does it keep producer
// state a transaction open before the first remaining batch could be seeded
// from, so Input.Ongoing stays empty.

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// Names in a kfake data directory.
const (
	KfakeMetaFile      = "meta.json"
	KfakeTopicsFile    = "topics.json"
	KfakePartitionsDir = "partitions"
	KfakeSnapshotFile  = "snapshot.json"

	kfakeIndexEntrySize = 15
	kfakePersistVersion = 1 // kfake's currentPersistVersion
)

// IsKfakeDir reports whether dir looks like what kfake.DataDir writes: a
// data directory (meta.json or topics.json next to a partitions directory),
// or one partition directory of it (<base>.dat files and no Kafka .log).
func IsKfakeDir(dir string) bool {
	if st, err := os.Stat(filepath.Join(dir, KfakePartitionsDir)); err == nil && st.IsDir() {
		for _, n := range []string{KfakeMetaFile, KfakeTopicsFile} {
			if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
				return true
			}
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	dat := false
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if _, ok := kfakeBase(e.Name(), ".dat"); ok {
			dat = true
		}
		if strings.HasSuffix(e.Name(), ".log") {
			return false
		}
	}
	return dat
}

// OpenKfakeDir loads a kfake data directory, or one of its partition
// directories, with DefaultScanOptions. Partitions are sorted by topic,
// then partition. Files are opened read-only; damage is in each
// Partition.Damage, and only I/O errors (or a directory holding no kfake
// partition) fail.
func OpenKfakeDir(dir string) ([]*Partition, error) {
	return OpenKfakeDirWith(dir, DefaultScanOptions)
}

// OpenKfakeDirWith is OpenKfakeDir with explicit scan options.
func OpenKfakeDirWith(dir string, o ScanOptions) ([]*Partition, error) {
	root, pdirs := dir, []string(nil)
	if st, err := os.Stat(filepath.Join(dir, KfakePartitionsDir)); err == nil && st.IsDir() {
		ents, err := os.ReadDir(filepath.Join(dir, KfakePartitionsDir))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.IsDir() {
				pdirs = append(pdirs, filepath.Join(dir, KfakePartitionsDir, e.Name()))
			}
		}
	} else {
		// One partition directory: topics.json is two levels up when
		// it sits in its data directory.
		clean := filepath.Clean(dir)
		pdirs = []string{clean}
		root = ""
		if parent := filepath.Dir(clean); filepath.Base(parent) == KfakePartitionsDir {
			root = filepath.Dir(parent)
		}
	}
	topics, topicsErr, err := readKfakeTopics(root)
	if err != nil {
		return nil, err
	}
	var out []*Partition
	for _, pd := range pdirs {
		topic, num, err := ParseKfakePartitionDir(filepath.Base(pd))
		if err != nil {
			if len(pdirs) == 1 {
				return nil, err
			}
			continue // not a partition directory kfake would name
		}
		p, err := openKfakePartition(pd, topic, num, o)
		if err != nil {
			return nil, err
		}
		if id, ok := topics[topic]; ok {
			p.Metadata = &PartitionMetadata{Name: KfakeTopicsFile, TopicID: id}
		}
		if topicsErr != nil {
			p.Damage = append(p.Damage, topicsErr)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("loader: %s: no kfake partition directory (%s/<topic>-<partition> holding <base>.dat segments)", dir, KfakePartitionsDir)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Input, out[j].Input
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return out, nil
}

// ParseKfakePartitionDir splits a kfake partition directory name,
// url.PathEscape(topic)+"-"+partition (kfake partDir), into its parts.
func ParseKfakePartitionDir(name string) (topic string, partition int32, err error) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, fmt.Errorf("loader: %q is not a kfake partition directory name (<escaped topic>-<partition>)", name)
	}
	topic, uerr := url.PathUnescape(name[:i])
	p, perr := strconv.ParseInt(name[i+1:], 10, 32)
	if uerr != nil || perr != nil || p < 0 || topic == "" {
		return "", 0, fmt.Errorf("loader: %q is not a kfake partition directory name (<escaped topic>-<partition>)", name)
	}
	return topic, int32(p), nil
}

// readKfakeTopics maps topic names to ids from root's topics.json. A
// missing file (or root "") gives no map; a malformed one gives the
// problem as a FormatError.
func readKfakeTopics(root string) (map[string]UUID, *FormatError, error) {
	if root == "" {
		return nil, nil, nil
	}
	data, err := readFileIfExists(filepath.Join(root, KfakeTopicsFile))
	if err != nil || data == nil {
		return nil, nil, err
	}
	var v struct {
		Version int `json:"version"`
		Topics  []struct {
			Name string `json:"name"`
			ID   string `json:"id"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, jsonErr(KfakeTopicsFile, data, err), nil
	}
	m := map[string]UUID{}
	for i, t := range v.Topics {
		var id UUID
		b, err := base64.StdEncoding.DecodeString(t.ID)
		if err != nil || len(b) != 16 {
			return m, formatErr(KfakeTopicsFile, 0, "json", "topics[%d] (%q): id %q is not 16 bytes of standard base64", i, t.Name, t.ID), nil
		}
		copy(id[:], b)
		m[t.Name] = id
	}
	return m, nil, nil
}

// jsonErr makes a FormatError of a json.Unmarshal error, at the byte
// encoding/json reports when it reports one.
func jsonErr(file string, data []byte, err error) *FormatError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return formatErr(file, se.Offset, "json", "%v", se)
	case errors.As(err, &te):
		return formatErr(file, te.Offset, "json", "%v", te)
	}
	return formatErr(file, int64(len(data)), "json", "%v", err)
}

// kfakeBase parses "<decimal base offset><suffix>" (kfake segmentFileName
// and indexFileName: %d, not zero-padded).
func kfakeBase(name, suffix string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, suffix)
	if !ok || digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	return v, err == nil
}

// kfakeSnapshot is the part of kfake's persistPartSnapshot used here.
type kfakeSnapshot struct {
	Version          int   `json:"version"`
	HighWatermark    int64 `json:"high_watermark"`
	LastStableOffset int64 `json:"last_stable_offset"`
	LogStartOffset   int64 `json:"log_start_offset"`
	Segments         []struct {
		BaseOffset int64 `json:"base_offset"`
		Size       int64 `json:"size"`
	} `json:"segments"`
}

func openKfakePartition(dir, topic string, num int32, o ScanOptions) (*Partition, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &Partition{
		Dir: dir, RecoveryPoint: -1, CleanerOffset: -1,
		Input: &txnindex.Partition{Topic: topic, Partition: num, LogStartOffset: -1, HighWatermark: -1},
	}
	var bases []int64
	idx := map[int64]string{}
	haveSnap := false
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() {
			p.Ignored = append(p.Ignored, IgnoredFile{name, "directory"})
			continue
		}
		if why := notRegularReason(e.Type()); why != "" {
			p.Ignored = append(p.Ignored, IgnoredFile{name, why})
			continue
		}
		if b, ok := kfakeBase(name, ".dat"); ok {
			bases = append(bases, b)
			continue
		}
		if b, ok := kfakeBase(name, ".idx"); ok {
			idx[b] = name
			continue
		}
		switch {
		case name == KfakeSnapshotFile:
			haveSnap = true
		case strings.HasSuffix(name, ".tmp"):
			p.Ignored = append(p.Ignored, IgnoredFile{name, "unfinished kfake atomic write (.tmp, deleted at startup)"})
		default:
			p.Ignored = append(p.Ignored, IgnoredFile{name, "not a kfake segment, index or snapshot file"})
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	for _, b := range bases {
		name := fmt.Sprintf("%d.dat", b)
		path := filepath.Join(dir, name)
		var f *SegmentFile
		err := withFile(path, func(fh *os.File, size int64) error {
			var err error
			f, _, err = scanFile(fh, size, name, o, nil, 0, 0)
			if f != nil {
				f.Batches = trimBatches(f.Batches)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		// Reopened read-only on demand by Records and ReadBatch.
		f.r, f.path, f.BaseOffset = nil, path, b
		p.Damage = append(p.Damage, f.Damage...)
		p.Segments = append(p.Segments, &SegmentFiles{Log: f})
		if in, ok := idx[b]; ok {
			delete(idx, b)
			if err := p.checkKfakeIndex(filepath.Join(dir, in), in, f); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range idx {
		p.Ignored = append(p.Ignored, IgnoredFile{n, "kfake index with no .dat of this base offset"})
	}
	// assemble leaves TxnIndexOnDisk false (no Kafka index file is
	// attached) and OffsetIndex nil, so Build rebuilds both.
	p.assemble()

	p.Input.HighWatermarkSource = "log_end_offset (no kfake " + KfakeSnapshotFile + ": it is written at shutdown)"
	if haveSnap {
		data, err := readFileIfExists(filepath.Join(dir, KfakeSnapshotFile))
		if err := p.damage(err); err != nil {
			return nil, err
		}
		var s kfakeSnapshot
		switch err := json.Unmarshal(data, &s); {
		case err != nil:
			p.Damage = append(p.Damage, jsonErr(KfakeSnapshotFile, data, err))
			p.Input.HighWatermarkSource = "log_end_offset (kfake " + KfakeSnapshotFile + " unreadable)"
		case s.Version > kfakePersistVersion:
			p.Ignored = append(p.Ignored, IgnoredFile{KfakeSnapshotFile, fmt.Sprintf("version %d is newer than the %d read here", s.Version, kfakePersistVersion)})
			p.Input.HighWatermarkSource = "log_end_offset (kfake " + KfakeSnapshotFile + " of an unknown version)"
		case !p.kfakeSnapshotMatches(&s):
			// kfake snapshotMatchesSegments: a stale snapshot is
			// not used; the partition is replayed from its segments.
			p.Ignored = append(p.Ignored, IgnoredFile{KfakeSnapshotFile, "stale: its segment list does not match the .dat files (kfake replays the segments instead)"})
			p.Input.HighWatermarkSource = "log_end_offset (kfake " + KfakeSnapshotFile + " stale)"
		default:
			p.Input.HighWatermark = s.HighWatermark
			p.Input.LogStartOffset = s.LogStartOffset
			p.Input.HighWatermarkSource = "kfake " + KfakeSnapshotFile
		}
	}
	sort.SliceStable(p.Ignored, func(i, j int) bool { return p.Ignored[i].Name < p.Ignored[j].Name })
	return p, nil
}

// kfakeSnapshotMatches is kfake's snapshotMatchesSegments: the same
// segments, by base offset and size, in order.
func (p *Partition) kfakeSnapshotMatches(s *kfakeSnapshot) bool {
	if len(s.Segments) != len(p.Segments) {
		return false
	}
	for i, ss := range s.Segments {
		if l := p.Segments[i].Log; ss.BaseOffset != l.BaseOffset || ss.Size != l.Size {
			return false
		}
	}
	return true
}

// checkKfakeIndex validates a .idx against the batches scanned from its
// .dat: one checksummed 15-byte entry per batch, whose epoch is the
// batch's partition leader epoch (kfake pushBatch sets both from the
// partition epoch). Problems go to Damage; the entries themselves carry
// nothing the decision needs.
func (p *Partition) checkKfakeIndex(path, name string, seg *SegmentFile) error {
	data, err := readInside(path, 1<<30) // 15 bytes per batch
	if err != nil {
		return err
	}
	n := len(data) / kfakeIndexEntrySize
	if r := len(data) % kfakeIndexEntrySize; r != 0 {
		p.Damage = append(p.Damage, formatErr(name, int64(n*kfakeIndexEntrySize), "entry",
			"truncated: %d trailing bytes, fewer than the %d of an entry", r, kfakeIndexEntrySize))
	}
	for i := 0; i < n; i++ {
		e := data[i*kfakeIndexEntrySize : (i+1)*kfakeIndexEntrySize]
		pos := int64(i * kfakeIndexEntrySize)
		if v := e[0]; v == 0 || v > kfakePersistVersion {
			p.Damage = append(p.Damage, formatErr(name, pos, "entry", "unknown version: want 1, found %d", v))
			continue
		}
		if sum := byte(crc32.Checksum(e[2:], castagnoli)); sum != e[1] {
			p.Damage = append(p.Damage, formatErr(name, pos, "entry", "bad checksum: stored %#02x, computed %#02x (low byte of CRC-32C over bytes [2,15))", e[1], sum))
			continue
		}
		if i < len(seg.Batches) {
			b := &seg.Batches[i]
			if epoch := int32(binary.LittleEndian.Uint32(e[2:])); b.Magic() >= 2 && epoch != b.PartitionLeaderEpoch {
				p.Damage = append(p.Damage, formatErr(name, pos, "entry", "epoch %d, but batch %d (offset %d) has partition leader epoch %d", epoch, i, b.BaseOffset, b.PartitionLeaderEpoch))
			}
		}
	}
	switch {
	case n > len(seg.Batches):
		p.Damage = append(p.Damage, formatErr(name, int64(len(seg.Batches)*kfakeIndexEntrySize), "entry",
			"%d entries for the %d batches of %s: kfake truncates the extra entries on load", n, len(seg.Batches), seg.Name))
	case n < len(seg.Batches):
		p.Damage = append(p.Damage, formatErr(name, int64(n*kfakeIndexEntrySize), "entry",
			"%d entries for the %d batches of %s: kfake loads the rest with epoch 0, outside any transaction", n, len(seg.Batches), seg.Name))
	}
	return nil
}
