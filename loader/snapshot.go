package loader

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/txnscope/txnscope/txnindex"
)

// Producer snapshot layout (ProducerSnapshot.json v1, ProducerStateManager
// .readSnapshot/writeSnapshot).
const (
	snapshotVersion      = 1
	snapshotCRCOffset    = 2
	snapshotCountOffset  = 6 // the CRC covers [6, EOF)
	snapshotEntriesStart = 10
	snapshotEntrySize    = 46
)

// ProducerSnapshot is a decoded producer-state .snapshot file.
type ProducerSnapshot struct {
	Name    string
	Offset  int64 // from the name: the exclusive end offset the snapshot covers; -1 if the name has none
	Size    int64
	Version int16
	CRC     uint32 // stored; verified
	Entries []SnapshotEntry
}

// SnapshotEntry is one producer's state. LastOffset -1 means the producer
// has no batch metadata; CurrentTxnFirstOffset -1 means no ongoing
// transaction.
type SnapshotEntry struct {
	ProducerID            txnindex.ProducerID
	Epoch                 int16
	LastSequence          int32
	LastOffset            int64
	OffsetDelta           int32
	Timestamp             int64
	CoordinatorEpoch      int32
	CurrentTxnFirstOffset int64
}

// ReadProducerSnapshot decodes a .snapshot file held in data. Like
// ProducerStateManager.readSnapshot it rejects a version other than 1 and a
// CRC-32C mismatch (CorruptSnapshotException), and a count the file cannot
// hold ("Tried to allocate a collection of size N, but there are only M
// bytes remaining"). Bytes after the counted entries, which Kafka's reader
// never looks at, are returned as an error after the decoded snapshot.
func ReadProducerSnapshot(data []byte, name string) (*ProducerSnapshot, error) {
	s := &ProducerSnapshot{Name: name, Offset: -1, Size: int64(len(data))}
	if off, ok := parseBaseOffset(name, ".snapshot"); ok {
		s.Offset = off
	}
	if len(data) < snapshotEntriesStart {
		return s, formatErr(name, 0, "header", "truncated: want %d header bytes (version, crc, count), found %d", snapshotEntriesStart, len(data))
	}
	r := reader{src: data}
	s.Version = r.int16()
	s.CRC = r.uint32()
	count := r.int32()
	if s.Version != snapshotVersion {
		return s, formatErr(name, 0, "header", "unknown snapshot version: want %d, found %d", snapshotVersion, s.Version)
	}
	if computed := crc32.Checksum(data[snapshotCountOffset:], castagnoli); computed != s.CRC {
		return s, formatErr(name, snapshotCRCOffset, "header", "bad CRC: stored %#08x, computed %#08x (CRC-32C over bytes [6,%d))", s.CRC, computed, len(data))
	}
	if count < 0 {
		return s, formatErr(name, snapshotCountOffset, "header", "bad entry count: want >= 0, found %d", count)
	}
	if int64(count) > int64(r.remaining())/snapshotEntrySize {
		return s, formatErr(name, snapshotCountOffset, "header", "entry count %d needs %d bytes, only %d follow", count, int64(count)*snapshotEntrySize, r.remaining())
	}
	s.Entries = make([]SnapshotEntry, count)
	for i := range s.Entries {
		e := &s.Entries[i]
		e.ProducerID = txnindex.ProducerID(r.int64())
		e.Epoch = r.int16()
		e.LastSequence = r.int32()
		e.LastOffset = r.int64()
		e.OffsetDelta = r.int32()
		e.Timestamp = r.int64()
		e.CoordinatorEpoch = r.int32()
		e.CurrentTxnFirstOffset = r.int64()
	}
	if rem := r.remaining(); rem != 0 {
		return s, formatErr(name, int64(r.off), "data", "%d bytes after the %d entries the count declares", rem, count)
	}
	return s, nil
}

// Ongoing returns the snapshot's ongoing transactions (CurrentTxnFirstOffset
// >= 0) whose first offset is below before, for txnindex.Partition.Ongoing,
// with what broker recovery keeps of them (ProducerStateManager
// .loadProducerEntry): the epoch, the last write time (the entry's
// Timestamp) and the coordinator epoch.
func (s *ProducerSnapshot) Ongoing(before int64) []txnindex.OngoingTxn {
	var out []txnindex.OngoingTxn
	for _, e := range s.Entries {
		if e.CurrentTxnFirstOffset >= 0 && e.CurrentTxnFirstOffset < before {
			out = append(out, txnindex.OngoingTxn{ProducerID: e.ProducerID, ProducerEpoch: e.Epoch, FirstOffset: e.CurrentTxnFirstOffset,
				LastTimestamp: e.Timestamp, CoordinatorEpoch: e.CoordinatorEpoch})
		}
	}
	return out
}

// Info is every entry of the snapshot, keyed by producer, for
// txnindex.Partition.Snapshot. A producer id repeated in a damaged file
// keeps its last entry, as loading it into the broker's producer map does.
func (s *ProducerSnapshot) Info() *txnindex.SnapshotInfo {
	in := &txnindex.SnapshotInfo{Name: s.Name, Offset: s.Offset, Producers: make(map[txnindex.ProducerID]txnindex.SnapshotProducer, len(s.Entries))}
	for _, e := range s.Entries {
		in.Producers[e.ProducerID] = txnindex.SnapshotProducer{Epoch: e.Epoch, LastOffset: e.LastOffset, Timestamp: e.Timestamp,
			CoordinatorEpoch: e.CoordinatorEpoch, CurrentTxnFirstOffset: e.CurrentTxnFirstOffset}
	}
	return in
}

// AppendProducerSnapshot appends the .snapshot encoding of entries, as
// ProducerStateManager.writeSnapshot writes it (version 1, the CRC-32C of
// the rest, the count, 46 bytes per entry in the order given): the one
// writer that the scenario builder, the partition generator and the tests
// share, beside the reader it must round-trip through.
func AppendProducerSnapshot(dst []byte, entries []SnapshotEntry) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, 1)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(entries)))
	for _, e := range entries {
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.ProducerID))
		dst = binary.BigEndian.AppendUint16(dst, uint16(e.Epoch))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.LastSequence))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastOffset))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.OffsetDelta))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.Timestamp))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.CoordinatorEpoch))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.CurrentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(dst[start+2:], crc32.Checksum(dst[start+6:], castagnoli))
	return dst
}
