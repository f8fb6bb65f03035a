package capture

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestHeldTinyResponsesBoundMemory: a server stream of the smallest
// response frames (a size of 4 and a correlation id) whose requests never
// come. Held by bytes alone, 12 MB of them took 114 MB of heap (each
// frame costs some 150 bytes to keep), and each frame let go was a
// problem of its own. Held frames are counted too, and a stream's
// problems are listed up to maxStreamProblems, then counted.
func TestHeldTinyResponsesBoundMemory(t *testing.T) {
	cv := newConv(t)
	const stream = 4 << 20
	b := make([]byte, 0, stream)
	for corr := int32(1); len(b) < stream; corr++ {
		b = binary.BigEndian.AppendUint32(b, 4)
		b = binary.BigEndian.AppendUint32(b, uint32(corr))
	}
	cv.send(false, b, 65000)
	cv.close()
	pcap := cv.pcap()
	b, cv = nil, nil
	c, peak := readSampled(t, pcap)
	t.Logf("%d bytes of 8-byte response frames: peak heap %d MB, %d problems", stream, peak>>20, len(c.Problems))
	// A few MB: tcpassembly's pages and at most maxHeldFrames frames,
	// whatever the stream's length (by bytes alone: 39 MB here).
	if peak > 8<<20 {
		t.Errorf("peak heap %d MB holding %d MB of 8-byte response frames", peak>>20, stream>>20)
	}
	last := ""
	if len(c.Problems) > 0 {
		last = c.Problems[len(c.Problems)-1].Error()
	}
	if len(c.Problems) != maxStreamProblems+1 || !strings.Contains(last, "more problems decoding this stream's frames not listed, the first of them here") {
		t.Errorf("%d problems, the last %q; want %d listed and one counting the rest", len(c.Problems), last, maxStreamProblems)
	}
}
