// Package segsum draws the timeline of a partition of any size in bounded
// memory. A loaded partition keeps every batch header (64 bytes each, a
// gigabyte for a 16 GiB partition of 1 KiB batches); segsum keeps instead a
// small summary per segment, computed from one scan of the segment and the
// producer state at its start, and scans the segments a person looks at on
// demand, keeping the scanned ones in an LRU under a byte budget.
//
// The decisions of a scanned segment equal those of a full pass because the
// three things that tie a segment to the rest of the log are carried in the
// summaries (see txnindex.PartitionWindow): the transactions open at the
// segment's start (the previous summary's open transactions, the state the
// broker's ProducerStateManager has there, which it persists in the
// .snapshot it takes at each roll), the aborted-transaction entries of every
// later segment (a read_committed consumer skips a transaction's data only
// once a fetch's aborted list names it, and LocalLog.collectAbortedTransactions
// gathers that list from the fetch's segment onwards, so data in segment k is
// dropped because of a marker in segment k+3), and the log's end offset and
// last stable offset.
package segsum

import (
	"github.com/txnscope/txnscope/txnindex"
)

// Summary is what the overview of one segment needs, and what a scan of a
// later segment needs from it. Its key fields (Name, Size, ModTime) say
// whether a cached summary still describes the file.
type Summary struct {
	Name       string `json:"name"`
	BaseOffset int64  `json:"base_offset"`
	Size       int64  `json:"size"`
	ModTime    int64  `json:"mod_time_ns"`

	// NextOffset is the offset after the segment's last batch (BaseOffset
	// for an empty segment).
	NextOffset int64 `json:"next_offset"`
	// FirstOffset is the base offset of the segment's first batch
	// (BaseOffset for an empty segment): below the previous segment's
	// end when its batches overlap that segment's (a hostile or
	// damaged directory), where its window's decisions then begin.
	FirstOffset int64 `json:"first_offset"`
	// LowOffset and HighOffset are the lowest base offset and the highest
	// next offset of the segment's batches, LastNextOffset the next
	// offset of its last batch (-1, -1 and -1 for an empty segment). In a
	// log written by one leader they are FirstOffset and NextOffset; where
	// segments overlap (a segment's batches below the end of the segments
	// before it, or its base offset inside them: the broker loads such a
	// chain as it finds it, LogLoader.loadSegmentFiles) they say which
	// segments a window must replay and play together to decide as a
	// full pass does (Store.cluster), and where the log ends (a full
	// pass's log end is its last batch's next offset).
	LowOffset      int64 `json:"low_offset"`
	HighOffset     int64 `json:"high_offset"`
	LastNextOffset int64 `json:"last_next_offset"`
	FirstTimestamp int64 `json:"first_timestamp"` // -1 when empty
	MaxTimestamp   int64 `json:"max_timestamp"`   // -1 when empty
	Batches        int   `json:"batches"`
	Records        int64 `json:"records"`

	// Txns counts the transactions that begin in the segment; Commits and
	// Aborts its end-transaction markers.
	Txns    int `json:"transactions"`
	Commits int `json:"commits"`
	Aborts  int `json:"aborts"`

	// Records by what became of their transaction, as far as this segment
	// and the ones before it tell: Undecided records belong to a
	// transaction still open at the segment's end (Overview resolves them
	// with the later summaries' Closed).
	NonTransactional int64 `json:"non_transactional_records"`
	Committed        int64 `json:"committed_records"`
	AbortedRecords   int64 `json:"aborted_records"`
	Undecided        int64 `json:"undecided_records"`
	ControlRecords   int64 `json:"control_records"`

	// Aborted are the aborted-transaction entries fetches are served from
	// this segment: its .txnindex when the broker's index files are there
	// (IndexOnDisk), else the entries the replay rebuilt; AbortedCount
	// how many. The cache file keeps only the rebuilt ones
	// (AbortedRebuilt, in the .txnindex encoding): a segment's .txnindex
	// is read again when a scan of an earlier segment needs it, so that a
	// restarted server's first paint does not decode every entry of the
	// partition (a 16 GiB partition has hundreds of thousands).
	Aborted        []txnindex.AbortedTxn `json:"-"`
	AbortedCount   int                   `json:"aborted_entries"`
	AbortedRebuilt []byte                `json:"aborted_rebuilt,omitempty"`
	IndexOnDisk    bool                  `json:"index_on_disk"`
	// TxnIndexRejected is the segment's .txnindex entry whose version
	// Kafka refuses (txnindex.Segment.TxnIndexRejected), nil when none.
	TxnIndexRejected *txnindex.RejectedEntry `json:"txnindex_rejected,omitempty"`
	// Damaged is where the segment's read stopped at damage the broker's
	// recovery truncates (txnindex.Segment.Damaged), nil when none: a
	// window after it calls the offsets missing before its first batch
	// damaged bytes, as a full pass does (txnindex.GapDamaged).
	Damaged *txnindex.SegmentDamage `json:"damaged,omitempty"`

	// The transactions open after the segment's last batch (the producer
	// state the next segment starts from) are those open at its start,
	// less Closed and Dropped, with Opened: a summary holds what its
	// segment changes, not the whole set, which would cost every
	// transaction left open once in every later summary (open.go).
	// Opened are the transactions open at the end that the segment
	// begins or moves (a batch of it here, its epoch or time changed),
	// each with its part here; Reset says Opened is the whole set, in
	// the order the replay holds it (overlapping segments opened one
	// below another). OpenCount is how many are open at the end.
	Opened    []OpenTxn `json:"opened"`
	Reset     bool      `json:"reset,omitempty"`
	OpenCount int       `json:"open_count"`
	// Closed are the transactions begun before this segment and closed
	// by a marker in it; Dropped the ones open at its start its replay
	// no longer holds open without a marker (a second transaction of
	// one producer in a seed: txnindex's replay keeps the first).
	Closed  []ClosedTxn `json:"closed"`
	Dropped []TxnKey    `json:"dropped,omitempty"`

	// Damage is the first problem the scan met, which stopped it there
	// (as broker recovery truncates there); "" when none.
	Damage string `json:"damage,omitempty"`
}

