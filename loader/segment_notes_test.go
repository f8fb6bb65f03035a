package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// badCRCEntries is n magic 0 entries of 26 bytes, the smallest any entry
// is, at offsets from 0, each with a CRC that fails.
func badCRCEntries(n int) []byte {
	var b []byte
	for i := range n {
		e := legacyMessage(int64(i), 0, 0, 0, nil, nil)
		e[12] ^= 0xff
		b = append(b, e...)
	}
	return b
}

// TestSegmentNotesListedThenCounted: a segment under a clean shutdown
// marker whose batches all fail their CRC, each kept and noted as the
// broker serves it. Noted one by one, 4 MB of the smallest entries took
// 79 MB, most of it the notes; now a segment lists maxNotes and counts the
// rest in one note at the first of them.
func TestSegmentNotesListedThenCounted(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "t-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 4 << 20 / 26
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), badCRCEntries(n), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, CleanShutdownFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	p, err := OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	kept := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	t.Logf("%d entries of 26 bytes, all noted: %d KB kept", n, kept>>10)
	if kept > 4*26*n {
		t.Errorf("%d MB kept for %d MB of entries", kept>>20, 26*n>>20)
	}
	if len(p.Input.Batches) != n {
		t.Fatalf("%d batches kept, want all %d", len(p.Input.Batches), n)
	}
	d := p.Segments[0].Log.Damage
	if len(d) != maxNotes+1 || len(p.Damage) != maxNotes+1 {
		t.Fatalf("%d notes in the segment, %d in the partition; want %d listed and one counting the rest", len(d), len(p.Damage), maxNotes)
	}
	want := fmt.Sprintf("loader: 00000000000000000000.log: batch at byte %#x: %s more problems in this segment's batches not listed, the first of them here",
		26*maxNotes, txnindex.Count(int64(n-maxNotes)))
	if got := d[maxNotes].Error(); got != want {
		t.Errorf("last note %q\nwant %q", got, want)
	}
	runtime.KeepAlive(p)
}

// TestSplitScanCountsNotesAsSequential: a segment walked in parts lists
// and counts its notes as one walk does, whichever part found them, and
// the damage that stops the walk stays last, after the count.
func TestSplitScanCountsNotesAsSequential(t *testing.T) {
	var data []byte
	var starts []int64
	for i := range 200 {
		b := dataBatch(t, int64(i), -1, false, 1)
		b[17] ^= 0xff // the CRC
		starts = append(starts, int64(len(data)))
		data = append(data, b...)
	}
	o := ScanOptions{crcKept: cleanShutdownCRC}
	for _, tail := range []struct {
		name string
		data []byte
	}{{"whole", data}, {"truncated", data[:len(data)-10]}} {
		seq, _ := scanWith(t, tail.data, o, nil)
		if len(seq.Damage) < maxNotes+1 || seq.Damage[maxNotes].left == 0 {
			t.Fatalf("%s: sequential scan's damage %v", tail.name, seq.Damage)
		}
		for _, cuts := range [][]int{{5}, {10, 30}, {50, 100, 150}, {25}} {
			at := make([]int64, len(cuts))
			for i, c := range cuts {
				at[i] = starts[c]
			}
			split, _ := scanWith(t, tail.data, o, at)
			sameScan(t, fmt.Sprintf("%s, cuts %v", tail.name, cuts), seq, split)
		}
	}
}
