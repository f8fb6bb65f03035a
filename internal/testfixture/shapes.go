package testfixture

import (
	"encoding/binary"
	"fmt"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// castagnoliTab is the CRC-32C table of the v2 batch checksum (KIP-98).
var castagnoliTab = crc32.MakeTable(crc32.Castagnoli)

// Batch is one batch of a test partition: data (Ctrl < 0, N records) or
// an end-transaction marker (Ctrl 0 ABORT, 1 COMMIT) carrying Coord.
//
// The log cleaner's marks: Span > N spreads a data batch's N records over
// Span offsets, the last N surviving, as compaction leaves a batch whose
// earlier keys were superseded; N 0 with Span is a data batch the cleaner
// kept as an empty header (MemoryRecords.filterTo, BatchRetention
// .RETAIN_EMPTY); Emptied is a marker kept the same way with no record;
// Horizon > 0 sets the KIP-534 delete-horizon bit with baseTimestamp
// Horizon, which the cleaner writes on a marker it will remove once the
// horizon passes.
type Batch struct {
	Base    int64
	PID     int64
	Epoch   int16
	Txn     bool
	Ctrl    int
	N       int
	TS      int64
	Coord   int32
	Span    int
	Emptied bool
	Horizon int64
}

// Encode is the batch as a broker writes it: v2, kmsg-encoded, CRC-32C.
func (b Batch) Encode() []byte {
	var recs []byte
	rb := kmsg.RecordBatch{FirstOffset: b.Base, Magic: 2, FirstTimestamp: b.TS, MaxTimestamp: b.TS, ProducerID: b.PID,
		ProducerEpoch: b.Epoch, FirstSequence: 0}
	if b.PID < 0 {
		rb.ProducerEpoch, rb.FirstSequence = -1, -1
	}
	if b.Txn {
		rb.Attributes = 0x10
	}
	switch {
	case b.Ctrl >= 0 && b.Emptied:
		rb.Attributes, rb.FirstSequence = 0x30, -1
	case b.Ctrl >= 0:
		rb.Attributes, rb.FirstSequence = 0x30, -1
		key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(b.Ctrl))
		val := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), uint32(b.Coord))
		r := kmsg.Record{Key: key, Value: val}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs, rb.NumRecords = r.AppendTo(nil), 1
	default:
		span := max(b.Span, b.N)
		for i := span - b.N; i < span; i++ {
			r := kmsg.Record{OffsetDelta: int32(i), Key: []byte(fmt.Sprintf("k%d", b.Base+int64(i))), Value: []byte("v")}
			r.Length = int32(len(r.AppendTo(nil)) - 1)
			recs = r.AppendTo(recs)
		}
		rb.NumRecords, rb.LastOffsetDelta = int32(b.N), int32(span-1)
	}
	if b.Horizon > 0 {
		rb.Attributes |= 0x40
		rb.FirstTimestamp = b.Horizon
	}
	rb.Records = recs
	rb.Length = int32(49 + len(recs))
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], castagnoliTab))
	return out
}

// Snap is one entry of a producer .snapshot (ProducerSnapshot v1).
type Snap struct {
	PID                   int64
	Epoch                 int16
	LastSeq               int32
	LastOffset            int64
	OffsetDelta           int32
	TS                    int64
	CoordEpoch            int32
	CurrentTxnFirstOffset int64
}

// SnapshotBytes encodes the entries as ProducerStateManager.writeSnapshot
// does: version 1, CRC-32C of the rest, the count, 46 bytes per entry.
func SnapshotBytes(es []Snap) []byte {
	out := make([]loader.SnapshotEntry, 0, len(es))
	for _, e := range es {
		out = append(out, loader.SnapshotEntry{ProducerID: txnindex.ProducerID(e.PID), Epoch: e.Epoch, LastSequence: e.LastSeq,
			LastOffset: e.LastOffset, OffsetDelta: e.OffsetDelta, Timestamp: e.TS, CoordinatorEpoch: e.CoordEpoch,
			CurrentTxnFirstOffset: e.CurrentTxnFirstOffset})
	}
	return loader.AppendProducerSnapshot(nil, out)
}

// WriteShapeDir writes a log dir holding topic-0: one segment named for
// its first batch (retention deleted everything before it), the snapshot
// when given, and the log dir's log-start and replication checkpoints.
func WriteShapeDir(t testing.TB, topic string, logStart, hwm int64, bs []Batch, snapOffset int64, snap []Snap) string {
	t.Helper()
	dir := WriteSegsDir(t, topic, logStart, hwm, -1, []Seg{{Batches: bs}})
	if snap != nil {
		WriteFile(t, filepath.Join(dir, topic+"-0", fmt.Sprintf("%020d.snapshot", snapOffset)), SnapshotBytes(snap))
	}
	return dir
}

// Seg is one segment: its batches and, when Txn is not nil, the
// .txnindex file beside it (the broker creates one lazily, at the first
// ABORT marker appended to the segment).
type Seg struct {
	Batches []Batch
	Txn     []txnindex.AbortedTxn
}

// WriteSegsDir writes a log dir holding topic-0 with the segments, each
// named for its first batch, the log-start and replication checkpoints,
// and a cleaner-offset-checkpoint line when cleaner >= 0 (the log
// cleaner's first dirty offset for the partition).
func WriteSegsDir(t testing.TB, topic string, logStart, hwm, cleaner int64, segs []Seg) string {
	t.Helper()
	dir := t.TempDir()
	pdir := filepath.Join(dir, topic+"-0")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		var log []byte
		for _, b := range s.Batches {
			log = append(log, b.Encode()...)
		}
		name := fmt.Sprintf("%020d", s.Batches[0].Base)
		WriteFile(t, filepath.Join(pdir, name+".log"), log)
		if s.Txn != nil {
			var idx []byte
			for _, e := range s.Txn {
				idx = e.AppendTo(idx)
			}
			WriteFile(t, filepath.Join(pdir, name+".txnindex"), idx)
			// With its .index, empty (valid: a sparse index may have
			// no entry): without one the broker recovers the segment
			// and rebuilds the .txnindex instead (LogSegment.sanityCheck).
			WriteFile(t, filepath.Join(pdir, name+".index"), nil)
		}
	}
	line := func(v int64) []byte { return []byte(fmt.Sprintf("0\n1\n%s 0 %d\n", topic, v)) }
	WriteFile(t, filepath.Join(dir, "log-start-offset-checkpoint"), line(logStart))
	WriteFile(t, filepath.Join(dir, "replication-offset-checkpoint"), line(hwm))
	if cleaner >= 0 {
		WriteFile(t, filepath.Join(dir, "cleaner-offset-checkpoint"), line(cleaner))
	}
	return dir
}

// WriteFile writes data to the file p, failing the test on error.
func WriteFile(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// HoledBatch is a plain v2 data batch at base whose header claims
// lastDelta, with records at deltas: the cleaner's shape (KIP-98: a
// compacted batch keeps its offsets), or a hostile header's.
func HoledBatch(base int64, lastDelta int32, deltas ...int32) []byte {
	var raw []byte
	for _, d := range deltas {
		r := kmsg.Record{OffsetDelta: d, Value: []byte("v")}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		raw = r.AppendTo(raw)
	}
	rb := kmsg.RecordBatch{FirstOffset: base, Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		LastOffsetDelta: lastDelta, NumRecords: int32(len(deltas)), Records: raw, Length: int32(49 + len(raw))}
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}
