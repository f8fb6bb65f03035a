package loader

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func snapshotFile(entries ...SnapshotEntry) []byte {
	b := binary.BigEndian.AppendUint16(nil, 1)
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.ProducerID))
		b = binary.BigEndian.AppendUint16(b, uint16(e.Epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(e.LastSequence))
		b = binary.BigEndian.AppendUint64(b, uint64(e.LastOffset))
		b = binary.BigEndian.AppendUint32(b, uint32(e.OffsetDelta))
		b = binary.BigEndian.AppendUint64(b, uint64(e.Timestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.CoordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.CurrentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(b[2:], crc32c(b[6:]))
	return b
}

func indexFile(base int64, entries ...txnindex.IndexEntry) []byte {
	var b []byte
	for _, e := range entries {
		b = binary.BigEndian.AppendUint32(b, uint32(e.Offset-base))
		b = binary.BigEndian.AppendUint32(b, uint32(e.Position))
	}
	return append(b, make([]byte, 8*16)...) // preallocated tail
}

// TestOpenPartitionLayout builds a log directory exercising the LogLoader
// rules: swap replacement, .deleted/.cleaned files, a swap invalidated by a
// .cleaned file (KAFKA-6264), orphaned indexes, lazily created .txnindex
// files, a corrupt newest snapshot, seeding from a snapshot, and the
// log-dir checkpoints.
func TestOpenPartitionLayout(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "my-topic-0")
	writeFile(t, filepath.Join(root, ReplicationOffsetCheckpoint), []byte("0\n2\nmy-topic 0 113\nother 3 5\n"))
	writeFile(t, filepath.Join(root, LogStartOffsetCheckpoint), []byte("0\n1\nmy-topic 0 102\n"))
	writeFile(t, filepath.Join(root, RecoveryPointOffsetCheckpoint), []byte("0\r\n1\r\nmy-topic 0 106\r\n"))
	writeFile(t, filepath.Join(root, "meta.properties"), []byte("version=1\n"))

	// Segment 100: txn of pid 7 aborted, then plain data.
	seg100 := concat(dataBatch(t, 100, 7, true, 3), marker(t, 103, 7, false, 1), dataBatch(t, 104, -1, false, 2))
	writeFile(t, filepath.Join(dir, "00000000000000000100.log"), seg100)
	writeFile(t, filepath.Join(dir, "00000000000000000100.index"), indexFile(100))
	writeFile(t, filepath.Join(dir, "00000000000000000100.timeindex"), nil)
	writeFile(t, filepath.Join(dir, "00000000000000000100.txnindex"),
		txnindex.EncodeTxnIndex([]txnindex.AbortedTxn{{ProducerID: 7, FirstOffset: 100, LastOffset: 103, LastStableOffset: 90}}))
	// Segment 106: pid 8 committed; an index but no .txnindex.
	seg106 := concat(dataBatch(t, 106, 8, true, 2), marker(t, 108, 8, true, 1), dataBatch(t, 109, -1, false, 2))
	writeFile(t, filepath.Join(dir, "00000000000000000106.log"), seg106)
	writeFile(t, filepath.Join(dir, "00000000000000000106.index"), indexFile(106, txnindex.IndexEntry{Offset: 109, Position: 150}))
	// Segment 111 and a swap replacing it and segment 112; the swap holds
	// the ABORT of pid 5, whose transaction began at 90, before the log.
	writeFile(t, filepath.Join(dir, "00000000000000000111.log"), dataBatch(t, 111, -1, false, 1))
	writeFile(t, filepath.Join(dir, "00000000000000000112.log"), dataBatch(t, 112, -1, false, 1))
	writeFile(t, filepath.Join(dir, "00000000000000000111.log.swap"), concat(marker(t, 111, 5, false, 1), dataBatch(t, 112, -1, false, 1)))
	// Pending deletes and unfinished cleaning: ignored. The swap at 130
	// is at or past the .cleaned offset and is deleted by the broker.
	writeFile(t, filepath.Join(dir, "00000000000000000050.log.deleted"), dataBatch(t, 50, -1, false, 1))
	writeFile(t, filepath.Join(dir, "00000000000000000120.log.cleaned"), dataBatch(t, 120, -1, false, 1))
	writeFile(t, filepath.Join(dir, "00000000000000000130.log.swap"), dataBatch(t, 130, -1, false, 1))
	writeFile(t, filepath.Join(dir, "00000000000000000200.index"), indexFile(200))
	// Snapshots: 106 is good, 113 (newest, at the log end) is corrupt.
	// (One at 111 would lie in the range the swap replaces, which the
	// broker deletes: TestSnapshotsBrokerDeletes.)
	writeFile(t, filepath.Join(dir, "00000000000000000106.snapshot"), snapshotFile(
		SnapshotEntry{ProducerID: 5, Epoch: 3, LastOffset: 95, CoordinatorEpoch: 1, CurrentTxnFirstOffset: 90},
		SnapshotEntry{ProducerID: 6, Epoch: 0, LastOffset: 99, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1},
		SnapshotEntry{ProducerID: 7, Epoch: 1, LastOffset: 102, CoordinatorEpoch: 1, CurrentTxnFirstOffset: 100},
	))
	bad := snapshotFile()
	bad[3] ^= 1
	writeFile(t, filepath.Join(dir, "00000000000000000113.snapshot"), bad)
	writeFile(t, filepath.Join(dir, LeaderEpochCheckpointFile), []byte("0\n2\n0 0\n1 104\n"))
	writeFile(t, filepath.Join(dir, PartitionMetadataFile), []byte("version: 0\ntopic_id: Fa1tHmowQS2lSyUrEd4jSA\n"))
	// Not partitions.
	if err := os.MkdirAll(filepath.Join(root, "lost+found"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "my-topic-1.0123456789abcdef-delete"), 0o755); err != nil {
		t.Fatal(err)
	}

	p, err := OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	tp := p.Input
	if tp.Topic != "my-topic" || tp.Partition != 0 {
		t.Errorf("topic %q partition %d", tp.Topic, tp.Partition)
	}
	var names []string
	for _, s := range p.Segments {
		names = append(names, s.Log.Name)
	}
	if want := []string{"00000000000000000100.log", "00000000000000000106.log", "00000000000000000111.log.swap"}; !slices.Equal(names, want) {
		t.Fatalf("segments %v, want %v", names, want)
	}
	if got := tp.Segments[2].BaseOffset; got != 111 {
		t.Errorf("swap segment base %d", got)
	}
	onDisk := []bool{tp.Segments[0].TxnIndexOnDisk, tp.Segments[1].TxnIndexOnDisk, tp.Segments[2].TxnIndexOnDisk}
	if !slices.Equal(onDisk, []bool{true, true, false}) {
		t.Errorf("TxnIndexOnDisk %v, want [true true false]", onDisk)
	}
	if len(tp.Segments[0].TxnIndex) != 1 || len(tp.Segments[1].TxnIndex) != 0 {
		t.Errorf("txn index entries %v %v", tp.Segments[0].TxnIndex, tp.Segments[1].TxnIndex)
	}
	// An index of zeros holds one entry, (base, 0), exactly as
	// DumpLogSegments prints it: only zero slots after the first end it.
	if !slices.Equal(tp.Segments[0].OffsetIndex, []txnindex.IndexEntry{{Offset: 100, Position: 0}}) ||
		!slices.Equal(tp.Segments[1].OffsetIndex, []txnindex.IndexEntry{{Offset: 109, Position: 150}}) || tp.Segments[2].OffsetIndex != nil {
		t.Errorf("offset indexes %v %v %v", tp.Segments[0].OffsetIndex, tp.Segments[1].OffsetIndex, tp.Segments[2].OffsetIndex)
	}
	if len(tp.Batches) != 8 {
		t.Fatalf("%d batches, want 8", len(tp.Batches))
	}
	for i, b := range tp.Batches {
		want := int32(0)
		if i >= 3 {
			want = 1
		}
		if i >= 6 {
			want = 2
		}
		if b.Segment != want {
			t.Errorf("batch %d: segment %d, want %d", i, b.Segment, want)
		}
	}
	if tp.LogStartOffset != 102 || tp.HighWatermark != 113 || tp.HighWatermarkSource != ReplicationOffsetCheckpoint || p.RecoveryPoint != 106 || p.CleanerOffset != -1 {
		t.Errorf("checkpoints: LSO %d HWM %d (%s) recovery %d cleaner %d", tp.LogStartOffset, tp.HighWatermark, tp.HighWatermarkSource, p.RecoveryPoint, p.CleanerOffset)
	}
	if p.Snapshot == nil || p.Snapshot.Name != "00000000000000000106.snapshot" || len(p.Snapshots) != 2 {
		t.Fatalf("snapshot %+v of %d", p.Snapshot, len(p.Snapshots))
	}
	// The seed keeps the entry's coordinator epoch and timestamp, which
	// the diagnosis ages it by and puts in the abort command.
	if want := []txnindex.OngoingTxn{{ProducerID: 5, ProducerEpoch: 3, FirstOffset: 90, CoordinatorEpoch: 1}}; !slices.Equal(tp.Ongoing, want) {
		t.Errorf("Ongoing %v, want %v", tp.Ongoing, want)
	}
	if tp.Snapshot == nil || tp.Snapshot.Name != "00000000000000000106.snapshot" || tp.Snapshot.Producers[5].CoordinatorEpoch != 1 {
		t.Errorf("Input.Snapshot %+v", tp.Snapshot)
	}
	if len(p.Damage) != 1 || p.Damage[0].File != "00000000000000000113.snapshot" || !strings.Contains(p.Damage[0].Msg, "bad CRC") {
		t.Errorf("damage %v", p.Damage)
	}
	if p.LeaderEpochs == nil || len(p.LeaderEpochs.Entries) != 2 || p.Metadata == nil || p.Metadata.TopicID.String() != "Fa1tHmowQS2lSyUrEd4jSA" {
		t.Errorf("leader epochs %+v metadata %+v", p.LeaderEpochs, p.Metadata)
	}
	ignored := map[string]string{}
	for _, f := range p.Ignored {
		ignored[f.Name] = f.Reason
	}
	for _, n := range []string{"00000000000000000050.log.deleted", "00000000000000000120.log.cleaned", "00000000000000000130.log.swap",
		"00000000000000000200.index", "00000000000000000111.log", "00000000000000000112.log"} {
		if ignored[n] == "" {
			t.Errorf("%s not ignored; ignored: %v", n, ignored)
		}
	}

	// The seeded transaction is aborted by the marker in the swap segment.
	l := p.Build()
	var seeded *txnindex.Txn
	for i := range l.Txns {
		if l.Txns[i].ProducerID == 5 {
			seeded = &l.Txns[i]
		}
	}
	if seeded == nil || !seeded.Seeded || seeded.State != txnindex.TxnAborted || seeded.MarkerOffset != 111 {
		t.Errorf("seeded transaction %+v", seeded)
	}

	// Records reopens the segment file on demand.
	rs, err := p.Segments[0].Log.Records(p.Segments[0].Log.Batches[1])
	if err != nil || len(rs) != 1 || rs[0].Control != txnindex.ControlAbort {
		t.Errorf("Records of the marker: %+v %v", rs, err)
	}

	ld, err := OpenLogDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Partitions) != 2 || ld.Partitions[0].Input.Partition != 0 || ld.Partitions[1].DirKind != "delete" {
		t.Errorf("log dir partitions: %d", len(ld.Partitions))
	}
	if len(ld.Skipped) != 2 { // lost+found, meta.properties
		t.Errorf("skipped %v", ld.Skipped)
	}
}

