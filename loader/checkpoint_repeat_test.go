package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepeatedCheckpointLineKeptOnce: a log directory's offset checkpoint
// that repeats one partition's line (6 bytes each, a state file up to
// 64 MiB) kept an entry per line, some 95 bytes each; the partition now
// has one entry, whose offset is the last line's, as the broker's reader
// and Lookup take it.
func TestRepeatedCheckpointLineKeptOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "t-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 200_000
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", n+1)
	for i := range n {
		fmt.Fprintf(&b, "t 0 %d\n", i%10)
	}
	b.WriteString("u 0 1\n") // a partition the directory does not hold
	writeFile(t, filepath.Join(dir, RecoveryPointOffsetCheckpoint), []byte(b.String()))
	cps, err := readLogDirCheckpoints(dir, presentPartitions(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(cps.Damage) != 0 {
		t.Fatalf("damage %v", cps.Damage)
	}
	if got := len(cps.RecoveryPoint.Entries); got != 1 {
		t.Errorf("%d entries kept for %d lines of one partition, want 1", got, n)
	}
	if v, ok := cps.RecoveryPoint.Lookup("t", 0); !ok || v != (n-1)%10 {
		t.Errorf("recovery point %d, %v; want the last line's, %d", v, ok, (n-1)%10)
	}
}
