package txnindex

import (
	"sort"
	"sync"
)

// MismatchKind classifies a difference between a .txnindex read from disk and
// the one rebuilt from the log.
type MismatchKind uint8

// Mismatch kinds.
const (
	MissingOnDisk MismatchKind = iota // the log has an aborted transaction the file lacks
	ExtraOnDisk                       // the file has an entry the log does not explain
	FieldsDiffer                      // same producer and marker, other offsets
)

// String names the kind.
func (k MismatchKind) String() string {
	switch k {
	case MissingOnDisk:
		return "missing_on_disk"
	case ExtraOnDisk:
		return "extra_on_disk"
	}
	return "fields_differ"
}

// IndexMismatch is one entry-level difference between disk and rebuilt index.
type IndexMismatch struct {
	Segment int32
	Kind    MismatchKind
	Disk    AbortedTxn // zero for MissingOnDisk
	Rebuilt AbortedTxn // zero for ExtraOnDisk
	// Explanation is what made the difference, as far as the log shows
	// it; ExplainUnknown when nothing in it does. Note says it in a
	// sentence with the offsets involved (and is said even then).
	Explanation MismatchExplanation
	Note        string
}

// indexIntervalBytes is the broker default index.interval.bytes; a rebuilt
// .index gets an entry whenever more than this many bytes were appended
// since the last one (LogSegment.recover).
const indexIntervalBytes = 4096

// buildIndexes picks, per segment, the .txnindex fetches use and the .index
// that bounds them, and compares disk and rebuilt transaction indexes.
func (l *Log) buildIndexes() {
	// The maps are sized up front: grown entry by entry, a replay of
	// millions of batches split their tables a dozen times, each split
	// first-touching fresh memory (a tenth of a seeded diagnose's page
	// faults).
	aborted, entries := 0, 0
	for i := range l.Txns {
		if l.Txns[i].State == TxnAborted {
			aborted++
		}
	}
	for si := range l.Segments {
		if l.Segments[si].TxnIndexOnDisk {
			entries += len(l.Segments[si].TxnIndex)
		} else if si < len(l.RebuiltIndex) {
			entries += len(l.RebuiltIndex[si])
		}
	}
	byMarker := make(map[abortKey]*Txn, aborted) // (pid, marker offset) -> txn
	// dups holds every transaction of a key held by more than one: a
	// marker repeated where segments overlap (a segment's first batches
	// below the end of the one before) closes a second transaction at
	// the same offset. An entry then goes with the one whose marker is
	// in the entry's segment, the .txnindex the broker appended it to
	// with the marker (LogSegment.updateTxnIndex).
	var dups map[abortKey][]*Txn
	for i := range l.Txns {
		if t := &l.Txns[i]; t.State == TxnAborted {
			k := abortKey{t.ProducerID, t.MarkerOffset}
			if prev := byMarker[k]; prev != nil {
				if dups == nil {
					dups = map[abortKey][]*Txn{}
				}
				if len(dups[k]) == 0 {
					dups[k] = append(dups[k], prev)
				}
				dups[k] = append(dups[k], t)
			}
			byMarker[k] = t
		}
	}
	markerTxn := func(k abortKey, si int) *Txn {
		t := byMarker[k]
		for _, d := range dups[k] {
			if d.MarkerBatch >= 0 && int(l.Batches[d.MarkerBatch].Segment) == si {
				t = d
			}
		}
		return t
	}
	l.offIndex = make([][]IndexEntry, len(l.Segments))
	l.rebuiltOff = make([]lazyOffsetIndex, len(l.Segments))
	l.effective = make([][]AbortInfo, len(l.Segments))
	l.effSorted = make([]bool, len(l.Segments))
	l.abortByID = make(map[abortKey]*AbortInfo, entries)
	// Every segment's entries in one array: one allocation instead of
	// one per segment.
	all := make([]AbortInfo, entries)
	for si := range l.Segments {
		s := &l.Segments[si]
		// A segment without a usable .index gets the sparse one
		// LogSegment.recover would rebuild, on its first fetch.
		l.offIndex[si] = s.OffsetIndex
		entries := l.RebuiltIndex[si]
		if s.TxnIndexOnDisk {
			entries = s.TxnIndex
			if !l.outsideWindow(si) {
				l.compareIndex(int32(si))
			}
		}
		if len(all) < len(entries) { // counted above from the same lists
			all = make([]AbortInfo, len(entries))
		}
		eff := all[:len(entries):len(entries)]
		all = all[len(entries):]
		name := ""
		if len(entries) > 0 {
			name = s.TxnIndexName()
		}
		for k, e := range entries {
			eff[k] = AbortInfo{Entry: e, Segment: int32(si), IndexName: name, FromDisk: s.TxnIndexOnDisk}
			if t := markerTxn(abortKey{e.ProducerID, e.LastOffset}, si); t != nil {
				eff[k].Txn, eff[k].MarkerFound = t, true
			}
		}
		l.effective[si] = eff
		l.effSorted[si] = sort.SliceIsSorted(eff, func(i, j int) bool { return eff[i].Entry.LastOffset < eff[j].Entry.LastOffset })
	}
	// Link in a second pass: eff slices no longer move.
	for si := range l.effective {
		for k := range l.effective[si] {
			a := &l.effective[si][k]
			key := abortKey{a.Entry.ProducerID, a.Entry.FirstOffset}
			if _, dup := l.abortByID[key]; !dup {
				l.abortByID[key] = a
			}
			if a.Txn != nil {
				a.Txn.Entry = a
			}
		}
	}
}

