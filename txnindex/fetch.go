package txnindex

import "sort"

// DefaultMaxBytes is the Java consumer's max.partition.fetch.bytes default.
const DefaultMaxBytes = 1 << 20

// FetchError is the partition error code of a fetch.
type FetchError int16

// Fetch errors the emulation can return.
const (
	FetchOK               FetchError = 0
	FetchOffsetOutOfRange FetchError = 1 // OFFSET_OUT_OF_RANGE
)

// String names the error as Kafka does.
func (e FetchError) String() string {
	if e == FetchOffsetOutOfRange {
		return "OFFSET_OUT_OF_RANGE"
	}
	return "NONE"
}

// FetchRequest is one partition of a Fetch.
type FetchRequest struct {
	Offset    int64
	MaxBytes  int32 // PartitionMaxBytes; <= 0 means DefaultMaxBytes
	Isolation Isolation
	// StrictMaxBytes turns off KIP-74's minOneMessage, as for a partition
	// after the first non-empty one in a multi-partition response: a first
	// batch larger than MaxBytes then yields an empty record set.
	StrictMaxBytes bool
	// AbortedToReadEnd lists the aborted transactions that overlap the
	// returned batches only (up to the last one's end), as kfake does
	// (01_fetch.go), instead of up to Kafka's offset-index bound, which
	// may reach past them. The filters that follow Kafka's rule never see
	// the difference; kafkajs's, which consumes the list in order, does.
	AbortedToReadEnd bool
}

// AbortedTransaction is one element of a Fetch response's aborted list: all
// that goes over the wire of an AbortedTxn.
type AbortedTransaction struct {
	ProducerID  ProducerID
	FirstOffset int64
}

// FetchResponse is what the broker returns for one partition.
type FetchResponse struct {
	Err              FetchError
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64

	// AbortedTransactions is nil when the broker sends a null list
	// (read_uncommitted, or a read_committed read that substituted an
	// empty record set) and non-nil, possibly empty, otherwise.
	AbortedTransactions []AbortedTransaction

	// Batches are the complete batches returned, in order; the slice
	// aliases the Log's batches. FirstBatch is the index of Batches[0] in
	// the Log (or -1), Segment the segment the data was read from.
	Batches    []Batch
	FirstBatch int
	Segment    int

	// Bytes is the size of the record set, PartialBytes the part of it
	// that is a truncated trailing batch: the byte limit may cut the
	// returned slice in the middle of a batch, which clients drop.
	Bytes        int64
	PartialBytes int64
}

// Fetch answers one fetch the way LocalLog.read does. See FetchInto.
func (l *Log) Fetch(req FetchRequest) FetchResponse {
	var r FetchResponse
	l.FetchInto(req, &r)
	return r
}

// FetchInto is Fetch reusing r's aborted-list storage, so a consumer loop
// does not allocate per fetch.
//
// It follows the broker's read path (UnifiedLog.read, LocalLog.read,
// LogSegment.read): an offset below the log start or past the log end is out
// of range; the upper offset is the LSO for read_committed and the high
// watermark otherwise, and a fetch at or past it returns no records (with an
// empty, non-null aborted list for read_committed); otherwise the data comes
// from one segment only, starting at the batch that contains the offset,
// ending before the batch that contains the upper offset, the first batch
// whole even when larger than MaxBytes (KIP-74) and then as many bytes as
// the limit allows.
func (l *Log) FetchInto(req FetchRequest, r *FetchResponse) {
	aborted := r.AbortedTransactions[:0]
	if aborted == nil {
		aborted = []AbortedTransaction{} // non-nil: an empty list, not a null one (no allocation)
	}
	*r = FetchResponse{
		HighWatermark:    l.HighWatermark,
		LastStableOffset: l.LastStableOffset,
		LogStartOffset:   l.LogStartOffset,
		FirstBatch:       -1,
		Segment:          -1,
	}
	if req.Offset < l.LogStartOffset || req.Offset > l.LogEndOffset {
		r.Err = FetchOffsetOutOfRange
		return
	}
	maxOffset := l.HighWatermark
	if req.Isolation == ReadCommitted {
		maxOffset = l.LastStableOffset
	}
	if req.Offset >= maxOffset {
		if req.Isolation == ReadCommitted {
			r.AbortedTransactions = aborted // empty, not null (emptyFetchDataInfo)
		}
		return
	}
	limit := int64(req.MaxBytes)
	if limit <= 0 {
		limit = DefaultMaxBytes
	}

	// The batch holding the offset: the floor segment first, then later
	// segments when the offset lies past the end of a segment's data.
	si := max(l.SegmentOf(req.Offset), 0)
	bi := -1
	for ; si < len(l.Segments); si++ {
		lo, hi := l.segFirst[si], l.segFirst[si+1]
		k := lo + sort.Search(hi-lo, func(i int) bool { return l.Batches[lo+i].LastOffset() >= req.Offset })
		if k < hi {
			bi = k
			break
		}
	}
	if bi < 0 {
		// No batch at or after the offset: LocalLog.read's last branch
		// builds the result without an aborted list.
		return
	}
	r.Segment = si
	end := l.segFirst[si+1]
	first := &l.Batches[bi]
	if first.LastOffset() >= maxOffset {
		// The batch holding the offset reaches the upper offset, so the
		// read stops at its position: nothing to return.
		if req.Isolation == ReadCommitted {
			r.AbortedTransactions = aborted
		}
		return
	}
	if int64(first.Size) > limit && req.StrictMaxBytes {
		// minOneMessage off (Fetch v3+): an empty record set, built
		// without aborted transactions.
		return
	}
	j, n, partial := l.fetchEnd(bi, end, si, maxOffset, limit)
	r.PartialBytes = partial
	r.Batches = l.Batches[bi:j:j]
	r.FirstBatch = bi
	r.Bytes = n + r.PartialBytes
	switch {
	case req.Isolation != ReadCommitted:
	case req.AbortedToReadEnd:
		r.AbortedTransactions = l.collectAbortedBelow(si, req.Offset, r.Batches[len(r.Batches)-1].LastOffset()+1, aborted)
	default:
		r.AbortedTransactions = l.collectAborted(si, req.Offset, first.Position(), r.Bytes, aborted)
	}
}

