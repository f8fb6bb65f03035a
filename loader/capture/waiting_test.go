package capture

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// finelySampled is heapSampler sampling every 32 KiB read: the pages a
// capture of a few hundred KB holds are let go when its read ends.
type finelySampled struct {
	h     *heapSampler
	since int
}

func (f *finelySampled) Read(p []byte) (int, error) {
	n, err := f.h.r.Read(p[:min(len(p), 4096)])
	if f.since += n; f.since >= 32<<10 {
		f.since = 0
		f.h.sample()
	}
	return n, err
}

var _ io.Reader = (*finelySampled)(nil)

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
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h := &heapSampler{r: bytes.NewReader(data), base: m.HeapAlloc}
	c, err := Read(&finelySampled{h: h}, "waiting.pcap")
	if err != nil {
		t.Fatal(err)
	}
	peak := h.peak
	t.Logf("%d-byte capture: peak heap %d KB", len(data), peak>>10)
	if peak > 4<<20 {
		t.Errorf("peak heap %d KB for %d connections of 64 one-byte segments after a lost one (%d bytes)", peak>>10, 100, len(data))
	}
	runtime.KeepAlive(c)
}
