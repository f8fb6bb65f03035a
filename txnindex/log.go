package txnindex

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// TxnState is what became of a transaction.
type TxnState uint8

// Transaction outcomes.
const (
	TxnOpen TxnState = iota
	TxnCommitted
	TxnAborted
)

// String returns "open", "committed" or "aborted".
func (s TxnState) String() string {
	switch s {
	case TxnCommitted:
		return "committed"
	case TxnAborted:
		return "aborted"
	}
	return "open"
}

// Txn is one transaction of one producer on this partition, as the broker's
// producer state sees it: it opens at the producer's first transactional data
// batch and ends at the producer's next COMMIT or ABORT marker.
type Txn struct {
	ProducerID     ProducerID
	ProducerEpoch  int16 // epoch of the first data batch
	MarkerEpoch    int16 // epoch of the marker; KIP-890 (TV2) markers carry epoch+1
	State          TxnState
	Seeded         bool  // opened by Partition.Ongoing (a producer snapshot), not by a batch seen here
	FirstOffset    int64 // first offset of the transaction's data
	LastDataOffset int64 // last offset of its data seen here
	MarkerOffset   int64 // offset of the COMMIT/ABORT marker; -1 while open
	FirstTimestamp int64
	LastTimestamp  int64 // max timestamp of its last batch (the producer state's lastTimestamp)
	Batches        int
	Records        int64
	Bytes          int64
	FirstBatch     int32 // index in Log.Batches of its first data batch; -1 when seeded
	MarkerBatch    int32 // index in Log.Batches of its marker; -1 while open

	// Entry is the aborted-transaction index entry the broker serves for
	// this transaction (from disk when the segment's .txnindex was read,
	// else rebuilt); nil unless aborted.
	Entry *AbortInfo
}

// listedFor reports whether Kafka's read_committed rule skips b, a data
// batch of t, an aborted transaction: the broker lists an entry for t, and
// the consumer puts the producer in its aborted set when a batch reaches
// the entry's first offset. A transaction no .txnindex lists (a lost file,
// a lost entry: Log.UnlistedAborted) reaches read_committed consumers.
func (t *Txn) listedFor(b *Batch) bool {
	return t.Entry != nil && t.Entry.Entry.FirstOffset <= b.LastOffset()
}

// UnlistedAborted is what read_committed consumers receive of aborted
// transactions because no .txnindex entry the broker serves lists them.
type UnlistedAborted struct {
	Transactions int      `json:"transactions"`
	Records      int64    `json:"records"`
	FirstOffset  int64    `json:"first_offset"` // of the first such transaction
	Indexes      []string `json:"indexes"`      // the .txnindex files that lack them, in log order
	// Missing lists those of Indexes that do not exist at all
	// (Segment.TxnIndexAbsent).
	Missing []string `json:"missing_files,omitempty"`
	// FromCapture: counted in a capture's read_committed responses, which
	// carried the transactions' data without listing them (Indexes is
	// then empty: the capture does not show the broker's files).
	FromCapture bool `json:"from_capture,omitempty"`
}

// RejectedTxnIndex is a segment's .txnindex holding an entry whose
// version Kafka refuses (Segment.TxnIndexRejected).
type RejectedTxnIndex struct {
	File string `json:"file"`
	RejectedEntry
}

// RejectedTxnIndexes lists, in log order, the .txnindex files a broker
// fails to start with (Segment.TxnIndexRejected); nil when there are none.
func (l *Log) RejectedTxnIndexes() []RejectedTxnIndex {
	var out []RejectedTxnIndex
	for i := range l.Segments {
		if r := l.Segments[i].TxnIndexRejected; r != nil {
			out = append(out, RejectedTxnIndex{File: l.Segments[i].TxnIndexName(), RejectedEntry: *r})
		}
	}
	return out
}

