package loader

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// splitFixture is a segment of 120 batches (data batches of 1 to 6 records,
// transactional and not, a COMMIT or ABORT marker after every tenth) and
// the byte position where each batch starts.
func splitFixture(t *testing.T) ([]byte, []int64) {
	var data []byte
	var starts []int64
	off := int64(0)
	for i := range 120 {
		starts = append(starts, int64(len(data)))
		if i%10 == 9 {
			data = append(data, marker(t, off, 7, i%20 == 9, 4)...)
			off++
			continue
		}
		n := 1 + i%6
		pid := int64(7)
		if i%3 == 0 {
			pid = -1
		}
		data = append(data, dataBatch(t, off, pid, pid >= 0, n)...)
		off += int64(n)
	}
	return data, starts
}

// scanWith scans data as one segment, sequentially (cuts nil) or cut at
// cuts, after three batches already in the slice (another segment's).
func scanWith(t *testing.T, data []byte, o ScanOptions, cuts []int64) (*SegmentFile, []txnindex.Batch) {
	t.Helper()
	into := makeBatches(3, 3)
	for i := range into {
		into[i].BaseOffset = int64(-10 + i)
	}
	f, grown, err := scanSegmentContext(context.Background(), bytes.NewReader(data), int64(len(data)), "00000000000000000000.log", o, into, 4096, 0, cuts)
	if err != nil {
		t.Fatalf("cuts %v: %v", cuts, err)
	}
	if len(grown) != 3+len(f.Batches) || !reflect.DeepEqual(grown[:3], into[:3]) {
		t.Fatalf("cuts %v: the slice scanned into holds %d batches, want the 3 before and the segment's %d", cuts, len(grown), len(f.Batches))
	}
	return f, grown
}

// sameScan fails unless the split scan found what the sequential one did:
// the same batches, damage (positions and words) and valid bytes.
func sameScan(t *testing.T, what string, seq, split *SegmentFile) {
	t.Helper()
	if len(seq.Batches) != len(split.Batches) {
		t.Fatalf("%s: %d batches, the sequential scan %d", what, len(split.Batches), len(seq.Batches))
	}
	for i := range seq.Batches {
		if seq.Batches[i] != split.Batches[i] {
			t.Fatalf("%s: batch %d: %+v, the sequential scan %+v", what, i, split.Batches[i], seq.Batches[i])
		}
	}
	if fmt.Sprint(seq.Damage) != fmt.Sprint(split.Damage) {
		t.Fatalf("%s: damage %v, the sequential scan %v", what, split.Damage, seq.Damage)
	}
	if seq.ValidBytes != split.ValidBytes {
		t.Fatalf("%s: valid bytes %d, the sequential scan %d", what, split.ValidBytes, seq.ValidBytes)
	}
}

