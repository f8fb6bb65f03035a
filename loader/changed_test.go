package loader

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChanged: a segment truncated, deleted, or its whole directory
// deleted after loading is named, with the bytes the batch needs; a
// segment that only grew (an active segment) is no change.
func TestChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	seg := filepath.Join(dir, "00000000000000000000.log")
	data := slices.Concat(dataBatch(t, 0, -1, false, 3), dataBatch(t, 3, -1, false, 2))
	writeFile(t, seg, data)
	p, err := OpenPartition(dir)
	if err != nil || len(p.Input.Batches) != 2 {
		t.Fatal(err, p)
	}
	last := &p.Input.Batches[1]
	if err := p.Changed(last); err != nil {
		t.Errorf("unchanged: %v", err)
	}
	writeFile(t, seg, slices.Concat(data, dataBatch(t, 5, -1, false, 1)))
	if err := p.Changed(last); err != nil {
		t.Errorf("grown: %v", err)
	}
	writeFile(t, seg, data[:len(data)-1])
	if err := p.Changed(last); err == nil || !strings.Contains(err.Error(), "was truncated to") || !strings.Contains(err.Error(), seg) {
		t.Errorf("truncated: %v", err)
	}
	if err := p.Changed(&p.Input.Batches[0]); err != nil {
		t.Errorf("the first batch is still whole: %v", err)
	}
	os.Remove(seg)
	if err := p.Changed(last); err == nil || err.Error() != "segment "+seg+" was deleted after it was loaded" {
		t.Errorf("deleted: %v", err)
	}
	os.RemoveAll(dir)
	if err := p.Changed(last); err == nil || err.Error() != "the source directory "+dir+" was deleted after it was loaded" {
		t.Errorf("directory deleted: %v", err)
	}
}