// UnlistedAborted sums the aborted transactions with data that no entry
// the broker serves lists (Txn.Entry nil): their records reach
// read_committed consumers as if committed. Nil when there are none.
func (l *Log) UnlistedAborted() *UnlistedAborted {
	if len(l.Fetches) > 0 {
		return l.unlistedInCapture()
	}
	var u *UnlistedAborted
	seen := map[int32]bool{}
	for i := range l.Txns {
		t := &l.Txns[i]
		if t.State != TxnAborted || t.Entry != nil || t.Records == 0 || t.MarkerBatch < 0 || t.LastDataOffset >= l.LastStableOffset {
			continue // what the LSO still holds back is not received yet
		}
		// The entry belongs in the .txnindex of the marker's segment
		// (LogSegment.updateTxnIndex); one read from disk is what the
		// broker serves (a rebuilt one lists every aborted transaction).
		si := l.Batches[t.MarkerBatch].Segment
		if si < 0 || int(si) >= len(l.Segments) || !l.Segments[si].TxnIndexOnDisk {
			continue
		}
		if u == nil {
			u = &UnlistedAborted{FirstOffset: t.FirstOffset}
		}
		u.Transactions++
		u.Records += t.Records
		if !seen[si] {
			seen[si] = true
			s := &l.Segments[si]
			u.Indexes = append(u.Indexes, s.TxnIndexName())
			if s.TxnIndexAbsent {
				u.Missing = append(u.Missing, s.TxnIndexName())
			}
		}
	}
	return u
}

// unlistedInCapture is UnlistedAborted for a log assembled from a capture:
// what the Java consumer delivers of aborted transactions (their markers in
// the capture) from the read_committed responses captured, each filtered
// by the aborted list it carried. Nil when none was read_committed.
func (l *Log) unlistedInCapture() *UnlistedAborted {
	var rc []CapturedFetch
	for _, f := range l.Fetches {
		if f.Isolation == ReadCommitted {
			rc = append(rc, f)
		}
	}
	if len(rc) == 0 {
		return nil
	}
	var u *UnlistedAborted
	seen := map[*Txn]bool{}
	for d := range Replay(rc, ReadCommitted, VariantJava, l) {
		t := d.Txn
		if d.Verdict != Delivered || t == nil || t.State != TxnAborted || d.Batch == nil || !d.Batch.IsTransactional() {
			continue
		}
		if u == nil {
			u = &UnlistedAborted{FirstOffset: d.From, FromCapture: true}
		}
		u.Records += d.To - d.From + 1
		if !seen[t] {
			seen[t] = true
			u.Transactions++
		}
	}
	return u
}

// TV2 reports whether the transaction was closed the transactions v2 way
// (KIP-890): its marker one epoch above its data. The broker's replay does
// not care (a marker closes its producer's open transaction whatever its
// epoch; see Log.replay); this is for telling the story.
func (t *Txn) TV2() bool {
	return t.MarkerBatch >= 0 && int32(t.MarkerEpoch) == int32(t.ProducerEpoch)+1
}

// AbortInfo is one aborted-transaction entry the broker would serve, with
// where it lives.
type AbortInfo struct {
	Entry       AbortedTxn
	Segment     int32  // index of the segment whose .txnindex holds it
	IndexName   string // e.g. "00000000000000000100.txnindex"
	FromDisk    bool   // read from the segment's .txnindex, not rebuilt
	Txn         *Txn   // the replayed transaction it closes, if one was seen
	MarkerFound bool
}

// Producer summarises one producer id's batches on the partition.
type Producer struct {
	ID            ProducerID
	FirstEpoch    int16
	LastEpoch     int16
	Transactional bool
	FirstOffset   int64
	LastOffset    int64
	LastTimestamp int64
	Batches       int
	Txns          int
	// TV2Markers counts the markers that closed one of its transactions
	// one epoch above that transaction's data: transactions v2 (KIP-890),
	// where the coordinator bumps the epoch before writing every marker
	// (TransactionMetadata.prepareAbortOrCommit), so the epoch climbs by
	// one per transaction under one producer id.
	TV2Markers int
}

