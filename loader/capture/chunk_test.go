package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// chunked is a direction's bytes as tcpassembly would deliver them with n
// bytes from gap on not captured, cut into chunks of at most size bytes:
// the add calls, in order.
type chunkAdd struct {
	b    []byte
	skip int
}

func chunked(b []byte, gap, n uint32, size int) []chunkAdd {
	g, e := min(int(gap), len(b)), min(int(gap)+int(n), len(b))
	var out []chunkAdd
	cut := func(b []byte, skip int) {
		for first := true; first || len(b) > 0; first = false {
			k := min(size, len(b))
			out = append(out, chunkAdd{b[:k], skip})
			b, skip = b[k:], 0
		}
	}
	cut(b[:g], 0)
	if e > g {
		cut(b[e:], e-g)
	} else {
		cut(b[g:], 0)
	}
	return out
}

// decodeChunked decodes a connection fed chunk by chunk, as the capture
// is read: requests first then responses, interleaved chunk for chunk,
// or (respFirst) every response chunk before the first request chunk, as
// when tcpassembly holds the requests back for a missing segment.
func decodeChunked(c2s, s2c []byte, cgap, clen, sgap, slen uint32, syn bool, size int, respFirst bool) *Capture {
	c := &Capture{Name: "chunk", ids: map[[16]byte]string{}, apis: map[string]int{}}
	conn := &Conn{Client: "c:1", Server: "s:2", c2s: &direction{src: "x", dst: "y", syn: syn}, s2c: &direction{src: "y", dst: "x", syn: syn}}
	d := newConnDecoder(c, conn)
	t := time.Unix(1700000000, 0)
	rq, rs := chunked(c2s, cgap, clen, size), chunked(s2c, sgap, slen, size)
	feed := func(dir *direction, a chunkAdd) {
		dir.add(a.b, a.skip, t)
		d.advance(false)
	}
	if respFirst {
		for _, a := range rs {
			feed(conn.s2c, a)
		}
		rs = nil
	}
	for i := 0; i < max(len(rq), len(rs)); i++ {
		if i < len(rq) {
			feed(conn.c2s, rq[i])
		}
		if i < len(rs) {
			feed(conn.s2c, rs[i])
		}
	}
	d.finish()
	return c
}

func decodeWhole(c2s, s2c []byte, cgap, clen, sgap, slen uint32, syn bool) *Capture {
	c := &Capture{Name: "chunk", ids: map[[16]byte]string{}, apis: map[string]int{}}
	conn := &Conn{Client: "c:1", Server: "s:2", c2s: lossyDirection(c2s, cgap, clen, syn), s2c: lossyDirection(s2c, sgap, slen, syn)}
	decodeConn(c, conn)
	return c
}

// summary is what a decoded connection came to: each fetch's correlation
// id, batches and completeness, and every problem.
func summary(c *Capture) []string {
	var out []string
	for _, f := range c.Fetches {
		var bases []int64
		for _, b := range f.Batches {
			bases = append(bases, b.BaseOffset)
		}
		out = append(out, fmt.Sprintf("fetch corr %d offset %d incomplete %v bytes %d batches %v", f.CorrelationID, f.FetchOffset, f.Incomplete, f.RecordBytes, bases))
	}
	for _, p := range c.Problems {
		out = append(out, p.Error())
	}
	return append(out, fmt.Sprintf("exchanges %d unanswered %d", c.Exchanges, c.unanswered))
}

// lossyStreams returns the two byte streams of a lossy conversation.
func lossyStreams(lc *lossyConv) (c2s, s2c []byte) {
	for i, p := range lc.pkts {
		payload := gopacket.NewPacket(p, layers.LayerTypeEthernet, gopacket.Default).TransportLayer().LayerPayload()
		if lc.fromClient[i] {
			c2s = append(c2s, payload...)
		} else {
			s2c = append(s2c, payload...)
		}
	}
	return c2s, s2c
}

