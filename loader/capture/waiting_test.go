package capture

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/txnscope/txnscope/internal/heappeak"
)

// smallReads reads r 4 KiB at a time, for a heappeak.Reader sampling
// every 32 KiB: the pages a capture of a few hundred KB holds are let go
// when its read ends.
type smallReads struct{ r io.Reader }

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 4096)]) }

// TestWaitingPagesBoundedOverConnections: connections whose first data
// segment was lost, each followed by one-byte segments. tcpassembly holds
// each of those in a page of 1,900 bytes while it waits, up to
// maxWaitingPages a connection, so 100 connections of 64 such segments
// (490 KB) took 14 MB; over all connections it now holds at most
// maxWaitingPagesTotal, letting go of a connection's oldest gap past it.
func TestWaitingPagesBoundedOverConnections(t *testing.T) {
	defer func(n int) { maxWaitingPagesTotal = n }(maxWaitingPagesTotal)
	maxWaitingPagesTotal = 512 // 1 MB of pages

	var pkts [][]byte
	for i := range 100 {
		c := newConv(t) // SYN, SYN-ACK, ACK
		c.cport = uint16(2000 + i)
		c.pkts = nil
		c.segment(true, nil, true, false, false)
		c.segment(true, []byte{1}, false, true, false) // lost
		for range 64 {
			c.segment(true, []byte{1}, false, true, false)
		}
		pkts = append(pkts, c.pkts[0])
		pkts = append(pkts, c.pkts[2:]...)
	}
	data := packetsPcap(t, pkts)
	h := heappeak.New(smallReads{bytes.NewReader(data)}, 32<<10)
	c, err := Read(h, "waiting.pcap")
	if err != nil {
		t.Fatal(err)
	}
	peak := h.Peak()
	t.Logf("%d-byte capture: peak heap %d KB", len(data), peak>>10)
	if peak > 4<<20 {
		t.Errorf("peak heap %d KB for %d connections of 64 one-byte segments after a lost one (%d bytes)", peak>>10, 100, len(data))
	}
	runtime.KeepAlive(c)
}
