package loader

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// TestSwapsReplaceOneRange: two interrupted swaps replace, as
// LogLoader.load deletes them, every segment whose base offset lies in
// [the lowest swap base, the highest swap next offset), one range for
// both, so the segment between them goes too; ListSegments lists what
// OpenPartition loads, and neither writes to the directory.
func TestSwapsReplaceOneRange(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	seg := func(base int64, ext string, n int) {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext)), dataBatch(t, base, -1, false, n))
	}
	seg(0, ".log", 10)
	seg(10, ".log", 10)
	seg(10, ".log.swap", 5) // 10..14
	seg(20, ".log", 10)     // between the swaps: in [10, 35)
	seg(30, ".log", 10)
	seg(30, ".log.swap", 5) // 30..34
	seg(40, ".log", 10)
	before := listDir(t, dir)

	p, err := OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	var loaded []string
	for _, s := range p.Segments {
		loaded = append(loaded, s.Log.Name)
	}
	want := []string{"00000000000000000000.log", "00000000000000000010.log.swap", "00000000000000000030.log.swap", "00000000000000000040.log"}
	if !slices.Equal(loaded, want) {
		t.Fatalf("loaded %v, want %v", loaded, want)
	}
	l, err := ListSegments(context.Background(), dir, DefaultScanOptions)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, s := range l.Segments {
		listed = append(listed, s.Log)
	}
	if !slices.Equal(listed, want) {
		t.Fatalf("listed %v, want %v", listed, want)
	}
	ignored := func(fs []IgnoredFile) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name+": "+f.Reason)
		}
		slices.Sort(out)
		return out
	}
	if a, b := ignored(p.Ignored), ignored(l.Ignored); !slices.Equal(a, b) {
		t.Fatalf("ignored by OpenPartition %v, by ListSegments %v", a, b)
	}
	if after := listDir(t, dir); !slices.Equal(after, before) {
		t.Fatalf("the directory changed: %v, then %v", before, after)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