// TestOpenPartitionBareLogs: a directory of .log files only (a copy without
// indexes) leaves every .txnindex to be rebuilt.
func TestOpenPartitionBareLogs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-3")
	writeFile(t, filepath.Join(dir, "00000000000000000000.log"), concat(dataBatch(t, 0, 1, true, 2), marker(t, 2, 1, false, 0)))
	p, err := OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Input.Segments[0].TxnIndexOnDisk || p.Input.HighWatermark != -1 || p.Input.LogStartOffset != -1 || p.Input.Partition != 3 {
		t.Errorf("%+v", p.Input.Segments[0])
	}
	if l := p.Build(); len(l.RebuiltIndex[0]) != 1 {
		t.Errorf("rebuilt index %v", l.RebuiltIndex)
	}
}

func TestParsePartitionDir(t *testing.T) {
	for _, tc := range []struct {
		name, topic string
		part        int32
		kind        string
		ok          bool
	}{
		{"my-topic-12", "my-topic", 12, "", true},
		{"__consumer_offsets-0", "__consumer_offsets", 0, "", true},
		{"t-0.3b2c4d-delete", "t", 0, "delete", true},
		{"a-b-1.x-future", "a-b", 1, "future", true},
		{"t-0.y-stray", "t", 0, "stray", true},
		{"nodash", "", 0, "", false},
		{"-1", "", 0, "", false},
		{"t-x", "", 0, "", false},
		{"t--1", "t-", 1, "", true}, // lastIndexOf('-'), as Kafka
		// Topic.validate refuses "." and ".."; "..." and "a." are topics.
		{".-0", "", 0, "", false},
		{"..-0", "", 0, "", false},
		{"..-3.abc-delete", "", 0, "", false},
		{"...-0", "...", 0, "", true},
		{"a.-0", "a.", 0, "", true},
	} {
		topic, part, kind, err := ParsePartitionDir(tc.name)
		if (err == nil) != tc.ok || topic != tc.topic || part != tc.part || kind != tc.kind {
			t.Errorf("%q: %q %d %q %v", tc.name, topic, part, kind, err)
		}
	}
}