// TestChunkingChangesNothing: a connection decoded as its bytes arrive, in
// chunks of any size, comes to the same fetches and the same problems, in
// the same order, as one decoded from all its bytes at once; so does one
// whose responses all arrive before its requests (tcpassembly holding the
// requests back for a missing segment), resynchronising or not: a
// response framer that lost a frame's start waits, at a candidate whose
// request may still come, for the requests (framer.undecided).
func TestChunkingChangesNothing(t *testing.T) {
	for _, version := range []int16{11, 13} {
		lc := newLossyConv(t, version)
		c2s, s2c := lossyStreams(lc)
		mid := uint32(lc.streamOff[lc.respSeg[0][len(lc.respSeg[0])/2]])
		// Each batch's record count (10), read from its second byte,
		// with the first record's length and attributes after it,
		// reads as the start of a response frame of 2,652 bytes with
		// correlation id 1. Batches are 531 bytes apart: one byte added
		// to response 1's records between two batches five apart puts
		// the second lookalike where the first one's size ends.
		lookalike := int(lc.respOff[0]) + bytes.Index(lc.resp[0], lc.recs[0]) + lc.ends[0][8]
		cases := []struct {
			name                   string
			cgap, clen, sgap, slen uint32
			syn, resync            bool
			insertAt               int   // one byte added to s2c there, when > 0
			corr2                  int32 // the second request's correlation id, when not 0
		}{
			{"whole", 0, 0, 0, 0, true, false, 0, 0},
			{"gap mid-response", 0, 0, mid, 1000, true, false, 0, 0},
			{"response start lost", 0, 0, uint32(lc.respOff[1]), 1000, true, true, 0, 0},
			{"no handshake, both lossy", 30, 7, uint32(lc.respOff[1]) + 3, 50, false, true, 0, 0},
			{"request lost", uint32(lc.reqOff[1]), 20, 0, 0, true, false, 0, 0},
			{"end lost", 0, 0, uint32(len(s2c)) - 100, 1000, true, false, 0, 0},
			// A response framer resynchronising before its requests
			// arrive, with the first request still tentative, took
			// two lookalikes with the same correlation id for two
			// successive responses, and lost the real one after them.
			{"same-corr lookalikes while the request is tentative", 30, 7, uint32(lc.respOff[1]) + 3, 50, false, true, lookalike, 0},
			// A damaged correlation id, far above those after it, in
			// the second request: the third response, held until its
			// request came, was let go before it did.
			{"damaged correlation id before a held response's request", 0, 0, 0, 0, true, false, 0, 1<<20 | 2},
		}
		for _, tc := range cases {
			c2s, s2c := c2s, s2c
			if tc.insertAt > 0 {
				s2c = slices.Insert(slices.Clone(s2c), tc.insertAt, 'e')
			}
			if tc.corr2 != 0 {
				c2s = slices.Clone(c2s)
				binary.BigEndian.PutUint32(c2s[lc.reqOff[1]+8:], uint32(tc.corr2))
			}
			want := summary(decodeWhole(c2s, s2c, tc.cgap, tc.clen, tc.sgap, tc.slen, tc.syn))
			for _, size := range []int{1, 7, 14, 1000, 65483, 1 << 30} {
				for _, respFirst := range []bool{false, true} {
					got := summary(decodeChunked(c2s, s2c, tc.cgap, tc.clen, tc.sgap, tc.slen, tc.syn, size, respFirst))
					if !slices.Equal(got, want) {
						t.Errorf("v%d %s, chunks of %d, responses first %v:\ngot  %q\nwant %q", version, tc.name, size, respFirst, got, want)
					}
				}
			}
		}
	}
}

// FuzzChunked: any two streams, any gaps, any chunk size: the same as the
// whole-stream decoding.
func FuzzChunked(f *testing.F) {
	for _, version := range []int16{11, 13} {
		lc := newLossyConv(f, version)
		c2s, s2c := lossyStreams(lc)
		mid := uint32(lc.streamOff[lc.respSeg[0][len(lc.respSeg[0])/2]])
		f.Add(c2s, s2c, uint32(0), uint32(0), mid, uint32(1000), true, uint16(100))
		f.Add(c2s, s2c, uint32(30), uint32(7), uint32(lc.respOff[1])+3, uint32(50), false, uint16(13))
	}
	f.Fuzz(func(t *testing.T, c2s, s2c []byte, cgap, clen, sgap, slen uint32, syn bool, size uint16) {
		want := summary(decodeWhole(c2s, s2c, cgap, clen, sgap, slen, syn))
		for _, respFirst := range []bool{false, true} {
			got := summary(decodeChunked(c2s, s2c, cgap, clen, sgap, slen, syn, int(size)+1, respFirst))
			if !slices.Equal(got, want) {
				t.Errorf("chunks of %d, responses first %v:\ngot  %q\nwant %q", int(size)+1, respFirst, got, want)
			}
		}
	})
}