// collectAbortedBelow is kfake's aborted list (01_fetch.go, handleFetch):
// every entry, in marker order, whose marker is at or past start and whose
// transaction begins below upper, with no early stop.
func (l *Log) collectAbortedBelow(si int, start, upper int64, dst []AbortedTransaction) []AbortedTransaction {
	for s := si; s < len(l.Segments); s++ {
		for k := range l.effective[s] {
			if e := &l.effective[s][k].Entry; e.LastOffset >= start && e.FirstOffset < upper {
				dst = append(dst, AbortedTransaction{e.ProducerID, e.FirstOffset})
			}
		}
	}
	return dst
}

// fetchEnd returns where a fetch that starts with batch bi of segment si
// (ending at batch end) stops: before the first batch that reaches
// maxOffset, or whose bytes would pass limit, and the bytes of the batches
// before it, and how much of the stopping batch fits in the limit (the
// partial batch LogSegment.read's byte slice ends with).
func (l *Log) fetchEnd(bi, end, si int, maxOffset, limit int64) (j int, n, partial int64) {
	n, j = int64(l.Batches[bi].Size), bi+1
	if l.segDense[si] {
		// The same stop as the loop below, found by binary search: in a
		// dense segment both of the loop's tests turn true once and stay
		// true, and the bytes from bi up to batch k are k's position
		// less bi's. This is the one pass per batch a fetch would make
		// besides the consumer's own.
		from := l.Batches[bi].Position()
		j += sort.Search(end-j, func(k int) bool {
			b := &l.Batches[j+k]
			return b.LastOffset() >= maxOffset || b.Position()+int64(b.Size)-from > limit
		})
		if j < end && l.Batches[j].LastOffset() < maxOffset {
			n = l.Batches[j].Position() - from
			if n < limit {
				partial = limit - n
			}
			return j, n, partial
		}
		p := &l.Batches[j-1]
		return j, p.Position() + int64(p.Size) - from, 0
	}
	for ; j < end; j++ {
		b := &l.Batches[j]
		if b.LastOffset() >= maxOffset {
			break
		}
		if n+int64(b.Size) > limit {
			if n < limit {
				partial = limit - n
			}
			break
		}
		n += int64(b.Size)
	}
	return j, n, partial
}

// collectAborted is LocalLog.collectAbortedTransactions: the upper bound is
// the offset of the first .index entry at or past the end of the bytes read
// (else the next segment's base, else the log end offset); then each
// segment's entries, from the fetch segment on, are kept when they overlap
// [start, upperBound), and the walk stops after the first entry whose
// recorded LSO reaches the upper bound. The stop is safe because any
// transaction overlapping the range and still open when that entry was
// written would have held its LSO below the bound.
func (l *Log) collectAborted(si int, start, pos, n int64, dst []AbortedTransaction) []AbortedTransaction {
	upper := l.upperBound(si, pos+n)
	for s := si; s < len(l.Segments); s++ {
		eff := l.effective[s]
		// Entries are sorted by marker offset; those ending before start
		// can neither be kept nor stop the walk (their LSO is at most
		// their marker offset + 1 <= start < upper), so skip them.
		// A file not in that order (hand-made or damaged) is scanned
		// whole, as TransactionIndex.collectAbortedTxns always does.
		k := 0
		if l.effSorted[s] {
			k = sort.Search(len(eff), func(i int) bool { return eff[i].Entry.LastOffset >= start })
		}
		for ; k < len(eff); k++ {
			e := &eff[k].Entry
			if e.LastOffset >= start && e.FirstOffset < upper {
				dst = append(dst, AbortedTransaction{e.ProducerID, e.FirstOffset})
			}
			if e.LastStableOffset >= upper {
				return dst
			}
		}
	}
	return dst
}

// upperBound is OffsetIndex.fetchUpperBoundOffset with LogSegment's fallback.
func (l *Log) upperBound(si int, endPos int64) int64 {
	if idx := l.offIndex[si]; idx != nil {
		k := sort.Search(len(idx), func(i int) bool { return idx[i].Position >= endPos })
		if k < len(idx) {
			return idx[k].Offset
		}
	} else {
		at := l.rebuiltOffsetIndex(si)
		k := sort.Search(len(at), func(i int) bool { return l.Batches[at[i]].Position() >= endPos })
		if k < len(at) {
			return l.Batches[at[k]].LastOffset()
		}
	}
	if si+1 < len(l.Segments) {
		return l.Segments[si+1].BaseOffset
	}
	return l.LogEndOffset
}
