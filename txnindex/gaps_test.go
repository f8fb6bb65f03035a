package txnindex

import "testing"

// TestGapsBelowLogStart: batches wholly below the log start are not
// overlaps (findGaps counted them as overlapping the log start), a gap
// below the log start is not reported, one straddling it is reported from
// the log start, and a real overlap above it still is.
func TestGapsBelowLogStart(t *testing.T) {
	b := newLog().plain(NoProducerID, 3).plain(NoProducerID, 2).skip(4).plain(NoProducerID, 2).skip(3).plain(NoProducerID, 1)
	// Offsets: [0,2] [3,4] gap 5-8 [9,10] gap 11-13 [14]; log start 7.
	b.p.LogStartOffset = 7
	l := b.build()
	want := []Gap{{From: 7, To: 8, Cause: GapCompacted, Segment: 0}, {From: 11, To: 13, Cause: GapCompacted, Segment: 0}}
	if len(l.Gaps) != len(want) {
		t.Fatalf("gaps %+v, want %+v", l.Gaps, want)
	}
	for i := range want {
		if l.Gaps[i] != want[i] {
			t.Errorf("gap %d: %+v, want %+v", i, l.Gaps[i], want[i])
		}
	}

	// A batch starting inside the previous one is an overlap, above the
	// log start or not.
	o := newLog().plain(NoProducerID, 4)
	o.next = 2
	o.plain(NoProducerID, 4)
	o.p.LogStartOffset = 1
	l = o.build()
	if len(l.Gaps) != 1 || l.Gaps[0] != (Gap{From: 2, To: 3, Cause: GapOverlap, Segment: 0}) {
		t.Fatalf("gaps %+v, want one overlap [2, 3]", l.Gaps)
	}
}
