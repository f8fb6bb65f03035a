package input

import (
	"os"
	"testing"
)

// TestMemory: an uploaded segment's memory counts its kept bytes and at
// least 64 bytes a decoded batch; a directory read from disk keeps no bytes.
func TestMemory(t *testing.T) {
	b, err := os.ReadFile(lsxSegment)
	if err != nil {
		t.Fatal(err)
	}
	in, err := OpenBytes("x.log", b)
	if err != nil {
		t.Fatal(err)
	}
	batches := int64(len(in.Partitions[0].Log.Batches))
	if m, want := in.Memory(), int64(len(b))+64*batches; batches == 0 || m < want {
		t.Fatalf("Memory %d, want at least %d (%d bytes, %d batches)", m, want, len(b), batches)
	}
	d, err := Open(ksqlDir)
	if err != nil {
		t.Fatal(err)
	}
	if m, n := d.Memory(), int64(len(d.Partitions[0].Log.Batches)); m < 64*n || m >= 64*n+1<<20 {
		t.Fatalf("directory: Memory %d for %d batches", m, n)
	}
}
