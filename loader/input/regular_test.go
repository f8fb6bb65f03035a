package input

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/txnscope/txnscope/loader"
)

// TestOpenFIFO: a named pipe given as the input (named
// like a segment) is refused at once; before, the open blocked until a
// writer came, and no signal ended it.
func TestOpenFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := Open(p)
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, loader.ErrNotRegular) {
			t.Fatalf("Open of a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open hung on a FIFO")
	}
}

// TestOpenContextCancelled: a load whose context has ended stops with the
// context's error, for a partition directory and an in-memory segment.
func TestOpenContextCancelled(t *testing.T) {
	seg, err := os.ReadFile(lsxSegment)
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "t-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := OpenContext(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenContext of a partition dir after cancel: %v", err)
	}
	if _, err := OpenContext(ctx, filepath.Join(dir, "00000000000000000000.log")); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenContext of a segment after cancel: %v", err)
	}
	if _, err := OpenBytesContext(ctx, "up.log", seg); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenBytesContext after cancel: %v", err)
	}
	if _, err := Open(dir); err != nil {
		t.Errorf("Open without a context: %v", err)
	}
}