// TestSplitScanEqualsSequential: a segment walked in parts cut at .index
// positions finds exactly what one walk from the start finds, whether the
// cuts are batch starts or not (a damaged .index), with damage in the middle
// of the second part (everything before it kept, reported at its byte),
// damage right at a cut, offsets going backwards at a cut, a legacy entry at
// a cut, and a file that ends mid-batch.
func TestSplitScanEqualsSequential(t *testing.T) {
	clean, starts := splitFixture(t)
	at := func(i int) int64 { return starts[i] }

	type variant struct {
		name string
		data []byte
		cuts [][]int64
	}
	boundaryCuts := [][]int64{{at(40)}, {at(40), at(80)}, {at(30), at(60), at(90)}, {at(1)}, {at(119)}}
	mk := func(f func(d []byte) []byte) []byte { return f(bytes.Clone(clean)) }

	variants := []variant{
		{"clean", clean, append(boundaryCuts, []int64{at(40) + 5}, []int64{at(40) + 5, at(80) + 61}, []int64{at(40), at(40) + 1, at(80)})},
		// A bad CRC (DefaultScanOptions only) and an unknown magic in
		// the middle of the second part.
		{"bad CRC in part 2", mk(func(d []byte) []byte { d[at(55)+70] ^= 0xff; return d }), boundaryCuts},
		{"bad magic in part 2", mk(func(d []byte) []byte { d[at(55)+16] = 9; return d }), boundaryCuts},
		// Damage at the cut itself: the part after it finds it at its
		// first batch.
		{"bad magic at a cut", mk(func(d []byte) []byte { d[at(40)+16] = 9; return d }), boundaryCuts},
		// Offsets that go backwards at the cut: only the join can see it.
		{"offsets backwards at a cut", mk(func(d []byte) []byte {
			copy(d[at(40):], d[at(39):at(39)+8]) // batch 40 gets batch 39's base offset
			return d
		}), boundaryCuts},
		// The file ends in the middle of the last batch.
		{"truncated", clean[:len(clean)-30], boundaryCuts[:3]},
	}
	// A legacy entry (magic 1) at a cut: its wrapper checks look at the
	// batch before it, which only the single walk knows.
	var legacy []byte
	legacy = append(legacy, clean[:at(40)]...)
	last := int64(0)
	{
		f, _ := scanWith(t, clean[:at(40)], HeaderScanOptions, nil)
		last = f.Batches[len(f.Batches)-1].LastOffset()
	}
	// A gzip wrapper whose first inner offset is not above the batch
	// before it: a note (DefaultScanOptions expands wrappers), which a
	// part starting at it could not write.
	legacy = append(legacy, legacyWrapper(t, last+3, 0, 0, 5000, codecGzip,
		legacyMessage(last-1, 0, 0, 0, nil, []byte("a")), legacyMessage(last+3, 0, 0, 0, nil, []byte("b")))...)
	legacyAt := int64(len(legacy))
	legacy = append(legacy, dataBatch(t, last+4, -1, false, 3)...)
	variants = append(variants, variant{"legacy entry at a cut", legacy, [][]int64{{at(40)}, {at(20), at(40)}, {legacyAt}}})

	for _, v := range variants {
		for _, o := range []ScanOptions{HeaderScanOptions, DefaultScanOptions} {
			seq, seqGrown := scanWith(t, v.data, o, nil)
			if v.name != "clean" && len(seq.Damage) == 0 && o.VerifyCRC {
				t.Fatalf("%s: the fixture has no damage the scan finds", v.name)
			}
			for _, cuts := range v.cuts {
				what := fmt.Sprintf("%s, cuts %v, CRC %v", v.name, cuts, o.VerifyCRC)
				split, grown := scanWith(t, v.data, o, cuts)
				sameScan(t, what, seq, split)
				if !reflect.DeepEqual(seqGrown, grown) {
					t.Fatalf("%s: the shared slice differs", what)
				}
			}
		}
	}

	// The damage in the second part is reported at its batch, with every
	// batch before it kept.
	bad := mk(func(d []byte) []byte { d[at(55)+16] = 9; return d })
	f, _ := scanWith(t, bad, HeaderScanOptions, []int64{at(40), at(80)})
	if len(f.Batches) != 55 || len(f.Damage) != 1 || f.Damage[0].Offset != at(55) || f.ValidBytes != at(55) {
		t.Fatalf("damage in part 2: %d batches, damage %v, valid %d; want 55 batches, damage at %#x", len(f.Batches), f.Damage, f.ValidBytes, at(55))
	}
}

// TestSplitPoints: cuts come from .index entries near equal shares of the
// file, strictly increasing and inside it, and none for a small segment.
func TestSplitPoints(t *testing.T) {
	const size = 8 * minSplitPart
	var idx []txnindex.IndexEntry
	const spacing = 16<<10 + 17
	for p := int64(0); p < size; p += spacing {
		idx = append(idx, txnindex.IndexEntry{Offset: p, Position: p})
	}
	cuts := splitPoints(idx, 0, size, 4)
	if len(cuts) != 3 {
		t.Fatalf("cuts %v, want 3", cuts)
	}
	for i, c := range cuts {
		want := int64(size) * int64(i+1) / 4
		if c < want || c > want+spacing {
			t.Errorf("cut %d at %d, want the first entry at or above %d", i, c, want)
		}
	}
	if c := splitPoints(idx, 0, minSplitPart, 4); c != nil {
		t.Errorf("a %d-byte segment cut at %v, want no cut", minSplitPart, c)
	}
	if c := splitPoints(nil, 0, size, 4); c != nil {
		t.Errorf("no index, cuts %v", c)
	}
	// Small batches: an entry every 4 KiB or so, cut too (the parts
	// write into regions of one slice, scanParts).
	var small []txnindex.IndexEntry
	for p := int64(0); p < size; p += 4113 {
		small = append(small, txnindex.IndexEntry{Offset: p, Position: p})
	}
	if c := splitPoints(small, 0, size, 4); len(c) != 3 {
		t.Errorf("entries 4 KiB apart (small batches) cut at %v, want 3 cuts", c)
	}
	// A damaged index: positions out of order or past the end give no
	// cut out of order or outside the file.
	bad := []txnindex.IndexEntry{{Position: size + 5}, {Position: size / 2}, {Position: 3}, {Position: size - 1}}
	prev := int64(0)
	for _, c := range splitPoints(bad, 0, size, 4) {
		if c <= prev || c >= size {
			t.Fatalf("damaged index: cuts %v", splitPoints(bad, 0, size, 4))
		}
		prev = c
	}
}

