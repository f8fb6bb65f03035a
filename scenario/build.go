package scenario

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// indexIntervalBytes is index.interval.bytes' default; Build writes index
// entries where LogSegment.recover would.
const indexIntervalBytes = 4096

// File is one file of a built partition, relative to the log directory.
type File struct {
	Path string
	Data []byte
}

// Built is a scenario turned into files.
type Built struct {
	Dir   string // the partition directory name, <topic>-<partition>
	Files []File // partition files (under Dir) and log-directory checkpoints

	// TxnIndex is, per segment, the aborted-transaction index the
	// scenario itself implies (see Build), which its .txnindex files hold.
	// It is worked out from the statements, not by txnindex, so that it
	// can check txnindex.Build's rebuild (Log.RebuiltIndex).
	TxnIndex [][]txnindex.AbortedTxn

	// Log is txnindex's reading of the built batches.
	Log *txnindex.Log
}

type prodState struct {
	*Producer
	seq        int32
	inTxn      bool
	txnFirst   int64
	lastOffset int64
	lastDelta  int32
	lastTS     int64
	coordEpoch int32
}

type segment struct {
	base int64
	log  []byte
	idx  []byte
	tidx []byte
	last int64 // position of the last index entry
	maxT int64
	// maxOff is the last offset of the first batch that reached maxT, and
	// lastT the timestamp of the last .timeindex entry: what the final
	// entry of a rolled segment needs.
	maxOff, lastT int64
	// aborted are the segment's .txnindex entries, in append order.
	aborted []txnindex.AbortedTxn
	// lost: "lose txnindex" left the segment's .txnindex out.
	lost bool
}

