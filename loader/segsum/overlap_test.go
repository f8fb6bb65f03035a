package segsum

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// Overlapping segments: a segment whose first batches lie below the end
// of the segment before. The broker loads such a chain as it finds it
// (LogLoader.loadSegmentFiles opens every .log in name order and checks
// each segment on its own; nothing compares a segment's first offset with
// the end of the one before), and its producer state replays the batches
// in segment order (loadProducersFromRecords), so a repeated batch is
// replayed again. A full load does the same (loader.OpenPartition keeps
// the segments' batches in segment order, txnindex.Build replays them and
// marks the repeated offsets as an overlap). The windows must decide as
// that full pass does.

// overlapCopy puts a copy of batches [from, to) of segment src (indexes
// into its batches; negative counts from the end) at the head of segment
// dst's .log. When rebase is set, dst's files are renamed to the copied
// first batch's offset, so that dst's base offset itself lies inside the
// segments before (the base offsets still ascend).
type overlapCopy struct {
	src, dst, from, to int
	rebase             bool
	// replace: dst holds only the copy (its own batches gone).
	replace bool
}

// applyOverlaps rewrites dir's segments (bases) with the copies, in
// order, and returns the segments' base offsets after them.
func applyOverlaps(t *testing.T, dir string, bases []int64, copies []overlapCopy) []int64 {
	t.Helper()
	bases = append([]int64(nil), bases...)
	name := func(k int, ext string) string { return filepath.Join(dir, fmt.Sprintf("%020d%s", bases[k], ext)) }
	for _, c := range copies {
		src, err := os.ReadFile(name(c.src, ".log"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := loader.NewSegment(strings.NewReader(string(src)), int64(len(src)), "src.log")
		if err != nil || len(f.Damage) > 0 {
			t.Fatal(err, f.Damage)
		}
		n := len(f.Batches)
		from, to := c.from, c.to
		if from < 0 {
			from += n
		}
		if to <= 0 {
			to += n
		}
		if from < 0 || to > n || from >= to {
			t.Fatalf("segment %d has %d batches: no batches [%d, %d)", c.src, n, c.from, c.to)
		}
		var pos [2]int64
		var p int64
		for i := range f.Batches {
			if i == from {
				pos[0] = p
			}
			p += int64(f.Batches[i].Size)
			if i == to-1 {
				pos[1] = p
			}
		}
		dst, err := os.ReadFile(name(c.dst, ".log"))
		if err != nil {
			t.Fatal(err)
		}
		if c.replace {
			dst = nil
		}
		if err := os.WriteFile(name(c.dst, ".log"), append(append([]byte{}, src[pos[0]:pos[1]]...), dst...), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.rebase {
			old := bases[c.dst]
			bases[c.dst] = f.Batches[from].BaseOffset
			for _, ext := range []string{".log", ".index", ".timeindex", ".txnindex"} {
				o := filepath.Join(dir, fmt.Sprintf("%020d%s", old, ext))
				if _, err := os.Stat(o); err == nil {
					if err := os.Rename(o, name(c.dst, ext)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	return bases
}

// overlapScenario has four segments: a transaction of a open across the
// first roll and aborted in the third segment, b's committed in the
// first, c's begun in the second and committed in the fourth.
const overlapScenario = `topic ov
producer a transactional
producer b transactional
producer c transactional
plain 2
begin b
send b
begin a
send a 2
commit b
send a
roll
plain
begin c
send c 2
send a
plain 2
roll
abort a
send c
plain
roll
plain
commit c
plain
`

// reopenScenario has three segments: x's transaction committed at the
// start of the first, y's open across the first roll, z's aborted in the
// third while y's is still open, and x's next transaction after it.
const reopenScenario = `topic ro
producer x transactional
producer y transactional
producer z transactional
begin x
send x
commit x
plain
begin y
send y
roll
plain
roll
begin z
send z
abort z
commit y
begin x
send x
commit x
plain
`

// rekeyScenario has three segments: x's first transaction committed in
// the first, its second begun at its end and committed in the third.
const rekeyScenario = `topic rk
producer x transactional
begin x
send x
commit x
begin x
send x
roll
plain
roll
send x
commit x
plain
`

// TestOverlapAcrossSegmentsEqualFullPass: for each shape of overlap, the
// windows, views, bounds and overview counts equal one full pass (differ).
func TestOverlapAcrossSegmentsEqualFullPass(t *testing.T) {
	cases := []struct {
		name   string
		text   string
		copies []overlapCopy
		// hwm, when set, puts the high watermark at the first offset of
		// batch hwm[1] of segment hwm[0] after the copies (negative:
		// from the end).
		hwm []int
		// bare are segments whose index files are removed: their
		// aborted-transaction entries are the ones the replay rebuilds.
		bare []int
	}{
		{"one batch", emptiedScenario, []overlapCopy{{src: 1, dst: 2, from: -1}}, nil, nil},
		{"one batch, the next segment's base inside the one before", overlapScenario, []overlapCopy{{src: 0, dst: 1, from: -1, rebase: true}}, nil, nil},
		{"over an open transaction", overlapScenario, []overlapCopy{{src: 0, dst: 1, from: -3}}, nil, nil},
		{"over an open transaction, base inside", overlapScenario, []overlapCopy{{src: 0, dst: 1, from: -3, rebase: true}}, nil, nil},
		{"marker in the earlier segment", overlapScenario, []overlapCopy{{src: 0, dst: 1, from: -4, to: -2}}, nil, nil},
		{"data and its marker repeated", overlapScenario, []overlapCopy{{src: 0, dst: 1, from: -5}}, nil, nil},
		{"abort marker repeated", overlapScenario, []overlapCopy{{src: 2, dst: 3, from: 0}}, nil, nil},
		{"chain of three", overlapScenario, []overlapCopy{{src: 0, dst: 1, from: -2}, {src: 1, dst: 2, from: -2}}, nil, nil},
		{"chain of three, bases inside", overlapScenario, []overlapCopy{{src: 0, dst: 1, from: -2, rebase: true}, {src: 1, dst: 2, from: -1, rebase: true}}, nil, nil},
		{"two segments back", overlapScenario, []overlapCopy{{src: 0, dst: 2, from: -2}}, nil, nil},
		{"into the last segment", overlapScenario, []overlapCopy{{src: 2, dst: 3, from: -2}}, nil, nil},
		{"high watermark inside the overlap", overlapScenario, []overlapCopy{{src: 0, dst: 1, from: -3}}, []int{0, -2}, nil},
		{"high watermark inside, base inside", overlapScenario, []overlapCopy{{src: 1, dst: 2, from: -3, rebase: true}}, []int{1, -1}, nil},
		// The copy of x's data reopens a transaction of x at offset 0,
		// after y's began at 3: z's abort in the third segment records
		// the first of them by first offset as the LSO, as
		// ProducerStateManager.lastStableOffset walks ongoingTxns (a
		// TreeMap by first offset), in the window seeded with both as
		// in the full pass.
		// The repeated COMMIT closes x's second transaction (begun at
		// 2) in the second segment, and the repeated data reopens one
		// at 2 there: the third segment's window adds to it what the
		// second segment holds of it, not the first's (the same
		// producer and first offset, another transaction). Found by
		// TestRandomPartitionsEqualFullPass (seed 4414828).
		{"a repeated marker closes what a repeated batch reopens", rekeyScenario, []overlapCopy{{src: 0, dst: 1, from: -2}}, nil, nil},
		// The second segment is only a copy of a batch from the
		// middle of the first, its base at that batch: a fetch that
		// read the first segment past it (200 bytes) continues from a
		// position the second segment floors to and holds nothing at
		// or after, so the broker reads on in the third segment and
		// the first segment's tail is never read.
		{"a segment inside the one before", overlapScenario, []overlapCopy{{src: 0, dst: 1, from: 2, to: 3, rebase: true, replace: true}}, nil, nil},
		{"transaction reopened below an open one", reopenScenario, []overlapCopy{{src: 0, dst: 1, from: 0, to: 1}}, nil, []int{2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.text
			if tc.hwm != nil {
				// The high watermark comes from the checkpoint the
				// scenario writes: find the offset first.
				dir, bases := writeScenario(t, text)
				bases = applyOverlaps(t, dir, bases, tc.copies)
				text += fmt.Sprintf("hwm %d\n", batchOffset(t, dir, bases[tc.hwm[0]], tc.hwm[1]))
			}
			dir, bases := writeScenario(t, text)
			bases = applyOverlaps(t, dir, bases, tc.copies)
			for _, k := range tc.bare {
				for _, ext := range []string{".index", ".timeindex", ".txnindex"} {
					if err := os.Remove(filepath.Join(dir, fmt.Sprintf("%020d%s", bases[k], ext))); err != nil && !os.IsNotExist(err) {
						t.Fatal(err)
					}
				}
			}
			p, err := loader.OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			full := p.Build()
			if !hasOverlap(full) {
				t.Fatalf("the full pass sees no overlap: the case does not test one")
			}
			if d := differ(t, dir, 3); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// batchOffset is the base offset of batch i (negative: from the end) of
// the segment at base.
func batchOffset(t *testing.T, dir string, base int64, i int) int64 {
	t.Helper()
	f, err := loader.OpenSegment(filepath.Join(dir, fmt.Sprintf("%020d.log", base)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if i < 0 {
		i += len(f.Batches)
	}
	return f.Batches[i].BaseOffset
}

func hasOverlap(l *txnindex.Log) bool {
	for _, g := range l.Gaps {
		if g.Cause == txnindex.GapOverlap {
			return true
		}
	}
	return false
}

// TestOverlapWindowRecords: the log of a window of overlapping segments
// holds its run's batches, its neighbours' included (the page of the
// segment streams them all): each decodes from its own segment file to the
// records a full load decodes.
func TestOverlapWindowRecords(t *testing.T) {
	dir, bases := writeScenario(t, overlapScenario)
	applyOverlaps(t, dir, bases, []overlapCopy{{src: 0, dst: 1, from: -2, rebase: true}})
	full, err := loader.OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		seg int32
		off int64
	}
	at := map[key]int{}
	for i, b := range full.Input.Batches {
		at[key{b.Segment, b.BaseOffset}] = i
	}
	s, err := Open(dir, Options{Scan: loader.DefaultScanOptions, MaxMemory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := s.Window(ctx, 1, txnindex.ConsumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	others := 0
	for i := range w.Log.Batches {
		b := &w.Log.Batches[i]
		if b.Segment != 1 {
			others++
		}
		fi, ok := at[key{b.Segment, b.BaseOffset}]
		if !ok {
			t.Fatalf("batch at %d of segment %d is not in the full load", b.BaseOffset, b.Segment)
		}
		fb := full.Input.Batches[fi]
		want, err := full.Segments[fb.Segment].Log.Records(fb)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.RecordsPage(ctx, w.Log, b, loader.PageLimits{})
		if !ok || err != nil {
			t.Fatalf("batch at %d of segment %d: ok %v, %v", b.BaseOffset, b.Segment, ok, err)
		}
		if fmt.Sprint(recs(got.Records)) != fmt.Sprint(recs(want)) {
			t.Fatalf("batch at %d of segment %d: %v, the full load %v", b.BaseOffset, b.Segment, recs(got.Records), recs(want))
		}
	}
	if others == 0 {
		t.Fatal("the window of segment 1 holds no batch of another segment: the segments do not overlap")
	}
}
