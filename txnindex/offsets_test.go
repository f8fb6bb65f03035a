package txnindex

import (
	"math"
	"strings"
	"testing"
)

// TestBuildRefusesUnusableOffsets: Build never lets a batch whose offsets
// overflow int64 or go negative into the offset arithmetic:
// the batches before it keep their decisions and the log end
// offset, high watermark and LSO they imply.
func TestBuildRefusesUnusableOffsets(t *testing.T) {
	bad := []struct {
		name        string
		base        int64
		delta       int64
		wantInWhy   string
		wantRefused int
	}{
		{"overflow", math.MaxInt64 - 7, math.MaxInt32, "overflows", 2},
		{"last_is_max", math.MaxInt64 - 1, 1, "overflows", 2},
		{"negative_delta", 10, -5, "negative", 2},
		{"negative_base", math.MinInt64, math.MaxInt32, "negative", 2},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			b := newLog().plain(-1, 3).txn(7, 2).marker(7, ControlCommit, 0)
			hostile := BatchFields{BaseOffset: tc.base, Magic: 2, ProducerID: -1, Records: 1, BaseSequence: -1,
				CoordinatorEpoch: -1, Control: ControlNone}.Batch()
			if !hostile.SetOffsets(tc.base, tc.base+tc.delta) && tc.delta >= 0 {
				// base+delta overflowed: store the delta as the header has it.
				hostile = BatchFields{BaseOffset: tc.base, LastOffset: tc.base, Magic: 2, ProducerID: -1, Records: 1,
					BaseSequence: -1, CoordinatorEpoch: -1, Control: ControlNone}.Batch()
				hostile.SetLastOffset(tc.base + tc.delta) // wraps, as Java's lastOffset() does
			}
			b.add(hostile)
			b.plain(-1, 1)
			l := b.build()
			if l.Refused != tc.wantRefused || !strings.Contains(l.RefusedReason, tc.wantInWhy) {
				t.Errorf("refused %d (%q), want %d and %q", l.Refused, l.RefusedReason, tc.wantRefused, tc.wantInWhy)
			}
			if len(l.Batches) != 3 || l.LogEndOffset != 6 || l.HighWatermark != 6 || l.LastStableOffset != 6 {
				t.Fatalf("%d batches, LEO %d HWM %d LSO %d; want 3 batches, 6 6 6", len(l.Batches), l.LogEndOffset, l.HighWatermark, l.LastStableOffset)
			}
			c := NewCounts(0, l.HighWatermark-1)
			for d := range l.Decisions(ConsumeOptions{From: -1, Isolation: ReadCommitted}) {
				c.Add(&d)
			}
			if c.Delivered != 5 || c.ControlMarkers != 1 || c.Pending != 0 || c.Missing != 0 {
				t.Errorf("counts %+v, want 5 delivered and 1 marker", c)
			}
		})
	}
}