// OpenTxn is a transaction open at a segment's end, with what it has in
// that segment.
type OpenTxn struct {
	txnindex.OngoingTxn
	Here TxnPart `json:"here"`
}

// TxnPart is the part of a transaction one segment holds: a window's Txn
// counts only its own batches, and a later segment's parts complete it.
type TxnPart struct {
	Batches        int   `json:"batches"`
	Records        int64 `json:"records"`
	Bytes          int64 `json:"bytes"`
	LastDataOffset int64 `json:"last_data_offset"` // -1: no data here
	FirstTimestamp int64 `json:"first_timestamp"`  // -1: no data here
	LastTimestamp  int64 `json:"last_timestamp"`
}

func partOf(t *txnindex.Txn) TxnPart {
	return TxnPart{Batches: t.Batches, Records: t.Records, Bytes: t.Bytes, LastDataOffset: t.LastDataOffset,
		FirstTimestamp: t.FirstTimestamp, LastTimestamp: t.LastTimestamp}
}

// ClosedTxn is a transaction closed in a segment after the one it began in.
type ClosedTxn struct {
	ProducerID   txnindex.ProducerID `json:"producer_id"`
	FirstOffset  int64               `json:"first_offset"`
	MarkerOffset int64               `json:"marker_offset"`
	MarkerEpoch  int16               `json:"marker_epoch"`
	Aborted      bool                `json:"aborted"`
	Here         TxnPart             `json:"here"`
}

// summarize fills s from the window log l of segment si (built from the
// segment's batches and its start state) and the segment's index files,
// and returns the transactions open at the segment's end (the changes
// from its start, Opened and Dropped, are openSet.changes's to find).
func summarize(s *Summary, l *txnindex.Log, si int) (ends []OpenTxn) {
	s.NextOffset, s.FirstTimestamp, s.MaxTimestamp = s.BaseOffset, -1, -1
	s.FirstOffset = s.BaseOffset
	s.LowOffset, s.HighOffset, s.LastNextOffset = -1, -1, -1
	if n := len(l.Batches); n > 0 {
		s.FirstOffset = l.Batches[0].BaseOffset
		s.LowOffset, s.LastNextOffset = l.Batches[0].BaseOffset, l.Batches[n-1].NextOffset()
	}
	s.Batches = len(l.Batches)
	for i := range l.Batches {
		b := &l.Batches[i]
		s.Records += int64(b.Records)
		s.NextOffset = max(s.NextOffset, b.NextOffset())
		s.LowOffset, s.HighOffset = min(s.LowOffset, b.BaseOffset), max(s.HighOffset, b.NextOffset())
		if s.FirstTimestamp < 0 {
			s.FirstTimestamp = b.BaseTimestamp
		}
		s.MaxTimestamp = max(s.MaxTimestamp, b.MaxTimestamp)
		switch {
		case b.IsControl():
			s.ControlRecords += int64(b.Records)
			if b.Records > 0 && b.IsCommitMarker() {
				s.Commits++
			} else if b.Records > 0 && b.IsAbortMarker() {
				s.Aborts++
			}
		case !b.IsTransactional() || !b.HasProducerID():
			s.NonTransactional += int64(b.Records)
		}
	}
	for i := range l.Txns {
		t := &l.Txns[i]
		if !t.Seeded {
			s.Txns++
		}
		switch t.State {
		case txnindex.TxnCommitted:
			s.Committed += t.Records
		case txnindex.TxnAborted:
			s.AbortedRecords += t.Records
		default:
			s.Undecided += t.Records
			ends = append(ends, OpenTxn{OngoingTxn: txnindex.OngoingTxn{ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
				FirstOffset: t.FirstOffset, LastTimestamp: t.LastTimestamp, CoordinatorEpoch: -1}, Here: partOf(t)})
		}
		if t.Seeded && t.State != txnindex.TxnOpen {
			s.Closed = append(s.Closed, ClosedTxn{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset, MarkerOffset: t.MarkerOffset,
				MarkerEpoch: t.MarkerEpoch, Aborted: t.State == txnindex.TxnAborted, Here: partOf(t)})
		}
	}
	seg := &l.Segments[si]
	s.IndexOnDisk, s.TxnIndexRejected, s.Damaged = seg.TxnIndexOnDisk, seg.TxnIndexRejected, seg.Damaged
	if seg.TxnIndexOnDisk {
		s.Aborted = seg.TxnIndex
	} else {
		s.Aborted = l.RebuiltIndex[si]
	}
	if s.Aborted == nil {
		s.Aborted = []txnindex.AbortedTxn{}
	}
	s.AbortedCount = len(s.Aborted)
	if !s.IndexOnDisk {
		s.AbortedRebuilt = txnindex.EncodeTxnIndex(s.Aborted)
	}
	return ends
}