// Build encodes the scenario's batches and writes them, with their indexes
// and state files, into memory.
//
// The .txnindex entries come from the statements, by the broker's rule
// rather than by replaying the batches: an "abort" of a transaction that
// sent data appends AbortedTxn(producerId, first data offset, marker
// offset, lastStableOffset) to the segment that receives the marker
// (LogSegment.updateTxnIndex indexes aborted transactions only;
// ProducerAppendInfo.appendEndTxnMarker completes no transaction for a
// marker of one without data, so it gets no entry). The entry's
// lastStableOffset is ProducerStateManager.lastStableOffset(completedTxn):
// the lowest first offset of another producer's transaction still open at
// the marker, else the marker offset + 1.
func (s *Scenario) Build() (*Built, error) {
	ps := map[string]*prodState{}
	var order []*prodState
	// retired are the states of producer ids a transactions v2 producer
	// left when its epoch ran out: the broker's snapshot keeps them.
	var retired []*prodState
	var rolled []File  // the .snapshot files of "roll snapshot"
	nextID := int64(0) // producer ids handed out on epoch overflow: above every declared one
	for _, p := range s.Producers {
		// A copy: bump, tv2 markers and overflow change the producer's
		// epoch and id while building, not the parsed scenario.
		c := *p
		st := &prodState{Producer: &c, txnFirst: -1, lastOffset: -1, coordEpoch: -1}
		ps[p.Name] = st
		order = append(order, st)
		nextID = max(nextID, p.ID+1)
	}
	segs := []*segment{{base: 0, maxT: -1, lastT: -1}}
	var batches []txnindex.Batch
	next := int64(0)
	ts := int64(1_767_225_600_000) // 2026-01-01T00:00:00Z
	errAt := func(op Op, format string, a ...any) error {
		return &Error{s.Name, op.Line, 1, fmt.Sprintf(format, a...)}
	}
	emit := func(rb kmsg.RecordBatch, ctl txnindex.ControlType, coord int32) {
		seg := segs[len(segs)-1]
		pos := int64(len(seg.log))
		raw := encodeBatch(rb)
		seg.log = append(seg.log, raw...)
		last := rb.FirstOffset + int64(rb.LastOffsetDelta)
		// LogSegment.recover: an index entry when more than
		// index.interval.bytes were appended since the last one.
		if pos-seg.last > indexIntervalBytes {
			seg.idx = binary.BigEndian.AppendUint32(seg.idx, uint32(last-seg.base))
			seg.idx = binary.BigEndian.AppendUint32(seg.idx, uint32(pos))
			seg.tidx = binary.BigEndian.AppendUint64(seg.tidx, uint64(max(seg.maxT, rb.MaxTimestamp)))
			seg.tidx = binary.BigEndian.AppendUint32(seg.tidx, uint32(last-seg.base))
			seg.last = pos
			seg.lastT = max(seg.maxT, rb.MaxTimestamp)
		}
		if rb.MaxTimestamp > seg.maxT {
			seg.maxT, seg.maxOff = rb.MaxTimestamp, last
		}
		batches = append(batches, txnindex.BatchFields{
			BaseOffset: rb.FirstOffset, LastOffset: last, BaseTimestamp: rb.FirstTimestamp, MaxTimestamp: rb.MaxTimestamp,
			ProducerID: txnindex.ProducerID(rb.ProducerID), Position: pos, PartitionLeaderEpoch: rb.PartitionLeaderEpoch,
			BaseSequence: rb.FirstSequence, Records: rb.NumRecords, Size: int32(len(raw)), CoordinatorEpoch: coord,
			Segment: int32(len(segs) - 1), ProducerEpoch: rb.ProducerEpoch, Attributes: rb.Attributes, Control: ctl, Magic: 2,
		}.Batch())
		next = last + 1
		ts += 10
	}
	records := func(n int64, tag string) []byte {
		var out []byte
		for i := int64(0); i < n; i++ {
			r := kmsg.Record{OffsetDelta: int32(i), Key: []byte(fmt.Sprintf("%s-k%d", tag, i)), Value: []byte(fmt.Sprintf("%s-%d", tag, i))}
			raw := r.AppendTo(nil)
			r.Length = int32(len(raw) - 1)
			raw = r.AppendTo(nil)
			// The length varint may have grown; re-measure once.
			if int(r.Length)+varintLen(r.Length) != len(raw) {
				r.Length = int32(len(raw) - varintLen(r.Length))
				raw = r.AppendTo(nil)
			}
			out = append(out, raw...)
		}
		return out
	}
	for _, op := range s.Ops {
		p := ps[op.Producer]
		switch op.Kind {
		case OpBegin:
			if p.inTxn {
				return nil, errAt(op, "producer %q begins a transaction while one is open", p.Name)
			}
			p.inTxn, p.txnFirst = true, -1
		case OpSend:
			if p.Transactional && !p.inTxn {
				return nil, errAt(op, "transactional producer %q sends outside a transaction (add \"begin %s\")", p.Name, p.Name)
			}
			rb := kmsg.RecordBatch{FirstOffset: next, PartitionLeaderEpoch: 0, Magic: 2, LastOffsetDelta: int32(op.N - 1),
				FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: p.ID, ProducerEpoch: p.Epoch, FirstSequence: p.seq,
				NumRecords: int32(op.N), Records: records(op.N, fmt.Sprintf("%s@%d", p.Name, next))}
			if p.Transactional {
				rb.Attributes = txnindex.AttrTransactional
				if p.txnFirst < 0 {
					p.txnFirst = next
				}
			}
			p.seq += int32(op.N)
			p.lastOffset, p.lastDelta, p.lastTS = next+op.N-1, int32(op.N-1), ts
			emit(rb, txnindex.ControlNone, -1)
		case OpCommit, OpAbort:
			if !p.inTxn {
				return nil, errAt(op, "producer %q has no open transaction to end (add \"begin %s\")", p.Name, p.Name)
			}
			ct := txnindex.ControlCommit
			if op.Kind == OpAbort {
				ct = txnindex.ControlAbort
			}
			if op.Kind == OpAbort && p.txnFirst >= 0 {
				lso := next + 1
				for _, q := range order {
					if q.ID != p.ID && q.inTxn && q.txnFirst >= 0 && q.txnFirst < lso {
						lso = q.txnFirst
					}
				}
				seg := segs[len(segs)-1]
				seg.aborted = append(seg.aborted, txnindex.AbortedTxn{ProducerID: txnindex.ProducerID(p.ID),
					FirstOffset: p.txnFirst, LastOffset: next, LastStableOffset: lso})
			}
			coord := int32(0)
			// Transactions v2 (KIP-890): the coordinator bumps the
			// epoch before it writes the marker
			// (TransactionMetadata.prepareAbortOrCommit), so the
			// marker is one epoch above the data.
			markerEpoch := p.Epoch
			if p.TV2 {
				markerEpoch++
			}
			rb := markerBatch(p.ID, markerEpoch, coord, next, ts, op.Kind == OpCommit)
			p.inTxn, p.txnFirst, p.coordEpoch, p.lastTS = false, -1, coord, ts
			emit(rb, ct, coord)
			if p.TV2 {
				// The next transaction runs at the bumped epoch,
				// its sequences from 0. A marker at epoch 32767
				// (Short.MaxValue) exhausts the producer id: the
				// coordinator allocated the next one with the
				// bump and completes the transaction with it at
				// epoch 0 (TransactionMetadata.prepareComplete).
				// The broker's entry drops its batch metadata
				// when the epoch changes
				// (ProducerStateEntry.maybeUpdateProducerEpoch),
				// so the snapshot has no last data offset.
				p.Epoch, p.seq, p.lastOffset, p.lastDelta = markerEpoch, 0, -1, 0
				if markerEpoch == math.MaxInt16 {
					old := *p
					oldP := *p.Producer
					old.Producer = &oldP
					retired = append(retired, &old)
					p.ID, p.Epoch, nextID = nextID, 0, nextID+1
					p.coordEpoch = -1
				}
			}
		case OpPlain:
			rb := kmsg.RecordBatch{FirstOffset: next, Magic: 2, LastOffsetDelta: int32(op.N - 1), FirstTimestamp: ts, MaxTimestamp: ts,
				ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(op.N), Records: records(op.N, fmt.Sprintf("plain@%d", next))}
			emit(rb, txnindex.ControlNone, -1)
		case OpRoll:
			if seg := segs[len(segs)-1]; len(seg.log) > 0 {
				// LogSegment.onBecomeInactiveSegment: a rolled segment's
				// .timeindex ends with its largest timestamp
				// (TimeIndex.maybeAppend, skipping the full check), appended
				// when it is above the last entry's. Readers take a skipped
				// segment's newest timestamp from that entry.
				if seg.maxT > seg.lastT {
					seg.tidx = binary.BigEndian.AppendUint64(seg.tidx, uint64(seg.maxT))
					seg.tidx = binary.BigEndian.AppendUint32(seg.tidx, uint32(seg.maxOff-seg.base))
					seg.lastT = seg.maxT
				}
				segs = append(segs, &segment{base: next, maxT: -1, lastT: -1})
				if op.Mode == "snapshot" {
					// UnifiedLog.roll → ProducerStateManager.takeSnapshot:
					// the producers' state up to the new segment's base,
					// named for it.
					rolled = append(rolled, File{Path: fmt.Sprintf("%020d.snapshot", next), Data: snapshot(append(order, retired...))})
				}
			}
		case OpGap:
			next += op.N
		case OpBump:
			if p.Epoch >= math.MaxInt16-1 {
				return nil, errAt(op, "producer %q is at epoch %d: a bump past 32766 needs a new producer id", p.Name, p.Epoch)
			}
			p.Epoch++
			p.seq = 0
		case OpWait:
			ts += op.N
		case OpLoseTxnIndex:
			segs[len(segs)-1].lost = true
		}
	}

	part := &txnindex.Partition{Topic: s.Topic, Partition: s.Partition, Batches: batches, LogStartOffset: s.LogStart, HighWatermark: s.HighWatermark, HighWatermarkSource: "replication-offset-checkpoint"}
	for _, sg := range segs {
		seg := txnindex.Segment{Name: fmt.Sprintf("%020d.log", sg.base), BaseOffset: sg.base, Size: int64(len(sg.log))}
		if sg.lost {
			// As the loader reads the files: a .index and no
			// .txnindex, so none of the segment's aborted
			// transactions listed.
			seg.TxnIndexOnDisk, seg.TxnIndexAbsent = true, true
		}
		part.Segments = append(part.Segments, seg)
	}
	l := txnindex.Build(part)
	b := &Built{Dir: fmt.Sprintf("%s-%d", s.Topic, s.Partition), Log: l}
	add := func(name string, data []byte) {
		b.Files = append(b.Files, File{Path: filepath.Join(b.Dir, name), Data: data})
	}
	for _, sg := range segs {
		base := fmt.Sprintf("%020d", sg.base)
		add(base+".log", sg.log)
		add(base+".index", sg.idx)
		add(base+".timeindex", sg.tidx)
		b.TxnIndex = append(b.TxnIndex, sg.aborted)
		// Kafka creates a .txnindex lazily, on the first abort.
		if len(sg.aborted) > 0 && !sg.lost {
			add(base+".txnindex", encodeTxnIndex(sg.aborted))
		}
	}
	for _, f := range rolled {
		if f.Path != fmt.Sprintf("%020d.snapshot", l.LogEndOffset) {
			add(f.Path, f.Data)
		}
	}
	add(fmt.Sprintf("%020d.snapshot", l.LogEndOffset), snapshot(append(order, retired...)))
	add("leader-epoch-checkpoint", []byte("0\n1\n0 0\n"))
	add("partition.metadata", []byte("version: 0\ntopic_id: "+topicID(s.Topic)+"\n"))
	line := func(v int64) []byte { return []byte(fmt.Sprintf("0\n1\n%s %d %d\n", s.Topic, s.Partition, v)) }
	b.Files = append(b.Files, File{Path: "replication-offset-checkpoint", Data: line(l.HighWatermark)},
		File{Path: "recovery-point-offset-checkpoint", Data: line(l.LogEndOffset)})
	if s.LogStart > segs[0].base {
		b.Files = append(b.Files, File{Path: "log-start-offset-checkpoint", Data: line(s.LogStart)})
	} else {
		b.Files = append(b.Files, File{Path: "log-start-offset-checkpoint", Data: []byte("0\n0\n")})
	}
	return b, nil
}