// GapCause says why offsets are missing from the log.
type GapCause uint8

// Causes of missing offsets, as far as they can be known offline.
const (
	GapUnknown GapCause = iota
	// GapCompacted: offsets missing between two batches of one segment.
	// Only the log cleaner removes batches from the middle of a segment;
	// this includes markers removed once their delete horizon passed
	// (KIP-534) and aborted data the cleaner discarded.
	GapCompacted
	// GapSegmentBoundary: the next segment starts after the previous one's
	// last batch ended (its tail was cleaned, or a segment is missing).
	GapSegmentBoundary
	// GapEmptiedBatch: a batch kept as an empty header (recordsCount 0) by
	// the cleaner; its offsets hold no record.
	GapEmptiedBatch
	// GapBeforeFirstBatch: between the log start offset and the first batch.
	GapBeforeFirstBatch
	// GapOverlap: a batch starts below the end of the previous one, which a
	// broker never writes (a bad copy, or segments from two replicas).
	GapOverlap
	// GapDamaged: the offsets after the last batch read of a segment whose
	// read stopped at damage (Segment.Damaged), up to the next segment's
	// first batch. They are in the damaged bytes: the running broker serves
	// those bytes and a consumer that reaches them fails on them; its
	// recovery after an unclean shutdown truncates the log there.
	GapDamaged
)

// String names the cause.
func (c GapCause) String() string {
	switch c {
	case GapCompacted:
		return "compacted"
	case GapSegmentBoundary:
		return "segment_boundary"
	case GapEmptiedBatch:
		return "emptied_batch"
	case GapBeforeFirstBatch:
		return "before_first_batch"
	case GapOverlap:
		return "overlap"
	case GapDamaged:
		return "damaged"
	}
	return "unknown"
}

// Gap is a range of offsets [From, To] absent from the log.
type Gap struct {
	From, To int64
	Cause    GapCause
	Segment  int32 // segment it was found in, -1 if between segments
}

