package txnindex

import (
	"bytes"
	"math"
	"testing"
)

// maxLoadedOffset is the largest last offset a loader passes on: the log
// end offset, one past it, must be an int64 too.
const maxLoadedOffset = math.MaxInt64 - 1

// genExtreme turns bytes into a partition at the edges of what the loaders
// let through: offsets up to 2^63-2, lastOffsetDelta up to MaxInt32, gaps
// of up to 2^62 offsets, batches with fewer records than offsets or none,
// interleaved transactions that commit, abort or stay open, and a high
// watermark and log start anywhere in the log.
func genExtreme(data []byte) *Partition {
	rd := bytes.NewReader(data)
	next := func(n int) int {
		c, err := rd.ReadByte()
		if err != nil {
			return 0
		}
		return int(c) % n
	}
	// 2^k - 1 for k in [0, max]: 0, 1, 3, ..., the extremes included.
	pow := func(max int) int64 { return int64(1)<<next(max+1) - 1 }
	b := newLog()
	starts := []int64{0, 1 << 40, 1 << 62, maxLoadedOffset - math.MaxInt32, maxLoadedOffset - 100, maxLoadedOffset}
	b.next = starts[next(len(starts))]
	b.p.Segments[0] = Segment{Name: segName(b.next), BaseOffset: b.next}
	for range 1 + next(24) {
		gap := int64(0)
		if next(3) == 0 {
			gap = pow(62)
		}
		delta := int64(0)
		if next(2) == 0 {
			delta = min(pow(31), math.MaxInt32)
		}
		if b.next > maxLoadedOffset-gap || b.next+gap > maxLoadedOffset-delta {
			break // past the last offset a loader accepts
		}
		b.next += gap
		pid := ProducerID(1 + next(3))
		records := int32(min(delta+1, int64(1+next(8))))
		switch k := next(8); {
		case k < 3:
			b.add(BatchFields{BaseOffset: b.next, LastOffset: b.next + delta, Magic: 2, ProducerID: pid,
				Attributes: AttrTransactional, Records: records, CoordinatorEpoch: -1, Control: ControlNone}.Batch())
		case k < 5:
			ct := ControlCommit
			if k == 4 {
				ct = ControlAbort
			}
			b.marker(pid, ct, 0)
		case k < 6:
			b.add(BatchFields{BaseOffset: b.next, LastOffset: b.next + delta, Magic: 2, ProducerID: NoProducerID,
				Records: records, BaseSequence: -1, CoordinatorEpoch: -1, Control: ControlNone}.Batch())
		case k < 7:
			b.add(BatchFields{BaseOffset: b.next, LastOffset: b.next + delta, Magic: 2, ProducerID: pid,
				Attributes: AttrTransactional, Records: 0, BaseSequence: -1, CoordinatorEpoch: -1, Control: ControlNone, Size: 61}.Batch())
		default:
			if len(b.p.Batches) > 0 {
				b.roll()
			}
		}
	}
	if len(b.p.Batches) > 0 {
		end := b.p.Batches[len(b.p.Batches)-1].NextOffset()
		first := b.p.Segments[0].BaseOffset
		// HWM and log start by a fraction of the log, in 1/256ths.
		b.p.HighWatermark = end - int64(float64(end-first)*float64(next(256))/256)
		b.p.LogStartOffset = first + int64(float64(b.p.HighWatermark-first)*float64(next(256))/256)
	}
	return &b.p
}

