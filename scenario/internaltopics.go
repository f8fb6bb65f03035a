package scenario

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// The broker's internal topics, whose partitions BuildInternal writes.
const (
	ConsumerOffsetsTopic  = "__consumer_offsets"
	TransactionStateTopic = "__transaction_state"
)

// InternalRecord is one record of an internal topic; a nil Value is a
// tombstone.
type InternalRecord struct {
	Key, Value []byte
}

// Marker makes an InternalBatch an end-transaction marker.
type Marker uint8

// Markers.
const (
	NoMarker Marker = iota // a data batch
	CommitMarker
	AbortMarker
)

// InternalBatch is one batch appended to an internal topic's partition.
type InternalBatch struct {
	// ProducerID and ProducerEpoch are -1 for what a coordinator writes
	// itself (its appends carry no producer id); a transactional producer's
	// for a TxnOffsetCommit's records in its transaction, or for its marker.
	ProducerID    int64
	ProducerEpoch int16
	Transactional bool
	// Marker, when set, makes the batch the producer's COMMIT or ABORT
	// marker; Records is then ignored.
	Marker  Marker
	Records []InternalRecord
	// Timestamp is the batch's timestamp in ms; 0 takes the builder's
	// clock (2026-01-01T00:00:00Z, 10 ms a batch).
	Timestamp int64
}

// CoordinatorBatch is a batch the coordinator writes itself.
func CoordinatorBatch(recs ...InternalRecord) InternalBatch {
	return InternalBatch{ProducerID: -1, ProducerEpoch: -1, Records: recs}
}

// TxnOffsetBatch is a batch of transactional offset commits of producer
// pid at epoch (TxnOffsetCommit appends them in the producer's transaction).
func TxnOffsetBatch(pid int64, epoch int16, recs ...InternalRecord) InternalBatch {
	return InternalBatch{ProducerID: pid, ProducerEpoch: epoch, Transactional: true, Records: recs}
}

// EndTxnBatch is producer pid's COMMIT (commit true) or ABORT marker.
func EndTxnBatch(pid int64, epoch int16, commit bool) InternalBatch {
	m := AbortMarker
	if commit {
		m = CommitMarker
	}
	return InternalBatch{ProducerID: pid, ProducerEpoch: epoch, Transactional: true, Marker: m}
}

// OffsetCommitRecord encodes an offset commit as the group coordinator
// writes it: OffsetCommitKey v1 and OffsetCommitValue v3 (KIP-320, with
// the leader epoch; what brokers from 2.1 on write), with kmsg.
func OffsetCommitRecord(group, topic string, partition int32, offset int64, leaderEpoch int32, metadata string, commitTimestamp int64) InternalRecord {
	k := kmsg.OffsetCommitKey{Version: 1, Group: group, Topic: topic, Partition: partition}
	v := kmsg.OffsetCommitValue{Version: 3, Offset: offset, LeaderEpoch: leaderEpoch, Metadata: metadata, CommitTimestamp: commitTimestamp}
	return InternalRecord{Key: k.AppendTo(nil), Value: v.AppendTo(nil)}
}

// OffsetTombstone deletes a group's committed offset (OffsetDelete,
// DeleteGroups, or offset expiry).
func OffsetTombstone(group, topic string, partition int32) InternalRecord {
	k := kmsg.OffsetCommitKey{Version: 1, Group: group, Topic: topic, Partition: partition}
	return InternalRecord{Key: k.AppendTo(nil)}
}

// GroupMetadataRecord encodes an empty classic group's metadata
// (GroupMetadataKey v2, GroupMetadataValue v3), as the coordinator writes
// after a consumer group's members leave.
func GroupMetadataRecord(group string, generation int32, stateTimestamp int64) InternalRecord {
	k := kmsg.GroupMetadataKey{Version: 2, Group: group}
	v := kmsg.GroupMetadataValue{Version: 3, ProtocolType: "consumer", Generation: generation, CurrentStateTimestamp: stateTimestamp}
	return InternalRecord{Key: k.AppendTo(nil), Value: v.AppendTo(nil)}
}

