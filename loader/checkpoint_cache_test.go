package loader

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func cpParses() int {
	cpCache.mu.Lock()
	defer cpCache.mu.Unlock()
	return cpCache.parses
}

// writeBigCheckpoints writes a log directory of four partitions of topic
// "t" (one data batch each) whose replication-offset and recovery-point
// checkpoints also list other lines of partitions the directory does not
// hold, as a broker's do for the partitions of its other log directories,
// and dates every file an hour back.
func writeBigCheckpoints(t *testing.T, other int) string {
	t.Helper()
	dir := t.TempDir()
	for p := range 4 {
		pd := filepath.Join(dir, fmt.Sprintf("t-%d", p))
		if err := os.Mkdir(pd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pd, "00000000000000000000.log"), dataBatch(t, 0, -1, false, 3), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{ReplicationOffsetCheckpoint, RecoveryPointOffsetCheckpoint} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fmt.Fprintf(w, "0\n%d\n", other+4)
		for i := range other / 2 {
			fmt.Fprintf(w, "some-other-topic-name %d %d\n", i, 1000+i)
		}
		for p := range 4 {
			fmt.Fprintf(w, "t %d %d\n", p, 2)
		}
		for i := other / 2; i < other; i++ {
			fmt.Fprintf(w, "some-other-topic-name %d %d\n", i, 1000+i)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	ageAll(t, dir)
	return dir
}

// ageAll dates dir and everything in it an hour back.
func ageAll(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Chtimes(path, old, old)
		}
		return err
	})
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointsParsedOnce: opening every partition of a log directory,
// by each entry point, parses its checkpoints once and keeps the lines of
// its own partitions; the other lines are read, checked, and dropped. Two
// 60 MiB checkpoints were parsed again for each partition opened: 2.2 GB
// of allocation to diagnose one partition of 290 bytes.
func TestCheckpointsParsedOnce(t *testing.T) {
	const other = 200_000 // about 7 MiB per file
	dir := writeBigCheckpoints(t, other)
	before := cpParses()
	alloc := allocDuring(func() {
		for p := range 4 {
			pd := filepath.Join(dir, fmt.Sprintf("t-%d", p))
			part, err := OpenPartition(pd)
			if err != nil {
				t.Fatal(err)
			}
			if part.Input.HighWatermark != 2 {
				t.Errorf("t-%d: high watermark %d, want 2 from the checkpoint", p, part.Input.HighWatermark)
			}
			if _, err := OpenPartitionTail(context.Background(), pd, DefaultScanOptions, TailOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := OpenLogDir(dir); err != nil {
			t.Fatal(err)
		}
	})
	if n := cpParses() - before; n != 1 {
		t.Errorf("the checkpoints were parsed %d times, want once", n)
	}
	size := int64(0)
	for _, name := range []string{ReplicationOffsetCheckpoint, RecoveryPointOffsetCheckpoint} {
		st, _ := os.Stat(filepath.Join(dir, name))
		size += st.Size()
	}
	t.Logf("opening 4 partitions 3 ways allocated %d MiB for %d MiB of checkpoints", alloc>>20, size>>20)
	bound := uint64(3 * size)
	if raceOn {
		bound *= 2
	}
	if alloc > bound {
		t.Errorf("allocated %d MiB, want at most %d MiB for %d MiB of checkpoints", alloc>>20, bound>>20, size>>20)
	}
	cps, err := ReadLogDirCheckpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cps.ReplicationOffset.Entries); n != 4 {
		t.Errorf("%d replication-offset entries kept, want the 4 of the directory's partitions", n)
	}
	if _, ok := cps.RecoveryPoint.Lookup("some-other-topic-name", 5); ok {
		t.Errorf("an entry of a partition the directory does not hold was kept")
	}
}

// TestCheckpointsCacheSeesChanges: a checkpoint rewritten, a partition
// directory added, or a file changed within racyWindow of the parse (whose
// time may not have moved) is parsed again.
func TestCheckpointsCacheSeesChanges(t *testing.T) {
	dir := writeBigCheckpoints(t, 10)
	hwm := func(p int32) (int64, bool) {
		t.Helper()
		cps, err := ReadLogDirCheckpoints(dir)
		if err != nil {
			t.Fatal(err)
		}
		return cps.ReplicationOffset.Lookup("t", p)
	}
	if v, _ := hwm(0); v != 2 {
		t.Fatalf("hwm %d, want 2", v)
	}
	n := cpParses()
	hwm(0)
	if cpParses() != n {
		t.Fatalf("an unchanged directory was parsed again")
	}
	tests := []struct {
		name   string
		change func()
		part   int32
		want   int64
	}{
		{"checkpoint_rewritten_an_hour_back", func() {
			os.WriteFile(filepath.Join(dir, ReplicationOffsetCheckpoint), []byte("0\n1\nt 0 3\n"), 0o644)
			ageAll(t, dir)
		}, 0, 3},
		{"partition_added", func() {
			os.Mkdir(filepath.Join(dir, "t-9"), 0o755)
			os.WriteFile(filepath.Join(dir, ReplicationOffsetCheckpoint), []byte("0\n2\nt 0 3\nt 9 7\n"), 0o644)
			ageAll(t, dir)
		}, 9, 7},
		{"same_size_just_now", func() {
			os.WriteFile(filepath.Join(dir, ReplicationOffsetCheckpoint), []byte("0\n2\nt 0 4\nt 9 7\n"), 0o644)
		}, 0, 4},
		{"same_size_just_now_again", func() {
			os.WriteFile(filepath.Join(dir, ReplicationOffsetCheckpoint), []byte("0\n2\nt 0 5\nt 9 7\n"), 0o644)
		}, 0, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			if v, ok := hwm(tc.part); !ok || v != tc.want {
				t.Errorf("t-%d: hwm %d (%v), want %d", tc.part, v, ok, tc.want)
			}
		})
	}
}

// TestCheckpointsSharedConcurrently: the cached checkpoints are shared by
// goroutines opening partitions of one directory at once (the server's
// pages and segment stores); run with -race.
func TestCheckpointsSharedConcurrently(t *testing.T) {
	dir := writeBigCheckpoints(t, 1000)
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			p, err := OpenPartition(filepath.Join(dir, fmt.Sprintf("t-%d", i%4)))
			if err == nil && p.Input.HighWatermark != 2 {
				err = fmt.Errorf("t-%d: high watermark %d, want 2", i%4, p.Input.HighWatermark)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
