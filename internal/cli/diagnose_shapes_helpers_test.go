package cli

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// The production shapes' log dirs: v2 batches encoded with kmsg, producer
// .snapshot files and .txnindex files written as the broker writes them,
// and the log dir's checkpoints.

var castagnoliTab = crc32.MakeTable(crc32.Castagnoli)

// shapeBatch is one batch of a test partition: data (ctrl < 0) or an
// end-transaction marker (ctrl 0 ABORT, 1 COMMIT) carrying coord.
//
// The log cleaner's marks: span > n spreads a data batch's n records over
// span offsets, the last n surviving, as compaction leaves a batch whose
// earlier keys were superseded; n 0 with span is a data batch the cleaner
// kept as an empty header (MemoryRecords.filterTo, BatchRetention
// .RETAIN_EMPTY); emptied is a marker kept the same way with no record;
// horizon > 0 sets the KIP-534 delete-horizon bit with baseTimestamp
// horizon, which the cleaner writes on a marker it will remove once the
// horizon passes.
type shapeBatch struct {
	base    int64
	pid     int64
	epoch   int16
	txn     bool
	ctrl    int
	n       int
	ts      int64
	coord   int32
	span    int
	emptied bool
	horizon int64
}

func (b shapeBatch) encode() []byte {
	var recs []byte
	rb := kmsg.RecordBatch{FirstOffset: b.base, Magic: 2, FirstTimestamp: b.ts, MaxTimestamp: b.ts, ProducerID: b.pid,
		ProducerEpoch: b.epoch, FirstSequence: 0}
	if b.pid < 0 {
		rb.ProducerEpoch, rb.FirstSequence = -1, -1
	}
	if b.txn {
		rb.Attributes = 0x10
	}
	switch {
	case b.ctrl >= 0 && b.emptied:
		rb.Attributes, rb.FirstSequence = 0x30, -1
	case b.ctrl >= 0:
		rb.Attributes, rb.FirstSequence = 0x30, -1
		key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(b.ctrl))
		val := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), uint32(b.coord))
		r := kmsg.Record{Key: key, Value: val}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs, rb.NumRecords = r.AppendTo(nil), 1
	default:
		span := max(b.span, b.n)
		for i := span - b.n; i < span; i++ {
			r := kmsg.Record{OffsetDelta: int32(i), Key: []byte(fmt.Sprintf("k%d", b.base+int64(i))), Value: []byte("v")}
			r.Length = int32(len(r.AppendTo(nil)) - 1)
			recs = r.AppendTo(recs)
		}
		rb.NumRecords, rb.LastOffsetDelta = int32(b.n), int32(span-1)
	}
	if b.horizon > 0 {
		rb.Attributes |= 0x40
		rb.FirstTimestamp = b.horizon
	}
	rb.Records = recs
	rb.Length = int32(49 + len(recs))
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], castagnoliTab))
	return out
}

// shapeSnap is one entry of a producer .snapshot (ProducerSnapshot v1).
type shapeSnap struct {
	pid                   int64
	epoch                 int16
	lastSeq               int32
	lastOffset            int64
	offsetDelta           int32
	ts                    int64
	coordEpoch            int32
	currentTxnFirstOffset int64
}

// snapshotBytes encodes the entries as ProducerStateManager.writeSnapshot
// does: version 1, CRC-32C of the rest, the count, 46 bytes per entry.
func snapshotBytes(es []shapeSnap) []byte {
	out := make([]loader.SnapshotEntry, 0, len(es))
	for _, e := range es {
		out = append(out, loader.SnapshotEntry{ProducerID: txnindex.ProducerID(e.pid), Epoch: e.epoch, LastSequence: e.lastSeq,
			LastOffset: e.lastOffset, OffsetDelta: e.offsetDelta, Timestamp: e.ts, CoordinatorEpoch: e.coordEpoch,
			CurrentTxnFirstOffset: e.currentTxnFirstOffset})
	}
	return loader.AppendProducerSnapshot(nil, out)
}

// writeShapeDir writes a log dir holding topic-0: one segment named for
// its first batch (retention deleted everything before it), the snapshot
// when given, and the log dir's log-start and replication checkpoints.
func writeShapeDir(t *testing.T, topic string, logStart, hwm int64, bs []shapeBatch, snapOffset int64, snap []shapeSnap) string {
	t.Helper()
	dir := writeSegsDir(t, topic, logStart, hwm, -1, []shapeSeg{{bs: bs}})
	if snap != nil {
		writeShapeFile(t, filepath.Join(dir, topic+"-0", fmt.Sprintf("%020d.snapshot", snapOffset)), snapshotBytes(snap))
	}
	return dir
}

// shapeSeg is one segment: its batches and, when txn is not nil, the
// .txnindex file beside it (the broker creates one lazily, at the first
// ABORT marker appended to the segment).
type shapeSeg struct {
	bs  []shapeBatch
	txn []txnindex.AbortedTxn
}

// writeSegsDir writes a log dir holding topic-0 with the segments, each
// named for its first batch, the log-start and replication checkpoints,
// and a cleaner-offset-checkpoint line when cleaner >= 0 (the log
// cleaner's first dirty offset for the partition).
func writeSegsDir(t *testing.T, topic string, logStart, hwm, cleaner int64, segs []shapeSeg) string {
	t.Helper()
	dir := t.TempDir()
	pdir := filepath.Join(dir, topic+"-0")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		var log []byte
		for _, b := range s.bs {
			log = append(log, b.encode()...)
		}
		name := fmt.Sprintf("%020d", s.bs[0].base)
		writeShapeFile(t, filepath.Join(pdir, name+".log"), log)
		if s.txn != nil {
			var idx []byte
			for _, e := range s.txn {
				idx = e.AppendTo(idx)
			}
			writeShapeFile(t, filepath.Join(pdir, name+".txnindex"), idx)
		}
	}
	line := func(v int64) []byte { return []byte(fmt.Sprintf("0\n1\n%s 0 %d\n", topic, v)) }
	writeShapeFile(t, filepath.Join(dir, "log-start-offset-checkpoint"), line(logStart))
	writeShapeFile(t, filepath.Join(dir, "replication-offset-checkpoint"), line(hwm))
	if cleaner >= 0 {
		writeShapeFile(t, filepath.Join(dir, "cleaner-offset-checkpoint"), line(cleaner))
	}
	return dir
}

func writeShapeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