// TxnStateRecord encodes a transactional id's coordinator state as
// TransactionLog.valueToBytes does: TxnMetadataKey v0, TxnMetadataValue v0,
// or v1 when the state carries KIP-890 fields (a client transaction
// version of 2, previous or next producer id); no partitions in Empty.
func TxnStateRecord(s txnindex.TxnCoordinatorState) InternalRecord {
	k := kmsg.TxnMetadataKey{Version: 0, TransactionalID: s.TransactionalID}
	v := kmsg.NewTxnMetadataValue()
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = int64(s.ProducerID), s.ProducerEpoch, s.TimeoutMs
	v.State = kmsg.TransactionState(s.State)
	v.LastUpdateTimestamp, v.StartTimestamp = s.LastUpdateTimestamp, s.StartTimestamp
	if s.ClientTransactionVersion >= 2 || s.PreviousProducerID >= 0 || s.NextProducerID >= 0 {
		v.Version = 1
		v.PreviousProducerID, v.NextProducerID = int64(s.PreviousProducerID), int64(s.NextProducerID)
		v.NextProducerEpoch, v.ClientTransactionVersion = s.NextProducerEpoch, s.ClientTransactionVersion
	}
	if s.State != txnindex.TxnStatusEmpty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
		for _, tp := range s.Partitions {
			if n := len(v.Topics); n == 0 || v.Topics[n-1].Topic != tp.Topic {
				v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic})
			}
			t := &v.Topics[len(v.Topics)-1]
			t.Partitions = append(t.Partitions, tp.Partition)
		}
	}
	return InternalRecord{Key: k.AppendTo(nil), Value: v.AppendTo(nil)}
}

// TxnStateTombstone removes a transactional id (its expiry).
func TxnStateTombstone(id string) InternalRecord {
	k := kmsg.TxnMetadataKey{Version: 0, TransactionalID: id}
	return InternalRecord{Key: k.AppendTo(nil)}
}

// OngoingTxnStates are the __transaction_state records of a transaction
// left Ongoing: InitProducerId (Empty at the epoch), then AddPartitionsToTxn
// (Ongoing with the partitions), the start of a transaction whose EndTxn
// never came.
func OngoingTxnStates(id string, pid int64, epoch int16, start int64, parts ...txnindex.TopicPartition) []InternalRecord {
	s := txnindex.TxnCoordinatorState{TransactionalID: id, ProducerID: txnindex.ProducerID(pid), ProducerEpoch: epoch,
		PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, State: txnindex.TxnStatusEmpty,
		TimeoutMs: 60000, StartTimestamp: -1, LastUpdateTimestamp: start - 1}
	empty := TxnStateRecord(s)
	s.State, s.StartTimestamp, s.LastUpdateTimestamp, s.Partitions = txnindex.TxnStatusOngoing, start, start, parts
	return []InternalRecord{empty, TxnStateRecord(s)}
}