// FuzzBuildExtremeOffsets: at the edges of the offset space, Build and
// Decisions do not panic or overflow: log start <= LSO <= HWM <= log end,
// decisions come in order without overlap and cover each batch, and the
// counts of the whole log add up to its offsets. Seeds include the shapes
// that a loader still lets through: a batch ending
// at 2^63-2, a delta of MaxInt32 up to there, an abort near the top, a gap
// of 2^61 offsets.
func FuzzBuildExtremeOffsets(f *testing.F) {
	// Per batch: gap?, [gap 2^k-1], delta?, [delta 2^k-1], producer,
	// records, kind (0-2 data, 3 COMMIT, 4 ABORT, 5 plain, 6 emptied, 7 roll).
	f.Add([]byte{5, 0, 1, 1, 0, 0, 5, 0, 0})                                                                                 // a plain batch at 2^63-2, the last offset
	f.Add([]byte{3, 0, 1, 0, 31, 0, 7, 0, 0, 0})                                                                             // open transactional data of delta MaxInt32 ending at 2^63-2
	f.Add([]byte{3, 2, 1, 0, 30, 0, 7, 0, 1, 1, 0, 0, 4, 1, 1, 1, 0, 5})                                                     // data of delta 2^30-1 near the top, its ABORT, a plain batch
	f.Add([]byte{2, 1, 1, 1, 0, 0, 5, 0, 61, 1, 0, 0, 5, 0, 0})                                                              // plain at 2^62, a gap of 2^61-1, plain
	f.Add([]byte{0, 20, 1, 1, 0, 0, 0, 1, 1, 1, 5, 0, 1, 1, 2, 1, 0, 1, 1, 3, 4, 0, 1, 1, 0, 0, 7, 1, 1, 0, 0, 4, 128, 128}) // transactions of three producers, an abort after a roll
	f.Fuzz(func(t *testing.T, data []byte) {
		checkExtreme(t, genExtreme(data))
	})
}

// TestExtremeOffsets runs the property on fixed seeds in every go test.
func TestExtremeOffsets(t *testing.T) {
	for s := range 2000 {
		seed := make([]byte, 64)
		x := uint32(s)*2654435761 + 1
		for i := range seed {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			seed[i] = byte(x)
		}
		checkExtreme(t, genExtreme(seed))
	}
}

func checkExtreme(t *testing.T, p *Partition) {
	t.Helper()
	l := Build(p)
	if n := len(p.Batches); n > 0 {
		end := max(p.Batches[n-1].NextOffset(), p.Segments[len(p.Segments)-1].BaseOffset)
		if l.LogEndOffset != end || l.HighWatermark != p.HighWatermark {
			t.Fatalf("log end %d HWM %d, want %d %d", l.LogEndOffset, l.HighWatermark, end, p.HighWatermark)
		}
	}
	if !(l.LogStartOffset <= l.LastStableOffset && l.LastStableOffset <= l.HighWatermark && l.HighWatermark <= l.LogEndOffset) {
		t.Fatalf("log start %d LSO %d HWM %d log end %d", l.LogStartOffset, l.LastStableOffset, l.HighWatermark, l.LogEndOffset)
	}
	for _, iso := range []Isolation{ReadCommitted, ReadUncommitted} {
		for _, v := range []Variant{VariantJava, VariantLibrdkafka, VariantFranzGo} {
			prev := int64(-1)
			first := true
			covered := 0
			c := NewCounts(0, maxLoadedOffset)
			for d := range l.Decisions(ConsumeOptions{From: -1, Isolation: iso, Variant: v}) {
				if d.From > d.To || (!first && d.From <= prev) || d.From < 0 {
					t.Fatalf("%v %v: decision [%d, %d] after %d\nbatches %+v", iso, v, d.From, d.To, prev, p.Batches)
				}
				if d.Batch != nil && d.To == d.Batch.LastOffset() {
					covered++
				}
				// read_uncommitted reaches every batch below the HWM.
				if b := d.Batch; iso == ReadUncommitted && b != nil && b.BaseOffset >= l.LogStartOffset && b.LastOffset() < l.HighWatermark &&
					d.Verdict != Delivered && d.Verdict != Control && d.Verdict != Missing {
					t.Fatalf("%v: batch [%d, %d] below the HWM %d: %v", v, b.BaseOffset, b.LastOffset(), l.HighWatermark, d.Verdict)
				}
				first, prev = false, d.To
				c.Add(&d)
			}
			if covered != len(l.Batches) {
				t.Fatalf("%v %v: %d of %d batches decided to their end", iso, v, covered, len(l.Batches))
			}
			if n := c.Records() + c.Missing; n < 0 || c.Missing < 0 || c.Delivered < 0 {
				t.Fatalf("%v %v: counts overflow %+v", iso, v, c)
			}
		}
	}
}