// TestSplitScanRegionOutgrown: each part of a cut segment writes into a
// region of one slice sized from a sample of its first 64 KiB; a part whose
// first batches are large and the rest small outgrows its region, and the
// join still finds what one walk finds, whichever parts outgrow theirs.
func TestSplitScanRegionOutgrown(t *testing.T) {
	off := int64(0)
	small := func(n int) []byte {
		var d []byte
		for i := range n {
			d = append(d, dataBatch(t, off, int64(7+i%2), false, 1)...)
			off++
		}
		return d
	}
	big := func(n int) []byte {
		var d []byte
		for range n {
			rb := kmsg.RecordBatch{FirstOffset: off, PartitionLeaderEpoch: 3, FirstTimestamp: 1000, MaxTimestamp: 1003, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}
			d = append(d, batch(t, rb, codecNone, records(4, 10000))...)
			off += 4
		}
		return d
	}
	// uniform | large then small | large then small | uniform
	var data []byte
	var cuts []int64
	for i, part := range [][]byte{small(400), append(big(2), small(2000)...), append(big(2), small(2000)...), small(300)} {
		if i > 0 {
			cuts = append(cuts, int64(len(data)))
		}
		data = append(data, part...)
	}
	if m := sampleMean(bytes.NewReader(data), cuts[0], cuts[1]); m < 4000 {
		t.Fatalf("the second part's sample mean is %d bytes: the fixture does not misjudge it", m)
	}
	seq, seqGrown := scanWith(t, data, HeaderScanOptions, nil)
	for _, c := range [][]int64{cuts, cuts[:1], cuts[1:], {cuts[0], cuts[2]}, {cuts[2]}} {
		split, grown := scanWith(t, data, HeaderScanOptions, c)
		sameScan(t, fmt.Sprintf("cuts %v", c), seq, split)
		if !reflect.DeepEqual(seqGrown, grown) {
			t.Fatalf("cuts %v: the shared slice differs", c)
		}
	}
}

// TestOpenPartitionSplitEqualsUnsplit: OpenPartition cuts a segment large
// enough to split at its .index entries and finds what it finds in the same
// segment without an index (one walk): the same batches, damage and valid
// bytes, clean and with a batch's magic damaged in the middle of the second
// part (everything before it kept, the damage at its byte).
func TestOpenPartitionSplitEqualsUnsplit(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: OpenPartition does not cut segments")
	}
	var data []byte
	var idx []txnindex.IndexEntry
	off := int64(0)
	for len(data) < 2*minSplitPart+minSplitPart/2 {
		rb := kmsg.RecordBatch{FirstOffset: off, PartitionLeaderEpoch: 3, FirstTimestamp: 1000, MaxTimestamp: 1003, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}
		b := batch(t, rb, codecNone, records(4, 5000)) // 20 KiB
		idx = append(idx, txnindex.IndexEntry{Offset: off + 3, Position: int64(len(data))})
		data = append(data, b...)
		off += 4
	}
	// The batch at 60% of the file lies in the second of two parts.
	k := sort.Search(len(idx), func(i int) bool { return idx[i].Position >= int64(len(data))*6/10 })
	damaged := bytes.Clone(data)
	damaged[idx[k].Position+16] = 9
	if c := splitPoints(idx, 0, int64(len(data)), 2); len(c) != 1 || c[0] >= idx[k].Position {
		t.Fatalf("cuts %v: want one, before the damaged batch at %d", c, idx[k].Position)
	}
	for _, v := range []struct {
		name string
		data []byte
	}{{"clean", data}, {"damaged in part 2", damaged}} {
		root := t.TempDir()
		withIndex, without := filepath.Join(root, "a", "t-0"), filepath.Join(root, "b", "t-0")
		writeFile(t, filepath.Join(withIndex, "00000000000000000000.log"), v.data)
		writeFile(t, filepath.Join(withIndex, "00000000000000000000.index"), indexFile(0, idx...))
		writeFile(t, filepath.Join(without, "00000000000000000000.log"), v.data)
		a, err := OpenPartitionWith(withIndex, HeaderScanOptions)
		if err != nil {
			t.Fatal(err)
		}
		b, err := OpenPartitionWith(without, HeaderScanOptions)
		if err != nil {
			t.Fatal(err)
		}
		sameScan(t, v.name, b.Segments[0].Log, a.Segments[0].Log)
		if !reflect.DeepEqual(a.Input.Batches, b.Input.Batches) {
			t.Fatalf("%s: the partitions' batches differ", v.name)
		}
		if v.name != "clean" {
			f := a.Segments[0].Log
			if len(f.Batches) != k || len(f.Damage) != 1 || f.Damage[0].Offset != idx[k].Position {
				t.Fatalf("%s: %d batches, damage %v; want %d batches and the damage at %d", v.name, len(f.Batches), f.Damage, k, idx[k].Position)
			}
		}
	}
}

