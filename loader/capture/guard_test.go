package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testtool"
)

// TestCutAnywhere cuts every real capture at every byte of its last 1,500:
// a cut on a block (record) boundary reads as a shorter capture with no cut
// reported; a cut inside a block is reported once, at the byte where that
// block starts, which is the end of the previous cut's capture; whether
// the reader knows the file's size or not; nothing panics.
func TestCutAnywhere(t *testing.T) {
	testtool.NeedDir(t, realdata)
	files := realCaptures(t)
	if len(files) == 0 {
		t.Fatal("no captures in testdata/realdata")
	}
	for _, p := range files {
		full, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Read(bytes.NewReader(full), p)
		if err != nil || len(c.Problems) > 0 && c.Packets == 0 {
			continue // not readable whole: nothing to cut
		}
		if cutProblem(c) != nil {
			t.Fatalf("%s: whole file reported cut: %v", p, cutProblem(c))
		}
		ng := bytes.HasPrefix(full, []byte{0x0a, 0x0d, 0x0d, 0x0a})
		boundary := map[int64]bool{}
		reported := map[int64]int{} // block start -> a cut that reported it
		low := max(int64(len(full))-1500, 64)
		for n := int64(len(full)) - 1; n >= low; n-- {
			var got [2]*FormatError
			for i, size := range []int64{-1, n} {
				// The guard alone frames the file.
				_, err := io.Copy(io.Discard, newGuard(bytes.NewReader(full[:n]), p, ng, size))
				if err != nil {
					var fe *FormatError
					if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "mid-packet") {
						t.Fatalf("%s cut at %d (size %d): %v, want a cut or nothing", p, n, size, err)
					}
					got[i] = fe
				}
			}
			if (got[0] == nil) != (got[1] == nil) || got[0] != nil && got[0].Offset != got[1].Offset {
				t.Fatalf("%s cut at %d: size unknown %v, size known %v", p, n, got[0], got[1])
			}
			if e := got[0]; e == nil {
				boundary[n] = true
			} else if e.Offset >= n {
				t.Fatalf("%s cut at %d: block at %#x is past the cut", p, n, e.Offset)
			} else {
				reported[e.Offset] = int(n)
			}
		}
		// And through Read, where the packets before the cut are kept.
		for _, n := range []int64{low, (low + int64(len(full))) / 2, int64(len(full)) - 1} {
			c, err := Read(bytes.NewReader(full[:n]), p)
			if err != nil {
				t.Fatalf("%s cut at %d: %v", p, n, err)
			}
			if e := cutProblem(c); (e == nil) != boundary[n] {
				t.Errorf("%s cut at %d: Read reports %v, framing says boundary %v", p, n, e, boundary[n])
			}
		}
		if len(boundary) == 0 || len(reported) == 0 {
			t.Errorf("%s: %d boundaries, %d cut blocks in the last 1,500 bytes", p, len(boundary), len(reported))
		}
		for o, n := range reported {
			if o >= low && !boundary[o] {
				t.Errorf("%s cut at %d: reported block start %#x, where a cut is not clean", p, n, o)
			}
		}
	}
}

func cutProblem(c *Capture) *FormatError {
	for _, e := range c.Problems {
		if fe, ok := e.(*FormatError); ok && strings.Contains(fe.Msg, "mid-packet") {
			return fe
		}
	}
	return nil
}
