package capture

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestHeldResponsesWaitByCaptureTime: responses handed over before their
// requests (tcpassembly holding the requests back for a missing segment)
// wait for the request stream to be framed past the time they were
// captured, not for a larger correlation id: a damaged id far above the
// next one does not let the third response go before its request comes,
// and a response whose request was damaged goes, undecoded and without a
// problem, as soon as a request byte captured after it arrives.
func TestHeldResponsesWaitByCaptureTime(t *testing.T) {
	lc := newLossyConv(t, 13)
	c2s, _ := lossyStreams(lc)
	binary.BigEndian.PutUint32(c2s[lc.reqOff[1]+8:], 1<<20|2)
	reqEnd := [3]int64{lc.reqOff[1], lc.reqOff[2], int64(len(c2s))}

	c := &Capture{Name: "held", ids: map[[16]byte]string{}, apis: map[string]int{}}
	conn := &Conn{Client: "c:1", Server: "s:2", c2s: &direction{src: "c:1", dst: "s:2", syn: true}, s2c: &direction{src: "s:2", dst: "c:1", syn: true}}
	d := newConnDecoder(c, conn)
	// Request i is captured at second 2i, its response at second 2i+1.
	at := func(s int) time.Time { return time.Unix(1700000000+int64(s), 0) }
	for i := range 3 {
		conn.s2c.add(lc.resp[i], 0, at(2*i+1))
		d.advance(false)
	}
	heldCorrs := func() []int32 {
		var out []int32
		for _, f := range d.held {
			out = append(out, int32(binary.BigEndian.Uint32(f.data)))
		}
		return out
	}
	step := func(what string, b []byte, s int, want ...int32) {
		t.Helper()
		conn.c2s.add(b, 0, at(s))
		d.advance(false)
		if got := heldCorrs(); !slices.Equal(got, want) {
			t.Fatalf("after %s: held responses of corr %v, want %v", what, got, want)
		}
	}
	step("nothing", nil, 0, 1, 2, 3)
	step("request 1", c2s[:reqEnd[0]], 0, 2, 3)
	// Captured before response 2: the request it answers may follow.
	step("the request whose id is damaged", c2s[reqEnd[0]:reqEnd[1]], 2, 2, 3)
	// The start of a request captured after response 2, not yet framed:
	// all that response 2 can answer has been; response 3's request may
	// be the one in progress.
	half := lc.reqOff[2] + (reqEnd[2]-lc.reqOff[2])/2
	step("half of request 3", c2s[reqEnd[1]:half], 4, 3)
	step("request 3", c2s[half:], 4)
	d.finish()

	var got []string
	for _, f := range c.Fetches {
		got = append(got, fmt.Sprint("corr ", f.CorrelationID))
	}
	for _, p := range c.Problems {
		got = append(got, p.Error())
	}
	want := []string{"corr 1", "corr 3", "capture: held: c:1->s:2: byte 0x63: Fetch v13 request corr 1048578 has no response in the capture: it fell in bytes not captured"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
