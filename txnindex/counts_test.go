package txnindex

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCountsRangeEdges: what a range's record counts are at the edges the
// offsets-minus-offsets arithmetic of other tools gets wrong.
func TestCountsRangeEdges(t *testing.T) {
	rc := ConsumeOptions{From: -1, Isolation: ReadCommitted}
	for _, c := range []struct {
		name     string
		log      *Log
		o        ConsumeOptions
		from, to int64
		want     Counts
	}{
		{"a committed transaction: its data delivered, its marker a control record",
			newLog().txn(1, 3).commit(1).build(), rc, 0, 3,
			Counts{Batches: 2, Delivered: 3, ControlMarkers: 1, LastReached: 3}},
		{"an aborted transaction: its records aborted, not delivered",
			newLog().txn(1, 3).abort(1).plain(-1, 2).build(), rc, 0, 5,
			Counts{Batches: 3, Delivered: 2, Aborted: 3, ControlMarkers: 1, LastReached: 5}},
		{"a range that cuts a batch counts only the offsets inside it",
			newLog().plain(-1, 10).build(), rc, 3, 5,
			Counts{Batches: 1, Delivered: 3, LastReached: 5}},
		{"a compacted batch counts its records, not its offsets",
			newLog().add(BatchFields{BaseOffset: 0, LastOffset: 4, Magic: 2, ProducerID: -1, Records: 2, BaseSequence: -1, CoordinatorEpoch: -1}.Batch()).build(), rc, 0, 4,
			Counts{Batches: 1, Delivered: 2, Missing: 3, LastReached: 4}},
		{"a batch the cleaner emptied holds no records: its offsets are missing",
			newLog().emptied(1, 5, false).commit(1).plain(-1, 2).build(), rc, 0, 7,
			Counts{Batches: 3, Delivered: 2, ControlMarkers: 1, Missing: 5, LastReached: 7}},
		{"offsets the cleaner removed are missing, not records",
			newLog().plain(-1, 2).skip(4).plain(-1, 1).build(), rc, 0, 6,
			Counts{Batches: 2, Delivered: 3, Missing: 4, LastReached: 6}},
		{"an open transaction's records are pending under read_committed",
			newLog().plain(-1, 1).txn(1, 2).plain(-1, 1).build(), rc, 0, 3,
			Counts{Batches: 3, Delivered: 1, Pending: 3, LastReached: 0}},
		{"the same records are delivered under read_uncommitted",
			newLog().plain(-1, 1).txn(1, 2).plain(-1, 1).build(), ConsumeOptions{From: -1, Isolation: ReadUncommitted}, 0, 3,
			Counts{Batches: 3, Delivered: 4, LastReached: 3}},
		{"below the consumer's position: counted apart, never reached",
			newLog().plain(-1, 2).plain(-1, 2).build(), ConsumeOptions{From: 2, Isolation: ReadCommitted}, 0, 3,
			Counts{Batches: 2, BeforePosition: 2, Delivered: 2, LastReached: 3}},
		{"a range outside the log counts nothing",
			newLog().plain(-1, 2).build(), rc, 10, 20,
			Counts{LastReached: -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := NewCounts(c.from, c.to)
			for d := range c.log.Decisions(c.o) {
				got.Add(&d)
			}
			c.want.From, c.want.To = c.from, c.to
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestCountsOracle: on random workloads without compacted batches, a
// range's counts are the per-offset verdicts of the range, counted letter
// by letter (helpers_test.go's alphabet).
func TestCountsOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 17))
	checked := 0
	for range 2000 {
		seed := randomSeed(r, 96)
		l := genWorkload(seed).b.build()
		if len(l.Batches) == 0 || !recordsFillOffsets(l) {
			continue
		}
		o := ConsumeOptions{From: -1, Isolation: Isolation(r.IntN(2))}
		if r.IntN(3) == 0 {
			o.From = l.LogStartOffset + r.Int64N(l.LogEndOffset-l.LogStartOffset+1)
		}
		s := letters(l, o)
		if strings.Contains(s, "<jump") {
			continue
		}
		// The letters start at the first decision: batches below the log
		// start are decided (before the position), so that may be below it.
		start := l.LogStartOffset
		for d := range l.Decisions(o) {
			start = d.From
			break
		}
		from := start + r.Int64N(int64(len(s)))
		to := from + r.Int64N(int64(len(s))-(from-start))
		got := NewCounts(from, to)
		for d := range l.Decisions(o) {
			got.Add(&d)
		}
		want := NewCounts(from, to)
		for off := from; off <= to; off++ {
			switch s[off-start] {
			case 'D':
				want.Delivered++
			case 'A':
				want.Aborted++
			case 'C':
				want.ControlMarkers++
			case 'P':
				want.Pending++
			case 'B':
				want.BeforePosition++
			case 'G':
				want.Missing++
			}
			if c := s[off-start]; c == 'D' || c == 'A' || c == 'C' {
				want.LastReached = off
			}
		}
		got.Batches = 0 // not per offset
		if got != want {
			t.Fatalf("seed %x %v [%d, %d] of %q:\ngot  %+v\nwant %+v", seed, o, from, to, s, got, want)
		}
		checked++
	}
	if checked < 500 {
		t.Fatalf("only %d ranges checked", checked)
	}
}

// recordsFillOffsets reports whether every batch has a record per offset.
func recordsFillOffsets(l *Log) bool {
	for i := range l.Batches {
		b := &l.Batches[i]
		if int64(b.Records) != b.LastOffset()-b.BaseOffset+1 {
			return false
		}
	}
	return true
}