// TestRealIndexFiles decodes the broker-written index files of the corpus,
// including the KRaft metadata log's, whose segment was not published.
func TestRealIndexFiles(t *testing.T) {
	for _, path := range realFiles(t, "*.index") {
		base, _ := parseBaseOffset(filepath.Base(path), ".index")
		withFile(path, func(f *os.File, size int64) error {
			x, err := ReadOffsetIndex(f, size, filepath.Base(path), base)
			if err != nil || len(x.Entries) == 0 && size > 8 {
				t.Errorf("%s: %d entries, %v", rel(path), len(x.Entries), err)
			}
			return nil
		})
	}
	for _, path := range realFiles(t, "*.timeindex") {
		base, _ := parseBaseOffset(filepath.Base(path), ".timeindex")
		withFile(path, func(f *os.File, size int64) error {
			x, err := ReadTimeIndex(f, size, filepath.Base(path), base)
			if err != nil || len(x.Entries) == 0 && size >= 12 {
				t.Errorf("%s: %d entries, %v", rel(path), len(x.Entries), err)
			}
			return nil
		})
	}
	for _, path := range realFiles(t, "*.snapshot") {
		data, _ := os.ReadFile(path)
		if s, err := ReadProducerSnapshot(data, filepath.Base(path)); err != nil || s.Offset < 0 {
			t.Errorf("%s: %v", rel(path), err)
		}
	}
	for _, name := range []string{ReplicationOffsetCheckpoint, RecoveryPointOffsetCheckpoint, LogStartOffsetCheckpoint, CleanerOffsetCheckpoint} {
		for _, path := range realFiles(t, name) {
			fh, _ := os.Open(path)
			if _, err := ReadOffsetCheckpoint(fh, name); err != nil {
				t.Errorf("%s: %v", rel(path), err)
			}
			fh.Close()
		}
	}
}
