package txnindex

import (
	"slices"
	"testing"
)

// TestRecoveryTruncation: the broker's next start after an unclean
// shutdown truncates the first damaged segment it recovers and deletes
// the later ones (LogLoader.recoverLog); the transactions whose markers
// are lost are open again. It takes nothing when the segment is not
// recovered (below the recovery point, or after a clean shutdown), when
// the recovery point is unknown, or when nothing read follows the damage.
func TestRecoveryTruncation(t *testing.T) {
	// seg0: p1's transaction [0,1] and a plain record; seg3: what the case
	// puts there, then damage; seg10: p1's COMMIT, p2's transaction
	// [11,12] still open, a plain record.
	build := func(seg3 func(*logBuilder), rp int64, rpKnown, clean bool) *Log {
		b := newLog().txn(p1, 2).plain(-1, 1).roll()
		seg3(b)
		b.p.Segments[1].Damaged = &SegmentDamage{Position: b.pos, Offset: b.next, Reason: "bad CRC"}
		b.next = 10
		b.roll().commit(p1).txn(p2, 2).plain(-1, 1)
		b.p.HighWatermark = 14
		b.p.RecoveryPoint, b.p.RecoveryPointKnown, b.p.CleanShutdown = rp, rpKnown, clean
		return b.build()
	}
	nothing := func(*logBuilder) {}
	cases := []struct {
		name    string
		seg3    func(*logBuilder)
		rp      int64
		rpKnown bool
		clean   bool
		want    *Truncation // Reopened by producer id in reopened
		reopen  []ProducerID
	}{
		{name: "damage in a recovered segment ends the log there and deletes the later ones", seg3: nothing, rp: 0, rpKnown: true,
			want: &Truncation{Segment: 1, Position: 0, Reason: "bad CRC", Offset: 3, Deleted: []int{2}, Batches: 3, Records: 4, HighWatermark: 3, LastStableOffset: 0}, reopen: []ProducerID{p1}},
		{name: "the log ends after the damaged segment's last batch read", seg3: func(b *logBuilder) { b.plain(-1, 2) }, rp: 3, rpKnown: true,
			want: &Truncation{Segment: 1, Position: 101, Reason: "bad CRC", Offset: 5, Deleted: []int{2}, Batches: 3, Records: 4, HighWatermark: 5, LastStableOffset: 0}, reopen: []ProducerID{p1}},
		{name: "a committed transaction wholly below the damage stays closed", seg3: func(b *logBuilder) { b.txn(p3, 1).commit(p3) }, rp: 0, rpKnown: true,
			want: &Truncation{Segment: 1, Position: 159, Reason: "bad CRC", Offset: 5, Deleted: []int{2}, Batches: 3, Records: 4, HighWatermark: 5, LastStableOffset: 0}, reopen: []ProducerID{p1}},
		{name: "a segment below the recovery point is not recovered", seg3: nothing, rp: 10, rpKnown: true},
		{name: "after a clean shutdown no segment is recovered", seg3: nothing, rp: 0, rpKnown: true, clean: true},
		{name: "an unknown recovery point says nothing", seg3: nothing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := build(c.seg3, c.rp, c.rpKnown, c.clean)
			got := l.RecoveryTruncation()
			if c.want == nil {
				if got != nil {
					t.Fatalf("got %+v, want none", got)
				}
				return
			}
			if got == nil {
				t.Fatal("got none")
			}
			var pids []ProducerID
			for _, x := range got.Reopened {
				pids = append(pids, x.ProducerID)
			}
			if !slices.Equal(pids, c.reopen) {
				t.Errorf("reopened %v, want %v", pids, c.reopen)
			}
			got.Reopened = nil
			if got.Segment != c.want.Segment || got.Position != c.want.Position || got.Reason != c.want.Reason || got.Offset != c.want.Offset ||
				!slices.Equal(got.Deleted, c.want.Deleted) || got.Batches != c.want.Batches || got.Records != c.want.Records ||
				got.HighWatermark != c.want.HighWatermark || got.LastStableOffset != c.want.LastStableOffset {
				t.Errorf("got %+v\nwant %+v", *got, *c.want)
			}
		})
	}

	// Nothing read after the damage: nothing is taken.
	b := newLog().txn(p1, 2).commit(p1)
	b.p.Segments[0].Damaged = &SegmentDamage{Position: b.pos, Offset: b.next, Reason: "truncated"}
	b.p.RecoveryPointKnown = true
	if got := b.build().RecoveryTruncation(); got != nil {
		t.Errorf("damage at the end of the last segment: got %+v, want none", got)
	}
}
