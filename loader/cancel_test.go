package loader

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// cancellingReader cancels its context once a read reaches at, and counts
// the bytes read after that.
type cancellingReader struct {
	r      io.ReaderAt
	at     int64
	cancel context.CancelFunc
	after  atomic.Int64
}

func (c *cancellingReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= c.at {
		if c.cancel != nil {
			c.cancel()
		}
		c.after.Add(int64(len(p)))
	}
	return c.r.ReadAt(p, off)
}

// TestScanCancel: a scan stops soon after its context ends (a
// hostile load ran on for minutes after their clients left), with an
// error that wraps the context's and names the file and position; without
// a context the same scan reads everything.
func TestScanCancel(t *testing.T) {
	var data []byte
	for i := 0; i < 20_000; i++ {
		data = append(data, dataBatch(t, int64(2*i), -1, false, 2)...)
	}
	half := int64(len(data) / 2)
	for _, o := range []ScanOptions{HeaderScanOptions, DefaultScanOptions} {
		ctx, cancel := context.WithCancel(context.Background())
		r := &cancellingReader{r: &bytesReaderAt{data}, at: half, cancel: cancel}
		f, err := NewSegmentContext(ctx, r, int64(len(data)), "00000000000000000000.log", o)
		if !errors.Is(err, context.Canceled) || f != nil {
			t.Fatalf("scan after cancel: %v, %v", f, err)
		}
		if !strings.Contains(err.Error(), "00000000000000000000.log: scan stopped at byte 0x") {
			t.Errorf("error %q does not name the file and position", err)
		}
		// The window reads ahead 256 KiB; past that the scan must stop
		// within cancelEvery batches.
		if n := r.after.Load(); n > 2*(256<<10) {
			t.Errorf("read %d bytes after the cancel", n)
		}
		f, err = NewSegmentContext(context.Background(), &cancellingReader{r: &bytesReaderAt{data}, at: half}, int64(len(data)), "00000000000000000000.log", o)
		if err != nil || len(f.Batches) != 20_000 {
			t.Fatalf("uncancelled scan: %v", err)
		}
	}

	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewSegmentBytesContext(done, data, "x.log", HeaderScanOptions); !errors.Is(err, context.Canceled) {
		t.Errorf("NewSegmentBytesContext: %v", err)
	}
	if bs, _, err := ParseRecordSetContext(done, data, "fetch"); !errors.Is(err, context.Canceled) || len(bs) > cancelEvery {
		t.Errorf("ParseRecordSetContext: %d batches, %v", len(bs), err)
	}
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	writeFile(t, path, data)
	if _, err := OpenSegmentContext(done, path, DefaultScanOptions); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenSegmentContext: %v", err)
	}
	if f, err := OpenSegmentContext(context.Background(), path, DefaultScanOptions); err != nil || len(f.Batches) != 20_000 {
		t.Errorf("OpenSegmentContext: %v", err)
	} else {
		f.Close()
	}
}