// BuildInternal writes a partition of topic holding batches, in order, as
// a broker leaves it: one .log segment of RecordBatch v2 bytes (kmsg
// encoded, CRC-32C set), its sparse .index and .timeindex, its .txnindex
// when a transaction aborted (TxnIndex holds the entries), a producer
// snapshot when a transactional producer wrote, and the log directory's
// checkpoint lines for the partition (WriteLogDir merges them with other
// partitions'). Internal topics are written uncompressed
// (offsets.topic.compression.codec defaults to none;
// TransactionLog.ENFORCED_COMPRESSION is none).
func BuildInternal(topic string, partition int32, batches []InternalBatch) (*Built, error) {
	if _, err := strconv.Atoi(topic); err == nil || topic == "" || strings.ContainsAny(topic, "/\\") {
		return nil, fmt.Errorf("scenario: bad topic name %q", topic)
	}
	seg := &segment{base: 0, maxT: -1}
	var out []txnindex.Batch
	ps := map[int64]*prodState{}
	var order []*prodState
	next := int64(0)
	clock := int64(1_767_225_600_000)
	for i, ib := range batches {
		ts := ib.Timestamp
		if ts == 0 {
			ts = clock
		}
		clock = max(clock, ts) + 10
		var p *prodState
		if ib.ProducerID >= 0 {
			if p = ps[ib.ProducerID]; p == nil {
				p = &prodState{Producer: &Producer{Name: fmt.Sprintf("pid-%d", ib.ProducerID), Transactional: ib.Transactional, ID: ib.ProducerID},
					txnFirst: -1, lastOffset: -1, coordEpoch: -1}
				ps[ib.ProducerID] = p
				order = append(order, p)
			}
			p.Epoch = ib.ProducerEpoch
		}
		rb := kmsg.RecordBatch{FirstOffset: next, Magic: 2, FirstTimestamp: ts, MaxTimestamp: ts,
			ProducerID: ib.ProducerID, ProducerEpoch: ib.ProducerEpoch, FirstSequence: -1}
		ctl, coord := txnindex.ControlNone, int32(-1)
		switch ib.Marker {
		case CommitMarker, AbortMarker:
			if p == nil || !ib.Transactional {
				return nil, fmt.Errorf("scenario: batch %d: a marker needs a transactional producer id", i)
			}
			typ := byte(0)
			ctl = txnindex.ControlAbort
			if ib.Marker == CommitMarker {
				typ, ctl = 1, txnindex.ControlCommit
			}
			coord = 0
			if ctl == txnindex.ControlAbort && p.inTxn {
				// The segment's .txnindex entry, by the rule Build
				// follows: the LSO is the lowest first offset of another
				// producer's open transaction, else the marker + 1.
				lso := next + 1
				for _, q := range order {
					if q != p && q.inTxn && q.txnFirst < lso {
						lso = q.txnFirst
					}
				}
				seg.aborted = append(seg.aborted, txnindex.AbortedTxn{ProducerID: txnindex.ProducerID(p.ID),
					FirstOffset: p.txnFirst, LastOffset: next, LastStableOffset: lso})
			}
			r := kmsg.Record{Key: []byte{0, 0, 0, typ}, Value: binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(coord))}
			rb.Attributes = txnindex.AttrTransactional | txnindex.AttrControl
			rb.NumRecords, rb.Records = 1, encodeRecord(r)
			p.inTxn, p.txnFirst, p.coordEpoch, p.lastTS = false, -1, coord, ts
		case NoMarker:
			if len(ib.Records) == 0 {
				return nil, fmt.Errorf("scenario: batch %d has no records", i)
			}
			for j, ir := range ib.Records {
				rb.Records = append(rb.Records, encodeRecord(kmsg.Record{OffsetDelta: int32(j), Key: ir.Key, Value: ir.Value})...)
			}
			rb.NumRecords, rb.LastOffsetDelta = int32(len(ib.Records)), int32(len(ib.Records)-1)
			if ib.Transactional {
				if p == nil {
					return nil, fmt.Errorf("scenario: batch %d: transactional without a producer id", i)
				}
				rb.Attributes = txnindex.AttrTransactional
				if !p.inTxn {
					p.inTxn, p.txnFirst = true, next
				}
			}
			if p != nil {
				rb.FirstSequence = p.seq
				p.seq += rb.NumRecords
				p.lastOffset, p.lastDelta, p.lastTS = next+int64(rb.LastOffsetDelta), rb.LastOffsetDelta, ts
			}
		default:
			return nil, fmt.Errorf("scenario: batch %d: unknown marker %d", i, ib.Marker)
		}
		pos := int64(len(seg.log))
		start := len(seg.log)
		seg.log = rb.AppendTo(seg.log)
		raw := seg.log[start:]
		binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
		binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
		last := next + int64(rb.LastOffsetDelta)
		if pos-seg.last > indexIntervalBytes {
			seg.idx = binary.BigEndian.AppendUint32(seg.idx, uint32(last-seg.base))
			seg.idx = binary.BigEndian.AppendUint32(seg.idx, uint32(pos))
			seg.tidx = binary.BigEndian.AppendUint64(seg.tidx, uint64(max(seg.maxT, ts)))
			seg.tidx = binary.BigEndian.AppendUint32(seg.tidx, uint32(last-seg.base))
			seg.last = pos
		}
		seg.maxT = max(seg.maxT, ts)
		out = append(out, txnindex.BatchFields{
			BaseOffset: next, LastOffset: last, BaseTimestamp: ts, MaxTimestamp: ts,
			ProducerID: txnindex.ProducerID(rb.ProducerID), Position: pos, BaseSequence: rb.FirstSequence,
			Records: rb.NumRecords, Size: int32(len(raw)), CoordinatorEpoch: coord, Segment: 0,
			ProducerEpoch: rb.ProducerEpoch, Attributes: rb.Attributes, Control: ctl, Magic: 2,
		}.Batch())
		next = last + 1
	}
	part := &txnindex.Partition{Topic: topic, Partition: partition, Batches: out, LogStartOffset: -1, HighWatermark: -1,
		Segments: []txnindex.Segment{{Name: fmt.Sprintf("%020d.log", 0), BaseOffset: 0, Size: int64(len(seg.log))}}}
	l := txnindex.Build(part)
	b := &Built{Dir: fmt.Sprintf("%s-%d", topic, partition), Log: l, TxnIndex: [][]txnindex.AbortedTxn{seg.aborted}}
	add := func(name string, data []byte) {
		b.Files = append(b.Files, File{Path: filepath.Join(b.Dir, name), Data: data})
	}
	add(fmt.Sprintf("%020d.log", 0), seg.log)
	add(fmt.Sprintf("%020d.index", 0), seg.idx)
	add(fmt.Sprintf("%020d.timeindex", 0), seg.tidx)
	if len(seg.aborted) > 0 {
		// Kafka creates a .txnindex lazily, on the first abort.
		add(fmt.Sprintf("%020d.txnindex", 0), encodeTxnIndex(seg.aborted))
	}
	if len(order) > 0 {
		add(fmt.Sprintf("%020d.snapshot", l.LogEndOffset), snapshot(order))
	}
	add("leader-epoch-checkpoint", []byte("0\n1\n0 0\n"))
	add("partition.metadata", []byte("version: 0\ntopic_id: "+topicID(topic)+"\n"))
	line := func(v int64) []byte { return []byte(fmt.Sprintf("0\n1\n%s %d %d\n", topic, partition, v)) }
	b.Files = append(b.Files, File{Path: "replication-offset-checkpoint", Data: line(l.HighWatermark)},
		File{Path: "recovery-point-offset-checkpoint", Data: line(l.LogEndOffset)},
		File{Path: "log-start-offset-checkpoint", Data: []byte("0\n0\n")})
	return b, nil
}