// lazyOffsetIndex is the .index LogSegment.recover would rebuild for a
// segment, made on the segment's first fetch (a loaded partition that is
// only drawn never needs it). Its entries are kept as batch indexes, 4 bytes
// each: an entry's offset and position are its batch's LastOffset and
// Position.
type lazyOffsetIndex struct {
	once sync.Once
	at   []int32 // indexes into Log.Batches
}

// rebuiltOffsetIndex returns segment si's rebuilt index: an entry whenever
// more than index.interval.bytes were appended since the last one.
func (l *Log) rebuiltOffsetIndex(si int) []int32 {
	r := &l.rebuiltOff[si]
	r.once.Do(func() {
		var lastEntry int64
		for bi := l.segFirst[si]; bi < l.segFirst[si+1]; bi++ {
			if p := l.Batches[bi].Position(); p-lastEntry > indexIntervalBytes {
				r.at = append(r.at, int32(bi))
				lastEntry = p
			}
		}
	})
	return r.at
}

func (l *Log) compareIndex(si int32) {
	disk, rebuilt := l.Segments[si].TxnIndex, l.RebuiltIndex[si]
	type k struct {
		pid  ProducerID
		last int64
	}
	seen := make(map[k]int, len(rebuilt))
	for i, r := range rebuilt {
		seen[k{r.ProducerID, r.LastOffset}] = i
	}
	matched := make([]bool, len(rebuilt))
	// A seeded replay that kept only the open transactions' batches
	// before EveryBatchFrom rebuilds no entry whose marker is there:
	// the entries on disk are not compared (MismatchReports would drop
	// every difference), which on a span of a million batches is tens of
	// thousands of explanations. The span held no mark of the cleaner
	// (the loader reads it whole otherwise), so none of them is a marker
	// it removed, the evidence markerRemovedEvidence looks for.
	spanEnd := int64(-1)
	if r := l.Replay; r.Seeded() && r.EveryBatchFrom > 0 {
		spanEnd = r.EveryBatchFrom
	}
	for _, d := range disk {
		if d.LastOffset < spanEnd {
			continue
		}
		i, ok := seen[k{d.ProducerID, d.LastOffset}]
		if !ok {
			if l.kept() {
				m := IndexMismatch{Segment: si, Kind: ExtraOnDisk, Disk: d}
				m.Explanation, m.Note = l.explainExtra(d)
				l.Mismatches = append(l.Mismatches, m)
			}
			continue
		}
		matched[i] = true
		r := rebuilt[i]
		if (r.FirstOffset != d.FirstOffset || r.LastStableOffset != d.LastStableOffset || d.Version != AbortedTxnVersion) && l.kept() {
			m := IndexMismatch{Segment: si, Kind: FieldsDiffer, Disk: d, Rebuilt: r}
			m.Explanation, m.Note = l.explainFields(d, r)
			l.Mismatches = append(l.Mismatches, m)
		}
	}
	var missing MismatchExplanation
	var missingNote string
	for i, r := range rebuilt {
		if !matched[i] && l.kept() {
			if missingNote == "" {
				missing, missingNote = l.explainMissing(si)
			}
			l.Mismatches = append(l.Mismatches, IndexMismatch{Segment: si, Kind: MissingOnDisk, Rebuilt: r, Explanation: missing, Note: missingNote})
		}
	}
}

// MaxMismatches bounds the .txnindex differences a log keeps, each with
// its explanation: a .txnindex holds an entry per 34 bytes, and a
// damaged or hostile one of 256 MiB (7.9 million entries, each differing)
// held 6 GB of them. The rest are counted (Log.MismatchesOmitted). An
// answer lists at most ListLimit's largest (10,000) of them anyway.
const MaxMismatches = 100_000

// maxMismatches is MaxMismatches, lowered by a test.
var maxMismatches = MaxMismatches

// kept reports whether the next difference found is kept, counting it in
// MismatchesOmitted when it is not.
func (l *Log) kept() bool {
	if len(l.Mismatches) < maxMismatches {
		return true
	}
	l.MismatchesOmitted++
	return false
}
