package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recovered reports a problem that only a recovered panic produces: the
// guard's checks or the decoders missed a shape.
func recovered(c *Capture) error {
	for _, p := range c.Problems {
		for _, m := range []string{"the packet reader failed", "TCP reassembly failed", "decoding this connection failed"} {
			if strings.Contains(p.Error(), m) {
				return p
			}
		}
	}
	return nil
}

// FuzzRead: any bytes decode without panicking, in pcapgo or in our own
// decoders. Seeds: the real captures and the hostile shapes of issue 17
// (testdata/hostile: if_tsresol, giant and zero lengths, lossy Fetch
// conversations).
func FuzzRead(f *testing.F) {
	seeds := realCaptures(f)
	hostile, _ := filepath.Glob(filepath.Join(hostileDir, "*"))
	for _, p := range append(seeds, hostile...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// With the size known (files, uploads) and unknown (a pipe).
		for _, r := range []io.Reader{bytes.NewReader(b), struct{ io.Reader }{bytes.NewReader(b)}} {
			c, err := Read(r, "fuzz")
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("not positional: %v", err)
				}
				continue
			}
			if e := recovered(c); e != nil {
				t.Fatal(e)
			}
			_ = c.NoFetch()
		}
	})
}