// encodeRecord encodes a v2 record with its length set.
func encodeRecord(r kmsg.Record) []byte {
	raw := r.AppendTo(nil)
	r.Length = int32(len(raw) - 1)
	raw = r.AppendTo(nil)
	if int(r.Length)+varintLen(r.Length) != len(raw) {
		r.Length = int32(len(raw) - varintLen(r.Length))
		raw = r.AppendTo(nil)
	}
	return raw
}

// WriteLogDir writes several built partitions into one log directory, as
// one broker holds them: each partition's files under its directory, and
// the log directory's checkpoint files (replication-offset-checkpoint,
// recovery-point-offset-checkpoint, log-start-offset-checkpoint) holding
// every partition's lines, in the OffsetCheckpointFile format (version 0,
// the entry count, then "topic partition offset" lines). It refuses to
// overwrite existing files.
func WriteLogDir(logDir string, parts ...*Built) error {
	root := map[string][]string{}
	var rootOrder []string
	var files []File
	for _, b := range parts {
		for _, f := range b.Files {
			if strings.ContainsRune(f.Path, filepath.Separator) {
				files = append(files, f)
				continue
			}
			lines, err := checkpointLines(f)
			if err != nil {
				return err
			}
			if _, ok := root[f.Path]; !ok {
				rootOrder = append(rootOrder, f.Path)
			}
			root[f.Path] = append(root[f.Path], lines...)
		}
	}
	for _, name := range rootOrder {
		lines := root[name]
		slices.Sort(lines)
		var sb bytes.Buffer
		fmt.Fprintf(&sb, "0\n%d\n", len(lines))
		for _, l := range lines {
			sb.WriteString(l + "\n")
		}
		files = append(files, File{Path: name, Data: sb.Bytes()})
	}
	merged := &Built{Files: files}
	for _, b := range parts {
		if err := os.MkdirAll(filepath.Join(logDir, b.Dir), 0o755); err != nil {
			return err
		}
	}
	merged.Dir = "."
	return merged.WriteDir(logDir)
}

// checkpointLines returns the entry lines of a checkpoint file Build
// wrote.
func checkpointLines(f File) ([]string, error) {
	lines := strings.Split(strings.TrimSuffix(string(f.Data), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("scenario: %s: not a version 0 checkpoint", f.Path)
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, fmt.Errorf("scenario: %s: count %q for %d entries", f.Path, lines[1], len(lines)-2)
	}
	return lines[2:], nil
}