// TestSplitScanSpanEqualsSequential: in a span (spanScan) a segment cut in
// parts keeps what one walk keeps, the batches of the kept producer from
// its first offset up to the span's end and every batch after, with the
// same largest timestamp passed over; offsets missing in the span, inside a
// part or exactly at a cut (which only the join sees), stop both walks with
// errSpanWhole.
func TestSplitScanSpanEqualsSequential(t *testing.T) {
	clean, starts := splitFixture(t)
	at := func(i int) int64 { return starts[i] }
	scan := func(data []byte, cuts []int64) (*SegmentFile, int64, error) {
		sp := newSpanScan(map[txnindex.ProducerID]int64{7: 20})
		o := ScanOptions{span: sp, spanUntil: at(70)}
		f, _, err := scanSegmentContext(context.Background(), bytes.NewReader(data), int64(len(data)), "00000000000000000000.log", o, nil, 0, 0, cuts)
		return f, sp.maxTS, err
	}
	cutsList := [][]int64{{at(40)}, {at(30), at(60)}, {at(30), at(60), at(90)}, {at(69)}, {at(70)}, {at(71)}}
	seq, seqTS, err := scan(clean, nil)
	if err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, b := range seq.Batches {
		if int64(b.Position()) < at(70) && (b.ProducerID != 7 || b.BaseOffset < 20) {
			t.Fatalf("batch at offset %d of producer %d kept in the span", b.BaseOffset, b.ProducerID)
		}
	}
	passed = 120 - len(seq.Batches)
	if passed < 20 || seqTS < 0 {
		t.Fatalf("%d batches passed over, largest timestamp %d: the fixture does not exercise the span", passed, seqTS)
	}
	for _, cuts := range cutsList {
		split, ts, err := scan(clean, cuts)
		if err != nil {
			t.Fatalf("cuts %v: %v", cuts, err)
		}
		sameScan(t, fmt.Sprintf("span, cuts %v", cuts), seq, split)
		if ts != seqTS {
			t.Fatalf("cuts %v: largest timestamp passed over %d, the sequential scan %d", cuts, ts, seqTS)
		}
	}

	// Five offsets missing from batch k on: every base offset after it
	// moved up (the CRC does not cover the base offset).
	gapAt := func(k int) []byte {
		d := bytes.Clone(clean)
		for i := k; i < len(starts); i++ {
			p := starts[i]
			binary.BigEndian.PutUint64(d[p:], binary.BigEndian.Uint64(d[p:])+5)
		}
		return d
	}
	for _, k := range []int{35, 40, 70} {
		d := gapAt(k)
		if _, _, err := scan(d, nil); !errors.Is(err, errSpanWhole) {
			t.Fatalf("gap at batch %d: sequential scan error %v, want errSpanWhole", k, err)
		}
		for _, cuts := range cutsList {
			if _, _, err := scan(d, cuts); !errors.Is(err, errSpanWhole) {
				t.Fatalf("gap at batch %d, cuts %v: error %v, want errSpanWhole", k, cuts, err)
			}
		}
	}
	// After the span, a gap is the full read's to count: no error.
	if _, _, err := scan(gapAt(90), []int64{at(40), at(80)}); err != nil {
		t.Fatalf("gap after the span: %v", err)
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r    io.ReaderAt
	read int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.read += int64(n)
	return n, err
}

// TestHeaderScanOfLargeBatchesReadsHeaders: a header scan of batches of
// 100 KB, each followed by its transaction's marker, reads their headers
// (and the markers' records), not the file: the read-ahead follows the
// mean batch size, so a marker of 78 bytes does not make the next header's
// read a fill of 256 KiB.
func TestHeaderScanOfLargeBatchesReadsHeaders(t *testing.T) {
	var data []byte
	off := int64(0)
	for i := range 400 {
		rb := kmsg.RecordBatch{FirstOffset: off, PartitionLeaderEpoch: 3, FirstTimestamp: 1000, MaxTimestamp: 1003, ProducerID: 7, ProducerEpoch: 4, FirstSequence: int32(4 * i), Attributes: 0x10}
		data = append(data, batch(t, rb, codecNone, records(4, 25000))...)
		off += 4
		data = append(data, marker(t, off, 7, i%2 == 0, 4)...)
		off++
	}
	c := &countingReaderAt{r: bytes.NewReader(data)}
	f, err := NewSegmentWith(c, int64(len(data)), "00000000000000000000.log", HeaderScanOptions)
	if err != nil || len(f.Damage) != 0 || len(f.Batches) != 800 {
		t.Fatalf("scan: %v, damage %v, %d batches, want 800", err, f.Damage, len(f.Batches))
	}
	if c.read > int64(len(data))/4 {
		t.Fatalf("the header scan read %d bytes of a %d-byte file of 100 KB batches, want under a quarter", c.read, len(data))
	}
	t.Logf("read %d of %d bytes", c.read, len(data))
}

// TestPartRegionsFromSpreadSpots: parts that start with a few large
// batches and go on with small ones are misjudged by a sample at their
// start (TestSplitScanRegionOutgrown), not by samples at spots spread over
// them from their .index (an entry every 4 KiB, as the broker appends
// them): each part's region holds its batches, and what is left over
// (beside 64 slots a part) stays under the 1/16 that makes assemble copy
// the batches into an exact slice.
func TestPartRegionsFromSpreadSpots(t *testing.T) {
	defer func(b int64) { spotBytes = b }(spotBytes)
	spotBytes = 16 << 10
	off := int64(0)
	var data, idx []byte
	var starts, ends []int64
	var counts []int
	sinceEntry := 0
	add := func(b []byte) {
		if sinceEntry >= 4096 || len(data) == 0 {
			idx = binary.BigEndian.AppendUint32(idx, uint32(off))
			idx = binary.BigEndian.AppendUint32(idx, uint32(len(data)))
			sinceEntry = 0
		}
		data = append(data, b...)
		sinceEntry += len(b)
	}
	for range 2 {
		starts = append(starts, int64(len(data)))
		n := 0
		for range 3 {
			rb := kmsg.RecordBatch{FirstOffset: off, PartitionLeaderEpoch: 3, FirstTimestamp: 1000, MaxTimestamp: 1003, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}
			add(batch(t, rb, codecNone, records(4, 10000)))
			off += 4
			n++
		}
		for i := range 3000 {
			add(dataBatch(t, off, int64(7+i%2), false, 1+i%3))
			off += int64(1 + i%3)
			n++
		}
		ends = append(ends, int64(len(data)))
		counts = append(counts, n)
	}
	x := newRawIndex(bytes.NewReader(idx), int64(len(idx)))
	spread := x.sampleSpots(starts, ends)
	if len(spread) != 2 || len(spread[0]) < 8 || len(spread[1]) < 8 {
		t.Fatalf("spots %v: want a dozen in each part", spread)
	}
	r := bytes.NewReader(data)
	for _, c := range []struct {
		name  string
		spots [][]int64
		fits  bool
	}{
		{"at the starts", [][]int64{{starts[0]}, {starts[1]}}, false},
		{"spread", spread, true},
	} {
		out, offs := partRegions(r, nil, starts, ends, c.spots, 0, HeaderScanOptions)
		fits := true
		for i := range starts {
			if offs[i+1]-offs[i] < counts[i] {
				fits = false
			}
		}
		if fits != c.fits {
			t.Fatalf("%s: regions %v for %v batches: fit %v, want %v", c.name, offs, counts, fits, c.fits)
		}
		// The 64 slots each part gets beside its share are 2% of a part
		// here; nothing of a part of 1 GiB of batches.
		if total := counts[0] + counts[1]; c.fits && len(out)-total-64*len(starts) > total/16 {
			t.Fatalf("%s: %d slots for %d batches: more than 1/16 and 64 a part left over", c.name, len(out), total)
		}
	}
}
