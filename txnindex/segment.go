package txnindex

import "fmt"

// Segment is one log segment of a partition.
type Segment struct {
	// Name is the segment's file name without directory, e.g.
	// "00000000000000000100.log"; captures use a descriptive name.
	Name       string
	BaseOffset int64
	Size       int64 // bytes of the .log (or of the record set)

	// TxnIndex is the segment's .txnindex as read from disk. It is used
	// for fetches only when TxnIndexOnDisk is true; otherwise the rebuilt
	// entries are used. Loaders set it as LogLoader decides: a segment
	// with a .index is loaded as it is, and Kafka creates a .txnindex
	// lazily, so one with a .index and no .txnindex has TxnIndexOnDisk
	// with no entries (the broker sees none); one without a .index is
	// recovered, its .txnindex rebuilt.
	TxnIndex       []AbortedTxn
	TxnIndexOnDisk bool
	// TxnIndexAbsent: TxnIndexOnDisk because the segment's .index is
	// there, while its .txnindex file is not. The broker
	// creates that file with the segment's first aborted transaction and
	// rebuilds it only when it recovers the segment, so a lost one stays
	// lost: the aborted transactions it would list reach read_committed
	// consumers (Log.UnlistedAborted).
	TxnIndexAbsent bool
	// TxnIndexRejected, when not nil, is the entry of the segment's
	// .txnindex whose version Kafka refuses, the segment's .index being
	// there: LogSegment.sanityCheck reads the file through
	// TransactionIndex's iterator, which throws a KafkaException that
	// LogLoader does not recover from, so a broker fails to start with
	// it. What it serves once it starts is the rebuilt index of a
	// recovered segment (TxnIndexOnDisk is false): the only way to start
	// it with the file's data is to have the segment recovered.
	TxnIndexRejected *RejectedEntry

	// Damaged, when not nil, is where the read of the segment's .log
	// stopped before its end at damage the broker's recovery truncates,
	// and why (a batch whose size, magic or CRC fails, a file cut short):
	// its batches end there. When the broker recovers the segment it
	// truncates it there, and deletes every later segment
	// (Log.RecoveryTruncation).
	Damaged *SegmentDamage

	// OffsetIndex holds the .index entries with absolute offsets, if read.
	// Without them Build rebuilds a sparse index the way LogSegment.recover
	// does. The index only matters for the upper bound of the aborted list.
	OffsetIndex []IndexEntry
}

// SegmentDamage is where the read of a segment's .log stopped, the offset
// the segment's batches end at there (the next offset after the last
// batch before it, or the segment's base), and the loader's words for why.
type SegmentDamage struct {
	Position int64  `json:"byte"`
	Offset   int64  `json:"offset"`
	Reason   string `json:"reason"`
}

// RejectedEntry is an entry of a .txnindex file whose version Kafka's
// TransactionIndex refuses (RejectedVersion): its byte position in the
// file and its version byte.
type RejectedEntry struct {
	Position int64 `json:"byte"`
	Version  int8  `json:"version"`
}

// TxnIndexName is the name of the segment's .txnindex file.
func (s *Segment) TxnIndexName() string {
	return fmt.Sprintf("%020d.txnindex", s.BaseOffset)
}

// IndexEntry is one .index entry, with the offset made absolute.
type IndexEntry struct {
	Offset   int64
	Position int64
}
