package loader

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// bigBatchSegment writes a segment of n batches of about 4 KiB (a record of
// 4000 bytes each; producers 7 and 8, a COMMIT after every tenth) and
// returns its path and each batch's start.
func bigBatchSegment(t *testing.T, n int) (string, []int64) {
	t.Helper()
	var data []byte
	var starts []int64
	for i := range n {
		starts = append(starts, int64(len(data)))
		off := int64(i)
		if i%10 == 9 {
			data = append(data, marker(t, off, 7, true, 1)...)
			continue
		}
		rb := kmsg.RecordBatch{FirstOffset: off, PartitionLeaderEpoch: 3, FirstTimestamp: 1000 + off, MaxTimestamp: 1000 + off,
			ProducerID: 7 + int64(i%2), ProducerEpoch: 1, FirstSequence: int32(i)}
		data = append(data, batch(t, rb, codecNone, records(1, 4000))...)
	}
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, starts
}

// mappedSegment is bigBatchSegment(t, 600) opened and mapped for a
// header scan (the least size to map lowered for it, mapped in whatever
// pages the page cache gives): its path, batch
// starts, file, size and mapping, all closed when the test ends.
func mappedSegment(t *testing.T) (string, []int64, *os.File, int64, io.ReaderAt) {
	t.Helper()
	old, oldLarge := mmapMinBytes, mapsLarge
	mmapMinBytes, mapsLarge = 1<<20, func(*os.File, []byte, []int64) bool { return true }
	t.Cleanup(func() { mmapMinBytes, mapsLarge = old, oldLarge })
	path, starts := bigBatchSegment(t, 600)
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	r, done := scanReader(fh, st.Size(), 0, HeaderScanOptions)
	t.Cleanup(done)
	if mapped(r) == nil {
		t.Fatalf("a header scan of %d bytes of 4 KiB batches is not mapped", st.Size())
	}
	return path, starts, fh, st.Size(), r
}

// TestMappedScanEqualsPread: a header scan of a segment of 4 KiB batches
// maps it, and finds what the pread scan finds, walked whole or cut in
// parts; a CRC scan and a segment of small batches are read with pread.
func TestMappedScanEqualsPread(t *testing.T) {
	_, starts, fh, size, r := mappedSegment(t)
	if r, done := scanReader(fh, size, 0, DefaultScanOptions); mapped(r) != nil {
		done()
		t.Fatal("a CRC scan is mapped")
	}
	for _, cuts := range [][]int64{nil, {starts[300]}, {starts[200], starts[400]}, {starts[200] + 7}} {
		want, _, err := scanSegmentFrom(context.Background(), fh, size, 0, "00000000000000000000.log", HeaderScanOptions, nil, 0, 0, split{cuts: cuts}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := scanSegmentFrom(context.Background(), r, size, 0, "00000000000000000000.log", HeaderScanOptions, nil, 0, 0, split{cuts: cuts}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Batches) != 600 || len(want.Damage) != 0 {
			t.Fatalf("the fixture scans to %d batches, damage %v", len(want.Batches), want.Damage)
		}
		sameScan(t, "mapped", want, got)
	}

	small := filepath.Join(t.TempDir(), "00000000000000000000.log")
	var data []byte
	for i := range 20000 {
		data = append(data, dataBatch(t, int64(i), 7, false, 1)...)
	}
	if err := os.WriteFile(small, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := os.Open(small)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if r, done := scanReader(sh, int64(len(data)), 0, HeaderScanOptions); mapped(r) != nil {
		done()
		t.Fatalf("a segment of %d-byte batches is mapped", len(data)/20000)
	}
}

// TestMappedScanTruncated: a mapped segment truncated before the scan
// (as a live broker's recovery or the cleaner may do) faults past its new
// end; the scan reports the file changed, keeps the batches before, and
// does not crash. So does a read of the mapping there.
func TestMappedScanTruncated(t *testing.T) {
	path, starts, _, size, r := mappedSegment(t)
	cut := starts[300] + 100
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := r.ReadAt(buf, size-64); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read of the mapping past the truncation: %v, want io.ErrUnexpectedEOF", err)
	}
	for _, cuts := range [][]int64{nil, {starts[150]}, {starts[150], starts[450]}} {
		f, _, err := scanSegmentFrom(context.Background(), r, size, 0, "00000000000000000000.log", HeaderScanOptions, nil, 0, 0, split{cuts: cuts}, nil)
		if err != nil {
			t.Fatalf("cuts %v: %v", cuts, err)
		}
		// The bytes up to the end of the truncation's page read as
		// zeros (a bad size), past it as a fault (the file changed). A
		// header scan reads no body: batch 300, whose header survives,
		// is kept, as the pread scan with the size taken before keeps it.
		if len(f.Batches) < 300 || len(f.Damage) == 0 || f.ValidBytes > starts[301] {
			t.Fatalf("cuts %v: %d batches, valid %d, damage %v: want the 300 batches before byte %d and the damage", cuts, len(f.Batches), f.ValidBytes, f.Damage, cut)
		}
		last := f.Damage[len(f.Damage)-1].Error()
		if !strings.Contains(last, "file changed while being read") && !strings.Contains(last, "bad size") {
			t.Fatalf("cuts %v: damage %q", cuts, last)
		}
	}
}
