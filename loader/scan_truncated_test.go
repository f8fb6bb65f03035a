package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A segment truncated by another process after its size was taken (a live
// broker's active segment): the scan keeps every batch before the lost
// bytes and reports the damage at the batch it was reading, instead of
// failing the whole load with a read error.
func TestScanFileTruncatedDuringScan(t *testing.T) {
	var parts [][]byte
	off := int64(0)
	for range 40 {
		parts = append(parts, dataBatch(t, off, 7, false, 20)) // about 700 bytes each
		off += 20
	}
	data := concat(parts...)
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	// Truncate to the first page after the size was taken.
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	f, _, err := scanFile(fh, int64(len(data)), filepath.Base(path), HeaderScanOptions, nil, 0, 0)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	// Every batch that starts and has its header inside the first page was
	// read; the first one whose header lies past it is the damage.
	var want int
	var pos int
	for _, p := range parts {
		if pos+batchHeaderSize > 4096 {
			break
		}
		want++
		pos += len(p)
	}
	if len(f.Batches) != want {
		t.Errorf("kept %d batches, want the %d whose headers were readable", len(f.Batches), want)
	}
	if len(f.Damage) != 1 {
		t.Fatalf("damage %v, want one entry", f.Damage)
	}
	d := f.Damage[0]
	if d.Offset != int64(pos) || !strings.Contains(d.Error(), "file changed while being read") || !strings.Contains(d.Error(), "00000000000000000000.log") {
		t.Errorf("damage %q at %d, want the file name and 'file changed while being read' at %d", d.Error(), d.Offset, pos)
	}
	if f.ValidBytes != int64(pos) {
		t.Errorf("ValidBytes %d, want %d", f.ValidBytes, pos)
	}
}
