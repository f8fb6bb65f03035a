package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/heappeak"
)

// readSampled writes pcap to a file and reads it as txnscope does, with
// the live heap sampled each mebibyte (heappeak).
func readSampled(t *testing.T, pcap []byte) (*Capture, uint64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "limits.pcap")
	if err := os.WriteFile(path, pcap, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := heappeak.New(f, 0)
	c, err := Read(h, "limits.pcap")
	if err != nil {
		t.Fatal(err)
	}
	return c, h.Peak()
}

// TestStreamLimits: what a connection may hold while it is decoded, and
// what happens past it, each reported with the file, the stream and the
// byte.
func TestStreamLimits(t *testing.T) {
	oneFetch := func(cv *conv, corr int32) {
		req, resp := fetchExchange(13, 0, batch(0, 10, 40))
		cv.send(true, requestFrame(req, corr), 65000)
		cv.send(false, responseFrame(resp, corr), 65000)
	}
	t.Run("a frame declared larger than maxFrame is damage at its size field", func(t *testing.T) {
		cv := newConv(t)
		oneFetch(cv, 1)
		at := cv.sent[1]
		huge := binary.BigEndian.AppendUint32(nil, maxFrame+1)
		cv.send(false, append(huge, make([]byte, 3<<20)...), 65000)
		cv.close()
		c, peak := readSampled(t, cv.pcap())
		var fe *FormatError
		if len(c.Problems) == 0 || !errors.As(c.Problems[0], &fe) || fe.File != "limits.pcap" || fe.Where != cv.server()+"->"+cv.client() ||
			fe.Offset != at || fe.Msg != fmt.Sprintf("frame size %d, want 4..%d", maxFrame+1, maxFrame) {
			t.Fatalf("problems %v; want the frame size at byte %#x first", c.Problems, at)
		}
		if len(c.Fetches) != 1 || peak > 16<<20 {
			t.Errorf("%d fetches, peak heap %d", len(c.Fetches), peak)
		}
	})
	t.Run("a connection seen one way only is dropped past maxUnoriented", func(t *testing.T) {
		cv := newConv(t)
		n := len(cv.pkts)
		junk := bytes.Repeat([]byte{0xff}, maxUnoriented+24<<20)
		cv.send(false, junk, 65000)
		var drop []int
		for i := range cv.pkts {
			if i < n || cv.fromClient[i] {
				drop = append(drop, i) // the handshake and every client packet
			}
		}
		pcap := cv.pcap(drop...)
		cv = nil
		c, peak := readSampled(t, pcap)
		if err := c.NoFetch(); err == nil || !strings.Contains(err.Error(), "hold no TCP connection with data both ways") {
			t.Errorf("NoFetch: %v", err)
		}
		// The buffer's capacity doubles as it grows.
		if peak > 2*maxUnoriented+8<<20 {
			t.Errorf("peak heap %d for %d bytes one way", peak, maxUnoriented+24<<20)
		}
	})
	t.Run("responses waiting for requests held back by a lost segment make tcpassembly go on", func(t *testing.T) {
		cv := newConv(t)
		var lost []int
		const n = 40
		for i := range n {
			var recs []byte
			for k := range 100 {
				recs = append(recs, batch(int64(i*1000+k*10), 10, 1000)...)
			}
			req, resp := fetchExchange(13, int64(i*1000), recs)
			seg := cv.send(true, requestFrame(req, int32(i+1)), 65000)
			if i == 1 {
				lost = seg
			}
			cv.send(false, responseFrame(resp, int32(i+1)), 65000)
		}
		cv.close()
		pcap := cv.pcap(lost...)
		cv = nil
		c, peak := readSampled(t, pcap)
		// The request of corr 2 is lost; its response cannot be paired.
		var corrs []int32
		for _, f := range c.Fetches {
			corrs = append(corrs, f.CorrelationID)
		}
		// In capture order, corr 2's response (its request lost) left out.
		want := []int32{1}
		for i := int32(3); i <= n; i++ {
			want = append(want, i)
		}
		if !slices.Equal(corrs, want) {
			t.Fatalf("fetches of corr %v, problems %v", corrs, c.Problems)
		}
		if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Error(), "10.0.0.1:40000->10.0.0.2:9092: byte 0x63: TCP segments not captured: stream bytes 0x63..0xc5 (99 bytes) missing") {
			t.Errorf("problems %v", c.Problems)
		}
		if peak > 2*flushHeld+8<<20 {
			t.Errorf("peak heap %d for a %d-byte capture", peak, len(pcap))
		}
	})
	t.Run("responses whose requests never come are held to maxHeld, then reported", func(t *testing.T) {
		c := &Capture{Name: "held", ids: map[[16]byte]string{}, apis: map[string]int{}}
		conn := &Conn{Client: "c:1", Server: "s:2", c2s: &direction{src: "c:1", dst: "s:2", syn: true}, s2c: &direction{src: "s:2", dst: "c:1", syn: true}}
		d := newConnDecoder(c, conn)
		_, resp := fetchExchange(13, 0, make([]byte, 1<<20))
		most := 0
		for i := range 80 {
			conn.s2c.add(responseFrame(resp, int32(i+1)), 0, time.Unix(1700000000, 0))
			d.advance(false)
			most = max(most, d.heldBytes)
		}
		d.finish()
		if most > maxHeld+2<<20 {
			t.Errorf("%d bytes held", most)
		}
		var fe *FormatError
		if len(c.Problems) == 0 || !errors.As(c.Problems[0], &fe) || fe.Offset != 0 || fe.Where != "s:2->c:1" ||
			!strings.HasPrefix(fe.Msg, "response corr 1 held with ") || !strings.HasSuffix(fe.Msg, " bytes of responses after it for a request that did not come: not decoded") {
			t.Errorf("problems %v", c.Problems)
		}
	})
	noHandshake := func(t *testing.T, exchanges int) (*Capture, uint64, int) {
		cv := newConv(t)
		n := len(cv.pkts)
		for i := range exchanges {
			var recs []byte
			for k := range 100 {
				recs = append(recs, batch(int64(i*1000+k*10), 10, 1000)...)
			}
			req, resp := fetchExchange(13, int64(i*1000), recs)
			cv.send(true, requestFrame(req, int32(i+1)), 65000)
			cv.send(false, responseFrame(resp, int32(i+1)), 65000)
		}
		var drop []int
		for i := range n {
			drop = append(drop, i)
		}
		pcap := cv.pcap(drop...)
		cv = nil
		c, peak := readSampled(t, pcap)
		// The last request has no successor and its response none: both
		// are taken at the capture's end, as a whole-stream read takes them.
		if len(c.Fetches) != exchanges || len(c.Problems) > 0 {
			t.Fatalf("%d fetches, problems %v", len(c.Fetches), c.Problems)
		}
		return c, peak, len(pcap)
	}
	t.Run("a connection captured without its handshake is decoded as it goes", func(t *testing.T) {
		// tcpassembly holds a connection's bytes until its first segment
		// is known; without a SYN that is when its pages for the
		// connection run out (maxWaitingPages): after that the
		// connection streams as any other.
		_, small, n1 := noHandshake(t, 12)
		_, large, n4 := noHandshake(t, 48)
		t.Logf("peak heap %d for a %d-byte capture, %d for a %d-byte one", small, n1, large, n4)
		if large > 2*small+4<<20 {
			t.Errorf("peak heap %d for a %d-byte capture, %d for a %d-byte one: it grows with the capture", large, n4, small, n1)
		}
	})
}
