package e2e

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// The inputs the browser tests build: partition directories written as a
// broker writes them (kmsg-encoded v2 batches, producer snapshots,
// .txnindex files, checkpoints), log directories with the internal topics
// built by package scenario, and kfake clusters. internal/cli's tests
// build the same inputs under the same names, so that a page is tested on
// the story the command is.

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

// holedBatch is a plain v2 data batch at base whose header claims
// lastDelta, with records at deltas: the cleaner's shape (KIP-98: a
// compacted batch keeps its offsets), or a hostile header's.
func holedBatch(base int64, lastDelta int32, deltas ...int32) []byte {
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

// joinStory is the stuck-LSO incident the internal-topic join answers:
// zombie-tx's transaction (offsets 3-5 of orders-0) never ends while the
// partition moves on; group orders-app waits at the LSO, audit still has
// records to read before it, and late-reader (a read_uncommitted
// consumer) is past it.
const joinStory = `topic orders partition 0
producer billing transactional id 5
producer zombie transactional id 6
begin billing
send billing 2
commit billing
begin zombie
send zombie 3
begin billing
send billing 2
commit billing
plain 3
`

// writeJoinLogDir writes joinStory's log dir: orders-0, the
// __consumer_offsets partitions of its groups and the __transaction_state
// partitions of both transactional ids, all kmsg-encoded as the
// coordinators write them. zombieParts are the partitions zombie-tx's
// coordinator lists for its Ongoing transaction.
func writeJoinLogDir(t *testing.T, zombieParts ...txnindex.TopicPartition) string {
	t.Helper()
	dir := t.TempDir()
	if err := scenario.WriteLogDir(dir, joinLogDirParts(t, nil, zombieParts...)...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// joinLogDirParts are writeJoinLogDir's partitions, with more groups'
// __consumer_offsets batches (by group) added to theirs.
func joinLogDirParts(t *testing.T, more map[string][]scenario.InternalBatch, zombieParts ...txnindex.TopicPartition) []*scenario.Built {
	t.Helper()
	s, err := scenario.Parse(strings.NewReader(joinStory), "join.txn")
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	const ts = 1_767_225_600_000
	parts := []*scenario.Built{data}
	groups := map[string][]scenario.InternalBatch{
		"orders-app":  {scenario.CoordinatorBatch(scenario.GroupMetadataRecord("orders-app", 1, ts), scenario.OffsetCommitRecord("orders-app", "orders", 0, 3, 0, "", ts+1))},
		"audit":       {scenario.CoordinatorBatch(scenario.OffsetCommitRecord("audit", "orders", 0, 0, 0, "", ts+2))},
		"late-reader": {scenario.CoordinatorBatch(scenario.OffsetCommitRecord("late-reader", "orders", 0, 9, 0, "", ts+3))},
	}
	maps.Copy(groups, more)
	byPart := map[int32][]scenario.InternalBatch{}
	for g, bs := range groups {
		n := internaltopic.PartitionFor(g, internaltopic.DefaultConsumerOffsetsPartitions)
		byPart[n] = append(byPart[n], bs...)
	}
	for n, bs := range byPart {
		b, err := scenario.BuildInternal(scenario.ConsumerOffsetsTopic, n, bs)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	billing := txnindex.TxnCoordinatorState{TransactionalID: "billing-tx", ProducerID: 5, PreviousProducerID: -1, NextProducerID: -1,
		NextProducerEpoch: -1, State: txnindex.TxnStatusCompleteCommit, TimeoutMs: 60000, StartTimestamp: ts, LastUpdateTimestamp: ts + 5}
	txnParts := map[int32][]scenario.InternalBatch{}
	add := func(id string, recs ...scenario.InternalRecord) {
		n := internaltopic.PartitionFor(id, internaltopic.DefaultTransactionStatePartitions)
		txnParts[n] = append(txnParts[n], scenario.CoordinatorBatch(recs...))
	}
	add("billing-tx", scenario.TxnStateRecord(billing))
	add("zombie-tx", scenario.OngoingTxnStates("zombie-tx", 6, 0, ts, zombieParts...)...)
	for n, bs := range txnParts {
		b, err := scenario.BuildInternal(scenario.TransactionStateTopic, n, bs)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	return parts
}

// lateStory: zombie-tx's transaction on orders-0 is the last thing
// written to the partition (nothing after it), as on an idle partition.
const lateStory = `topic orders partition 0
producer billing transactional id 5
producer zombie transactional id 6
begin billing
send billing 2
commit billing
plain 3
begin zombie
send zombie 3
`

// writeLateLogDir writes lateStory's log dir with, beside orders-0, the
// __transaction_state partitions holding states (none: no coordinator
// evidence), and returns it with the time of zombie-tx's last write.
func writeLateLogDir(t *testing.T, states ...scenario.InternalRecord) (string, time.Time) {
	t.Helper()
	s, err := scenario.Parse(strings.NewReader(lateStory), "late.txn")
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	last := data.Log.Batches[len(data.Log.Batches)-1].MaxTimestamp
	parts := []*scenario.Built{data}
	if len(states) > 0 {
		n := internaltopic.PartitionFor("zombie-tx", internaltopic.DefaultTransactionStatePartitions)
		b, err := scenario.BuildInternal(scenario.TransactionStateTopic, n, []scenario.InternalBatch{scenario.CoordinatorBatch(states...)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	dir := t.TempDir()
	if err := scenario.WriteLogDir(dir, parts...); err != nil {
		t.Fatal(err)
	}
	return dir, time.UnixMilli(last)
}

// zombieState is zombie-tx's coordinator state: producer 6 epoch 0 in
// state st, its transaction listing parts, with the transaction timeout ms.
func zombieState(st txnindex.TxnStatus, ms int32, parts ...txnindex.TopicPartition) scenario.InternalRecord {
	const ts = 1_767_225_600_000
	return scenario.TxnStateRecord(txnindex.TxnCoordinatorState{TransactionalID: "zombie-tx", ProducerID: 6, ProducerEpoch: 0,
		PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, State: st, TimeoutMs: ms, StartTimestamp: ts,
		LastUpdateTimestamp: ts, Partitions: parts})
}

// writeMetadataOnlyDir writes a log dir whose __cluster_metadata-0 holds
// what a copied KRaft node's may hold without its .log: three KRaft
// snapshots (.checkpoint), two producer snapshots, the first segment's
// .index and .timeindex, and quorum-state.
func writeMetadataOnlyDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "__cluster_metadata-0")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"00000000000000007364-0000000001.checkpoint": make([]byte, 64),
		"00000000000000021265-0000000006.checkpoint": make([]byte, 64),
		"00000000000000060500-0000000025.checkpoint": make([]byte, 64),
		"00000000000000053298.snapshot":              loader.AppendProducerSnapshot(nil, nil),
		"00000000000000066046.snapshot":              loader.AppendProducerSnapshot(nil, nil),
		"00000000000000000000.index":                 nil,
		"00000000000000000000.timeindex":             nil,
		"quorum-state":                               []byte(`{"leaderId":1,"leaderEpoch":25,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}`),
	}
	for n, b := range files {
		writeShapeFile(t, filepath.Join(p, n), b)
	}
	return dir
}

// writeHostileDir writes DIR/<topic>-0 holding a stuck partition: producer
// 7's transaction from offset 0, a year older than --now, then 3 records (LSO 0, log end 5)
// of a plain producer, so the transaction is hanging (KIP-664).
func writeHostileDir(t *testing.T, topic string, now time.Time) string {
	t.Helper()
	old := now.Add(-365 * 24 * time.Hour).UnixMilli()
	var log []byte
	for _, b := range []shapeBatch{
		{base: 0, pid: 7, epoch: 1, txn: true, ctrl: -1, n: 2, ts: old},
		{base: 2, pid: -1, ctrl: -1, n: 3, ts: now.Add(-time.Minute).UnixMilli()},
	} {
		log = append(log, b.encode()...)
	}
	pdir := filepath.Join(t.TempDir(), topic+"-0")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeShapeFile(t, filepath.Join(pdir, "00000000000000000000.log"), log)
	return pdir
}

// tieredDir writes a follower rebuilt from remote storage:
// log-start-offset-checkpoint 5,000, the first local segment at 8,000,
// the producer snapshot at 8,000 listing producer 6101's transaction open
// since 7,930 (whose data goes on at 8,007), the HWM checkpoint 8,020, a
// leader-epoch-checkpoint with epochs (epoch, start offset), and the log
// dir's remote-log-index-cache/ when cache is set.
func tieredDir(t *testing.T, cache bool, epochs [][2]int64) string {
	t.Helper()
	recent := brokerNow.Add(-time.Minute).UnixMilli()
	dir := writeShapeDir(t, "orders", 5000, 8020, []shapeBatch{
		{base: 8000, pid: -1, ctrl: -1, n: 7, ts: recent},
		{base: 8007, pid: 6101, epoch: 2, txn: true, ctrl: -1, n: 3, ts: recent},
		{base: 8010, pid: -1, ctrl: -1, n: 10, ts: recent},
	}, 8000, []shapeSnap{
		{pid: 6101, epoch: 2, lastSeq: 69, lastOffset: 7999, offsetDelta: 0, ts: recent, coordEpoch: 1, currentTxnFirstOffset: 7930},
	})
	lines := fmt.Sprintf("0\n%d\n", len(epochs))
	for _, e := range epochs {
		lines += fmt.Sprintf("%d %d\n", e[0], e[1])
	}
	writeShapeFile(t, filepath.Join(dir, "orders-0", "leader-epoch-checkpoint"), []byte(lines))
	if cache {
		if err := os.Mkdir(filepath.Join(dir, "remote-log-index-cache"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// openTxnSegment writes orders-0 with producer 6's transaction open since
// offset 3 (last write a day before brokerNow) and returns the path of its
// one segment, 00000000000000000000.log.
func openTxnSegment(t *testing.T) string {
	t.Helper()
	old := brokerNow.Add(-24 * time.Hour).UnixMilli()
	dir := writeShapeDir(t, "orders", 0, 9, []shapeBatch{
		{base: 0, pid: -1, ctrl: -1, n: 3, ts: old},
		{base: 3, pid: 6, epoch: 0, txn: true, ctrl: -1, n: 3, ts: old},
		{base: 6, pid: -1, ctrl: -1, n: 3, ts: old},
	}, 0, nil)
	return filepath.Join(dir, "orders-0", "00000000000000000000.log")
}

// brokerNow is the clock of these shapes.
var brokerNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// atLogStartDir is the shape of the issue: retention moved the log start
// to 500; the only producer snapshot, 00000000000000000500.snapshot, lists
// producer 8001's transaction open since offset 120, last write eleven
// months ago; the log runs to 620. later, when set, adds a batch of
// producer 8001's transaction at offset 600.
func atLogStartDir(t *testing.T, later bool) string {
	old := brokerNow.Add(-335 * 24 * time.Hour).UnixMilli()
	recent := brokerNow.Add(-time.Minute).UnixMilli()
	bs := []shapeBatch{
		{base: 500, pid: -1, ctrl: -1, n: 50, ts: recent},
		{base: 550, pid: 9, epoch: 1, txn: true, ctrl: -1, n: 9, ts: recent},
		{base: 559, pid: 9, epoch: 1, txn: true, ctrl: 1, ts: recent, coord: 2},
		{base: 560, pid: -1, ctrl: -1, n: 40, ts: recent},
	}
	if later {
		bs = append(bs, shapeBatch{base: 600, pid: 8001, epoch: 3, txn: true, ctrl: -1, n: 2, ts: old})
	} else {
		bs = append(bs, shapeBatch{base: 600, pid: -1, ctrl: -1, n: 2, ts: recent})
	}
	bs = append(bs, shapeBatch{base: 602, pid: -1, ctrl: -1, n: 18, ts: recent})
	return writeShapeDir(t, "orders", 500, 620, bs, 500, []shapeSnap{
		{pid: 8001, epoch: 3, lastSeq: 19, lastOffset: 139, offsetDelta: 19, ts: old, coordEpoch: 4, currentTxnFirstOffset: 120},
	})
}
