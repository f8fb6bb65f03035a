package loader

import (
	"errors"
	"fmt"
	"sync"

	"github.com/txnscope/txnscope/txnindex"
)

// spanScan is what OpenPartitionTail keeps of the bytes between the first
// offset of the oldest transaction open in its producer snapshot and where
// it reads every batch (the snapshot's offset, or a consumer position): the
// batches of the producers whose transaction is open there, from that
// transaction's first offset on, and nothing else.
//
// Why that is enough: the replay's state is per producer. Every other
// producer's transactions in that span closed before the snapshot's offset
// (the snapshot, the broker's producer state there, has none of theirs
// open), so no answer about the partition's end depends on their batches;
// what a full replay derives from them (their closed transactions' index
// entries, the cleaner's marks) is outside the diagnosis, as it is for the
// segments a seeded load does not read at all. The open transactions'
// own batches are all kept, so their counts, timestamps and discard ranges
// are a full replay's. The bytes are still read (the headers lie 1 KiB
// apart in a production log); what is saved is storing and replaying the
// millions of other batches between them.
type spanScan struct {
	// bits has bit pid%64 set for each kept producer: most batches of a
	// span belong to none, and one test rejects them.
	bits uint64
	// pids and from are the kept producers and the first offset kept of
	// each (a slice: a handful, where a map lookup per batch showed in
	// the profile).
	pids []txnindex.ProducerID
	from []int64

	mu    sync.Mutex
	maxTS int64 // the largest MaxTimestamp of the batches passed over; -1 for none
}

func newSpanScan(from map[txnindex.ProducerID]int64) *spanScan {
	sp := &spanScan{maxTS: -1}
	for pid, f := range from {
		sp.bits |= 1 << (uint64(pid) & 63)
		sp.pids, sp.from = append(sp.pids, pid), append(sp.from, f)
	}
	return sp
}

// keeps reports whether the batch of producer pid at base is kept.
func (sp *spanScan) keeps(pid txnindex.ProducerID, base int64) bool {
	if sp.bits&(1<<(uint64(pid)&63)) == 0 {
		return false
	}
	for i, p := range sp.pids {
		if p == pid {
			return base >= sp.from[i]
		}
	}
	return false
}

// passed records the largest timestamp of the batches a scanner passed
// over: the diagnosis's "newest write" covers them (a maximum, so a
// segment's parts, and a walk that redoes one, may report alike).
func (sp *spanScan) passed(maxTS int64) {
	sp.mu.Lock()
	sp.maxTS = max(sp.maxTS, maxTS)
	sp.mu.Unlock()
}

// errSpanWhole stops a span scan where keeping only the open
// transactions' batches would lose what a full replay finds: a mark of the
// log cleaner (a batch only it leaves, offsets it removed between two
// batches of a segment), which is compaction evidence, or a legacy entry.
// OpenPartitionTail then reads the span whole.
var errSpanWhole = errors.New("loader: a span to read whole")

// spanned reports whether the scanner passes over the v2 batch at its
// position (offsets already checked), recording its timestamp; an error
// wrapping errSpanWhole when the span must be read whole.
func (s *scanner) spanned(pid txnindex.ProducerID, base int64, delta, records int32, attr int16, maxTS int64) (bool, error) {
	sp := s.opts.span
	if sp == nil {
		return false, nil
	}
	in, prev := s.pos < s.opts.spanUntil, s.prevInSpan
	s.prevInSpan = in
	// Offsets missing between two batches of a segment are the cleaner's
	// (findGaps' GapCompacted): counted where the batch before is in the
	// span, as a replay from EveryBatchFrom does not see them.
	if (in || prev) && s.haveLast && base > s.lastOffset+1 {
		return false, s.spanWhole("offsets %d-%d are missing between two batches", s.lastOffset+1, base-1)
	}
	if !in {
		return false, nil
	}
	if txnindex.CleanerMarked(attr, delta, records) {
		return false, s.spanWhole("the batch at offset %d carries a mark of the log cleaner", base)
	}
	if sp.keeps(pid, base) {
		return false, nil
	}
	if !s.spanPassed || maxTS > s.spanMaxTS {
		s.spanMaxTS = maxTS
	}
	s.spanPassed = true
	return true, nil
}

func (s *scanner) spanWhole(format string, args ...any) error {
	return fmt.Errorf("%s: byte %#x: %s: %w", s.name, s.pos, fmt.Sprintf(format, args...), errSpanWhole)
}