// snapshot encodes a producer-state .snapshot (ProducerSnapshot.json v1):
// version, CRC-32C of the rest, then one 46-byte entry per producer.
func snapshot(ps []*prodState) []byte {
	sorted := append([]*prodState(nil), ps...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	var es []loader.SnapshotEntry
	for _, p := range sorted {
		if p.lastOffset < 0 && p.coordEpoch < 0 {
			continue // never wrote here
		}
		first := int64(-1)
		if p.inTxn {
			first = p.txnFirst
		}
		es = append(es, loader.SnapshotEntry{ProducerID: txnindex.ProducerID(p.ID), Epoch: int16(p.Epoch), LastSequence: int32(p.seq - 1),
			LastOffset: int64(p.lastOffset), OffsetDelta: int32(p.lastDelta), Timestamp: int64(p.lastTS),
			CoordinatorEpoch: int32(p.coordEpoch), CurrentTxnFirstOffset: first})
	}
	return loader.AppendProducerSnapshot(nil, es)
}

// encodeTxnIndex writes .txnindex entries as TransactionIndex stores them
// (AbortedTxn, 34 bytes each): version int16 0, then producerId,
// firstOffset, lastOffset and lastStableOffset as big-endian int64s. It is
// written here, not with txnindex's codec, so the files check that codec too.
func encodeTxnIndex(es []txnindex.AbortedTxn) []byte {
	out := make([]byte, 0, 34*len(es))
	for _, e := range es {
		out = binary.BigEndian.AppendUint16(out, 0)
		out = binary.BigEndian.AppendUint64(out, uint64(e.ProducerID))
		out = binary.BigEndian.AppendUint64(out, uint64(e.FirstOffset))
		out = binary.BigEndian.AppendUint64(out, uint64(e.LastOffset))
		out = binary.BigEndian.AppendUint64(out, uint64(e.LastStableOffset))
	}
	return out
}

// topicID derives a stable, non-zero Kafka Uuid text (base64url, 22
// characters) from the topic name.
func topicID(topic string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	h := crc32.ChecksumIEEE([]byte(topic))
	var sb strings.Builder
	for i := 0; i < 21; i++ {
		h = h*1664525 + 1013904223
		sb.WriteByte(alphabet[h>>26])
	}
	sb.WriteByte('A') // the last character carries 2 bits only
	return sb.String()
}

func varintLen(v int32) int {
	u := uint32(v<<1) ^ uint32(v>>31)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// WriteDir writes the built files under logDir, creating it. It refuses to
// overwrite existing files.
func (b *Built) WriteDir(logDir string) error {
	if err := os.MkdirAll(filepath.Join(logDir, b.Dir), 0o755); err != nil {
		return err
	}
	for _, f := range b.Files {
		p := filepath.Join(logDir, f.Path)
		fh, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := fh.Write(f.Data); err != nil {
			fh.Close()
			return err
		}
		if err := fh.Close(); err != nil {
			return err
		}
	}
	return nil
}
