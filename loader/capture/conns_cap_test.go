package capture

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
	"time"
)

// synOnly is the SYN of a connection from client port port of host
// 10.0.<net>.1, alone.
func synOnly(t testing.TB, net byte, port uint16) []byte {
	c := newConv(t)
	c.cli[2], c.cport = net, port
	c.pkts = nil
	c.segment(true, nil, true, false, false)
	return c.pkts[0]
}

// packetsPcap writes pkts, a millisecond apart, as one pcap.
func packetsPcap(t testing.TB, pkts [][]byte) []byte {
	cv := newConv(t)
	cv.pkts, cv.times = pkts, make([]time.Time, len(pkts))
	for i := range cv.times {
		cv.times[i] = time.Unix(1700000000, 0).Add(time.Duration(i) * time.Millisecond)
	}
	return cv.pcap()
}

// TestConnectionsBounded: a capture's read follows at most maxConns
// connections; the packets of later new ones are counted, with one problem
// at the first of them, while both halves of a connection followed, its
// SYN-ACK after the bound was reached included, are still decoded.
func TestConnectionsBounded(t *testing.T) {
	defer func(n int) { maxConns = n }(maxConns)
	maxConns = 100

	fetch := newConv(t) // SYN, SYN-ACK, ACK, a Fetch exchange, FINs
	req, resp := fetchExchange(13, 0, batch(0, 10, 40))
	fetch.send(true, requestFrame(req, 1), 65000)
	fetch.send(false, responseFrame(resp, 1), 65000)
	fetch.close()

	pkts := [][]byte{fetch.pkts[0]} // its SYN: the first connection
	for i := range 99 {
		pkts = append(pkts, synOnly(t, 1, uint16(2000+i)))
	}
	pkts = append(pkts, fetch.pkts[1:]...) // its SYN-ACK on: after the bound
	skippedAt := len(pkts)
	for i := range 50 {
		pkts = append(pkts, synOnly(t, 2, uint16(3000+i)))
	}
	data := packetsPcap(t, pkts)
	c, peak := readSampled(t, data)
	if len(c.Fetches) != 1 || len(c.Fetches[0].Batches) != 1 {
		t.Fatalf("%d fetches: the connection followed from its SYN, want its one Fetch decoded", len(c.Fetches))
	}
	if len(c.Problems) != 1 {
		t.Fatalf("problems %v, want one about the connections past the bound", c.Problems)
	}
	// The byte where the first skipped packet's record starts: the
	// file header, then each record's 16-byte header and packet.
	at := int64(24)
	for _, p := range pkts[:skippedAt] {
		at += 16 + int64(len(p))
	}
	want := fmt.Sprintf("capture: limits.pcap: 10.0.2.1:3000->10.0.0.2:9092: byte %#x: pcap record (packet %d): a TCP connection past the 100 a capture's read follows", at, skippedAt+1)
	if got := c.Problems[0].Error(); !strings.HasPrefix(got, want) || !strings.Contains(got, "(50 packets skipped)") {
		t.Errorf("problem\n %s\nwant it to start\n %s\nand count 50 packets skipped", got, want)
	}
	t.Logf("%d-byte capture, peak heap %d", len(data), peak)
}

// TestConnectionsBoundMemory: a capture of nothing but SYNs, each from
// its own port, takes no more memory at 80,000 connections than at
// 40,000: past maxConns nothing more is kept. Followed, each connection
// cost about 1.4 KB until the end, 18 times its 80 bytes.
func TestConnectionsBoundMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds captures of 40,000 and 80,000 connections")
	}
	syns := func(n int) []byte {
		pkts := make([][]byte, n)
		for i := range pkts {
			pkts[i] = synOnly(t, byte(i/50000), uint16(1024+i%50000))
		}
		return packetsPcap(t, pkts)
	}
	measure := func(n int) (int, uint64) {
		data := syns(n)
		c, peak := readSampled(t, data)
		if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Error(), "("+txnindex.Count(int64(n-maxConns))+" packets skipped)") {
			t.Fatalf("%d connections: problems %v, want the %d past the bound counted", n, c.Problems, n-maxConns)
		}
		runtime.KeepAlive(c)
		return len(data), peak
	}
	smallSize, small := measure(2 * maxConns)
	largeSize, large := measure(4 * maxConns)
	t.Logf("%d bytes: peak heap %d; %d bytes: peak heap %d", smallSize, small, largeSize, large)
	if large > small+small/4+1<<20 {
		t.Errorf("peak heap %d for %d connections, %d for %d: it grows past the bound", large, 4*maxConns, small, 2*maxConns)
	}
}
