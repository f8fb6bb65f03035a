package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeTestPartition writes a log dir holding topic t-0 with one segment
// of n two-record batches, and returns the log dir and partition dir.
func writeTestPartition(t *testing.T, n int) (string, string) {
	t.Helper()
	logDir := t.TempDir()
	dir := filepath.Join(logDir, "t-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var data []byte
	for i := 0; i < n; i++ {
		data = append(data, dataBatch(t, int64(2*i), -1, false, 2)...)
	}
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return logDir, dir
}

// secretFile stands for /etc/shadow: a file outside the loaded directory
// whose content must never reach an error or the page.
func secretFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(p, []byte("root:*:19000:0:99999:7:::\nsecret-hash-here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func partitionText(p *Partition) string {
	var b strings.Builder
	for _, d := range p.Damage {
		fmt.Fprintln(&b, d)
	}
	for _, i := range p.Ignored {
		fmt.Fprintln(&b, i.Name, i.Reason)
	}
	return b.String()
}

// TestSymlinkedStateFilesNotFollowed: a checkpoint, a
// leader-epoch-checkpoint and partition.metadata symlinked to a file
// outside the directory are reported as "symlink, not followed", and no
// byte of the target appears in any problem (before: `found "root:*:…"`).
func TestSymlinkedStateFilesNotFollowed(t *testing.T) {
	logDir, dir := writeTestPartition(t, 3)
	secret := secretFile(t)
	for _, p := range []string{
		filepath.Join(logDir, ReplicationOffsetCheckpoint),
		filepath.Join(dir, LeaderEpochCheckpointFile),
		filepath.Join(dir, PartitionMetadataFile),
		filepath.Join(dir, "00000000000000000006.snapshot"),
	} {
		if err := os.Symlink(secret, p); err != nil {
			t.Fatal(err)
		}
	}
	p, err := OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	text := partitionText(p)
	if strings.Contains(text, "root") || strings.Contains(text, "secret") {
		t.Fatalf("the symlink target's content leaked:\n%s", text)
	}
	for _, name := range []string{ReplicationOffsetCheckpoint, LeaderEpochCheckpointFile, PartitionMetadataFile, "00000000000000000006.snapshot"} {
		if !strings.Contains(text, name) || !strings.Contains(text, "symlink, not followed") {
			t.Errorf("%s not reported as a symlink not followed:\n%s", name, text)
		}
	}
	if len(p.Input.Batches) != 3 {
		t.Errorf("the segment's 3 batches did not load: %d", len(p.Input.Batches))
	}
}

// TestSymlinkedSegmentNotFollowed: a segment linked from elsewhere is not
// read (it escaped --max-source-bytes, which counts the link), and says so.
func TestSymlinkedSegmentNotFollowed(t *testing.T) {
	_, dir := writeTestPartition(t, 3)
	_, other := writeTestPartition(t, 50)
	if err := os.Symlink(filepath.Join(other, "00000000000000000000.log"), filepath.Join(dir, "00000000000000000006.log")); err != nil {
		t.Fatal(err)
	}
	p, err := OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Input.Batches) != 3 {
		t.Errorf("loaded %d batches, want the 3 of the regular segment", len(p.Input.Batches))
	}
	if text := partitionText(p); !strings.Contains(text, "00000000000000000006.log symlink, not followed") {
		t.Errorf("linked segment not reported:\n%s", text)
	}
	// A segment swapped for a link after the listing is refused on open.
	if _, _, err := openInside(filepath.Join(dir, "00000000000000000006.log")); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "symlink, not followed") {
		t.Errorf("openInside of a link: %v", err)
	}
}

// TestFIFOSegmentNotOpened: a named pipe named like a
// segment or a checkpoint is listed as not opened instead of blocking the
// load for ever.
func TestFIFOSegmentNotOpened(t *testing.T) {
	logDir, dir := writeTestPartition(t, 3)
	for _, p := range []string{
		filepath.Join(dir, "00000000000000000006.log"),
		filepath.Join(dir, LeaderEpochCheckpointFile),
		filepath.Join(logDir, RecoveryPointOffsetCheckpoint),
	} {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	type res struct {
		p   *Partition
		err error
	}
	done := make(chan res, 1)
	go func() {
		p, err := OpenPartition(dir)
		done <- res{p, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		text := partitionText(r.p)
		if !strings.Contains(text, "00000000000000000006.log named pipe (FIFO), not opened") {
			t.Errorf("FIFO segment not reported:\n%s", text)
		}
		for _, n := range []string{LeaderEpochCheckpointFile, RecoveryPointOffsetCheckpoint} {
			if !strings.Contains(text, n+": file at byte 0x0: named pipe") {
				t.Errorf("FIFO %s not reported:\n%s", n, text)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OpenPartition hung on a FIFO")
	}
	// Given as the path itself, a pipe is refused, not opened for ever.
	errc := make(chan error, 1)
	go func() {
		f, _, err := OpenRegular(filepath.Join(dir, "00000000000000000006.log"))
		if f != nil {
			f.Close()
		}
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenRegular of a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OpenRegular hung on a FIFO")
	}
}

// TestOpenPartitionCancel: a cancelled context stops a partition load
// (of a log dir of several segments) with the context's error, soon.
func TestOpenPartitionCancel(t *testing.T) {
	logDir, dir := writeTestPartition(t, 1)
	var data []byte
	for i := 0; i < 50_000; i++ {
		data = append(data, dataBatch(t, int64(2*i), -1, false, 2)...)
	}
	for s := 1; s <= 8; s++ {
		name := fmt.Sprintf("%020d.log", s*1_000_000)
		// Offsets restart per segment; only the load's end matters here.
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := OpenPartitionContext(ctx, dir, DefaultScanOptions); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled partition load: %v", err)
	}
	if _, err := OpenLogDirContext(ctx, logDir, DefaultScanOptions); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled log dir load: %v", err)
	}
	cancelled := time.Since(start)
	start = time.Now()
	if _, err := OpenPartition(dir); err != nil {
		t.Fatal(err)
	}
	full := time.Since(start)
	t.Logf("cancelled: %v, full load: %v", cancelled, full)
	if cancelled > full/2 && cancelled > 50*time.Millisecond {
		t.Errorf("cancelled loads took %v, the full load %v", cancelled, full)
	}
}

// TestParseErrorExcerpt: a line that does not parse is quoted short and
// escaped, never whole.
func TestParseErrorExcerpt(t *testing.T) {
	line := strings.Repeat("x", 100) + "\x1b[31mSECRET"
	_, err := ReadOffsetCheckpoint(strings.NewReader(line+"\n"), "replication-offset-checkpoint")
	if err == nil || strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "\x1b") {
		t.Fatalf("error quotes too much: %v", err)
	}
	if !strings.Contains(err.Error(), `"xxxxxxxxxxxxxxxxxxxxxxxx"... (111 bytes)`) {
		t.Errorf("error %q lacks the short excerpt", err)
	}
}