// Log is a partition as the broker holds it: the batches, the transactions
// replayed from them, the aborted-transaction index of every segment, and
// the offsets that bound reads. Build makes one; it is read-only afterwards
// and safe for concurrent use.
type Log struct {
	Topic     string
	Partition int32
	Segments  []Segment
	Batches   []Batch

	LogStartOffset      int64
	LogEndOffset        int64
	HighWatermark       int64
	HighWatermarkSource string
	LastStableOffset    int64

	// Txns are the transactions in order of first offset; Open indexes the
	// ones still undecided at the end of the log.
	Txns      []Txn
	Open      []int
	Producers []Producer
	// ProducerNames, when the input names its producers (a scenario's
	// "producer orders transactional id 7"), labels their lanes (Lanes).
	ProducerNames map[ProducerID]string

	// RebuiltIndex is, per segment, the .txnindex the broker would have
	// written for these batches. Mismatches compares it with the files
	// read from disk.
	RebuiltIndex [][]AbortedTxn
	Mismatches   []IndexMismatch
	// CleanerOffset is the partition's cleaner-offset-checkpoint (the log
	// cleaner has cleaned every offset below it) when CleanerOffsetKnown;
	// Mismatches use it to tell the cleaner's work from other losses.
	CleanerOffset      int64
	CleanerOffsetKnown bool
	// RecoveryPoint is the partition's recovery-point-offset-checkpoint
	// when RecoveryPointKnown (Partition.RecoveryPoint): it says which
	// segments a restart after an unclean shutdown recovers.
	RecoveryPoint      int64
	RecoveryPointKnown bool
	// CleanShutdown: the log directory holds the clean shutdown marker
	// (Partition.CleanShutdown).
	CleanShutdown bool
	Gaps          []Gap
	// MismatchesOmitted counts the .txnindex differences found past
	// MaxMismatches, which Mismatches does not keep.
	MismatchesOmitted int

	// Refused counts the batches Build left out of Batches: every batch
	// from the first one whose offsets no log can hold (a negative base
	// offset or lastOffsetDelta, or a last offset whose next offset
	// overflows int64), and RefusedReason says why. The loaders refuse such
	// a batch with a positional error before it gets here; this guards the
	// offsets arithmetic (log end offset, gaps, counts) against batches
	// assembled any other way.
	Refused       int
	RefusedReason string

	// Fetches, for a log assembled from a capture, are the exchanges it
	// came from: the broker's own LSO, high watermark and aborted lists,
	// which Diagnose prefers to what the captured batches alone imply
	// (a read_committed fetch never returns the batches that pin the LSO).
	Fetches []CapturedFetch

	// Snapshot is the producer-state snapshot the replay was seeded from
	// (Partition.Snapshot); nil when none.
	Snapshot *SnapshotInfo

	// NoSegment and NoSegmentEvidence are the Partition's: no .log
	// segment was there, so the offsets are unknown.
	NoSegment         bool
	NoSegmentEvidence []string
	// TopicUnknown is the Partition's: Topic is only a label.
	TopicUnknown bool
	// Tiered is the Partition's: LogStartOffset is then the first local
	// offset, and Tiered.LogStartOffset the partition's.
	Tiered *TieredStorage

	// Replay says how much of the log was read (Partition.Replay); nil
	// when the loader did not say (every batch given).
	Replay *ReplayReport

	// txnsOf lists, per producer, its transactions' indexes in Txns in
	// order of FirstBatch: TxnOf finds a batch's transaction by binary
	// search there, which costs 4 bytes per transaction instead of an index
	// of 4 bytes per batch (a Batch is 64 bytes, and a batch kept for the
	// timeline costs no more than that).
	txnsOf map[ProducerID][]int32
	// markerCE is, per producer that wrote an end-transaction marker,
	// the largest coordinator epoch its markers carry and the index in
	// Batches of the first marker with it (replay keeps it so that
	// CoordinatorEpochEvidence costs no pass over the batches).
	markerCE   map[ProducerID][2]int32
	segFirst   []int             // per segment: index of its first batch in Batches (len Segments+1)
	segDense   []bool            // per segment: its batches lie end to end with growing offsets (dense)
	offIndex   [][]IndexEntry    // per segment: .index entries from disk, nil when rebuilt
	rebuiltOff []lazyOffsetIndex // per segment: the rebuilt .index, when offIndex is nil
	effective  [][]AbortInfo     // per segment: the entries fetches use
	effSorted  []bool            // per segment: effective entries sorted by marker offset, as Kafka appends them
	abortByID  map[abortKey]*AbortInfo
	window     *PartitionWindow // Partition.Window
	clients    *clientsMemo     // Log.ClientDepartures's, set by Build
}

type abortKey struct {
	pid   ProducerID
	first int64
}

func (l *Log) firstBatchOffset() int64 {
	if len(l.Batches) == 0 {
		return l.LogEndOffset
	}
	return l.Batches[0].BaseOffset
}

// BatchAtOrAfter returns the index of the first batch whose LastOffset >= off.
func (l *Log) BatchAtOrAfter(off int64) int {
	return sort.Search(len(l.Batches), func(i int) bool { return l.Batches[i].LastOffset() >= off })
}

// TxnOf returns the transaction batch i belongs to (its data or its marker).
func (l *Log) TxnOf(i int) *Txn {
	if ti := l.TxnIndexOf(i); ti >= 0 {
		return &l.Txns[ti]
	}
	return nil
}

