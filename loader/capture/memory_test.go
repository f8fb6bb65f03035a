package capture

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/txnscope/txnscope/internal/heappeak"
)

// fetchConv is a consumer's connection of n Fetch exchanges, each response
// holding 100 batches of 10 records of 1,000 bytes (about 1 MB), sent in
// segments of 65,000 bytes as over loopback (under the 65,535-byte snap
// length of the test pcap). It returns the pcap and the batches.
func fetchConv(t testing.TB, n int) ([]byte, int) {
	cv := newConv(t)
	base := int64(0)
	for i := range n {
		var recs []byte
		for range 100 {
			recs = append(recs, batch(base, 10, 1000)...)
			base += 10
		}
		req, resp := fetchExchange(13, base-1000, recs)
		cv.send(true, requestFrame(req, int32(i+1)), 65000)
		cv.send(false, responseFrame(resp, int32(i+1)), 65000)
	}
	cv.close()
	return cv.pcap(), n * 100
}

// TestMemoryDoesNotGrowWithCapture: reading a capture four times the size
// of another (4 and 16 MB of Fetch responses) takes about the same heap,
// at its peak while reading and kept once read: the bytes of a response
// are dropped once it is decoded, only its batch headers stay. When the
// bytes were held, the peak followed the capture's size (3.2 times it).
func TestMemoryDoesNotGrowWithCapture(t *testing.T) {
	type result struct{ size, peak, kept uint64 }
	measure := func(n int) result {
		b, batches := fetchConv(t, n)
		// From a file, as txnscope reads one: the capture's bytes in the
		// heap would count in the GC's pacing.
		path := filepath.Join(t.TempDir(), "mem.pcap")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		size := uint64(len(b))
		b = nil
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		h := heappeak.New(f, 0)
		c, err := Read(h, "mem.pcap")
		if err != nil {
			t.Fatal(err)
		}
		h.Sample()
		got := 0
		for _, f := range c.Fetches {
			got += len(f.Batches)
		}
		if got != batches || len(c.Problems) > 0 {
			t.Fatalf("%d exchanges: %d batches decoded, want %d; problems %v", n, got, batches, c.Problems)
		}
		kept := h.Kept()
		runtime.KeepAlive(c)
		return result{size, h.Peak(), kept}
	}
	small, large := measure(4), measure(16)
	t.Logf("capture %d bytes: peak heap %d, kept %d; capture %d bytes: peak heap %d, kept %d",
		small.size, small.peak, small.kept, large.size, large.peak, large.kept)
	// The peak: a few MB of tcpassembly's pages and the response in
	// progress, whatever the capture's size. Loose bounds: a run-time
	// heap is sampled, and GC timing moves it.
	if large.peak > 2*small.peak+4<<20 || large.peak > large.size/2 {
		t.Errorf("peak heap %d for a %d-byte capture, %d for a %d-byte one: it grows with the capture", large.peak, large.size, small.peak, small.size)
	}
	// What stays: 1,600 batch headers and the fetches, not the records.
	if large.kept > large.size/16 {
		t.Errorf("%d bytes kept after reading a %d-byte capture", large.kept, large.size)
	}
}

// TestGiantSnapLengthAllocatesLittle: pcapgo sizes its one packet buffer
// by the interface's snap length; an interface claiming 4 GiB, with a
// 54-byte packet, must not cost 4 GiB, nor one claiming the largest block
// 16 MiB. Any snap length passes.
func TestGiantSnapLengthAllocatesLittle(t *testing.T) {
	pkt := newConv(t).pkts[0]
	for _, snaplen := range []uint32{0, 65535, maxSnapLen, maxSnapLen + 1, maxBlock, 0xfffffff0} {
		ng := slices.Concat(ngSHBlock(le), ngIDBlock(le, snaplen), ngEPBlock(le, 0, 0, pkt))
		pcap := slices.Concat(pcapHeader(snaplen), pcapRecord(uint32(len(pkt)), uint32(len(pkt)), pkt))
		for _, data := range [][]byte{ng, pcap} {
			if snaplen == 0 && len(data) == len(pcap) {
				continue // pcapgo refuses every packet of a pcap whose snap length is 0
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			c, err := Read(bytes.NewReader(data), "snaplen")
			runtime.ReadMemStats(&m1)
			if err != nil || c.Packets != 1 || len(c.Problems) > 0 {
				t.Fatalf("snap length %#x: %v, %+v", snaplen, err, c)
			}
			if d := m1.TotalAlloc - m0.TotalAlloc; d > 4<<20 {
				t.Errorf("snap length %#x: %d bytes allocated for a %d-byte file", snaplen, d, len(data))
			}
		}
	}
}