// TxnIndexOf is TxnOf as an index into Txns, -1 for none. The replay gives
// a transactional data batch to its producer's open transaction and an
// end-transaction marker (with records) to the one it closes; a producer's
// transactions do not overlap in batch order, so the candidate is the last
// one that starts at or before i.
func (l *Log) TxnIndexOf(i int) int {
	if i < 0 || i >= len(l.Batches) {
		return -1
	}
	b := &l.Batches[i]
	if !b.HasProducerID() {
		return -1
	}
	control := b.IsControl()
	if control && (b.Records == 0 || !b.IsEndTxnMarker()) || !control && !b.IsTransactional() {
		return -1
	}
	ts := l.txnsOf[b.ProducerID]
	k, _ := slices.BinarySearchFunc(ts, int32(i), func(ti, i int32) int { return cmp.Compare(l.Txns[ti].FirstBatch, i+1) })
	if k == 0 {
		return -1
	}
	t := &l.Txns[ts[k-1]]
	switch {
	case control && t.MarkerBatch != int32(i):
		return -1 // a marker for an empty transaction: it closed nothing
	case !control && t.MarkerBatch >= 0 && int32(i) > t.MarkerBatch:
		return -1
	}
	return int(ts[k-1])
}

// TxnDataRanges is the offset ranges of transaction ti's data, walking
// only the batches between its first and last data offsets (where all its
// data lies) instead of the whole log: the diagnosis asks for open
// transactions only, and is recomputed every second for a wall clock, so
// walking the 1M-batch demo's every transaction cost 95% of it. The test's
// oracle (txnRanges) walks the whole log.
func (l *Log) TxnDataRanges(ti int) []OffsetRange {
	t := &l.Txns[ti]
	var rs []OffsetRange
	for i := l.BatchAtOrAfter(t.FirstOffset); i < len(l.Batches) && l.Batches[i].BaseOffset <= t.LastDataOffset; i++ {
		b := &l.Batches[i]
		if b.ProducerID != t.ProducerID || b.IsControl() || l.TxnOf(i) != t {
			continue
		}
		if n := len(rs); n > 0 && rs[n-1].To+1 == b.BaseOffset {
			rs[n-1].To = b.LastOffset()
		} else {
			rs = append(rs, OffsetRange{From: b.BaseOffset, To: b.LastOffset()})
		}
	}
	return rs
}

// AbortedEntries returns the aborted-transaction entries fetches use for
// segment si, in file order.
func (l *Log) AbortedEntries(si int) []AbortInfo { return l.effective[si] }

// LookupAbort finds the served index entry for an aborted-list element.
func (l *Log) LookupAbort(pid ProducerID, firstOffset int64) *AbortInfo {
	return l.abortByID[abortKey{pid, firstOffset}]
}

// abortKeysUnique reports whether no two served entries share a producer
// and first offset, so that LookupAbort of a transaction's own entry's key
// is that entry (AbortInfo.Txn and Txn.Entry link them): a decision pass
// then takes an aborted batch's entry from its transaction instead of
// probing abortByID, a map as large as the log's aborted transactions. A
// hand-made or damaged .txnindex with duplicate keys makes the pass use
// the map.
func (l *Log) abortKeysUnique() bool {
	n := 0
	for _, eff := range l.effective {
		n += len(eff)
	}
	return n == len(l.abortByID)
}

// SegmentOf returns the index of the segment holding offset off (the floor
// segment by base offset), or -1 below the first.
func (l *Log) SegmentOf(off int64) int {
	i := sort.Search(len(l.Segments), func(i int) bool { return l.Segments[i].BaseOffset > off })
	return i - 1
}

// String summarises the log in one line.
func (l *Log) String() string {
	// A seeded replay's batches and transactions are those it read.
	batches, txns := "", ""
	if r := l.Replay; r != nil && r.Mode == ReplaySnapshot {
		batches, txns = fmt.Sprintf(" read (from offset %d)", r.FromOffset), " read"
	}
	return fmt.Sprintf("%s: %s, %s%s, log start %d, end %d, HWM %d, LSO %d, %s%s (%s open)",
		PartitionName(l.Topic, l.Partition), Plural(len(l.Segments), "segment", "segments"), Plural(len(l.Batches), "batch", "batches"), batches, l.LogStartOffset, l.LogEndOffset,
		l.HighWatermark, l.LastStableOffset, Plural(len(l.Txns), "transaction", "transactions"), txns, Count(int64(len(l.Open))))
}
