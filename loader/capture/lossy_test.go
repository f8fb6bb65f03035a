package capture

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lossyConv is a client fetching three times from a broker: three Fetch
// exchanges of the given version, the responses holding 20, 3 and 4
// batches (about 11 KB, 1.6 KB, 2.2 KB), sent in segments of 1,000 bytes;
// then both sides close the connection.
type lossyConv struct {
	*conv
	resp    [3][]byte // the response frames
	recs    [3][]byte // their record sets
	ends    [3][]int  // where each batch ends in its record set
	bases   [3][]int64
	respSeg [3][]int // the segments carrying each response
	respOff [3]int64 // stream byte (server to client) where each starts
	reqOff  [3]int64 // stream byte (client to server) of each request
}

func newLossyConv(t testing.TB, version int16) *lossyConv {
	lc := &lossyConv{conv: newConv(t)}
	base := int64(0)
	for i, n := range []int{20, 3, 4} {
		for range n {
			lc.recs[i] = append(lc.recs[i], batch(base, 10, 40)...)
			lc.ends[i] = append(lc.ends[i], len(lc.recs[i]))
			lc.bases[i] = append(lc.bases[i], base)
			base += 10
		}
		req, resp := fetchExchange(version, lc.bases[i][0], lc.recs[i])
		lc.reqOff[i] = lc.sent[0]
		lc.send(true, requestFrame(req, int32(i+1)), 1460)
		lc.resp[i] = responseFrame(resp, int32(i+1))
		lc.respOff[i] = lc.sent[1]
		lc.respSeg[i] = lc.send(false, lc.resp[i], 1000)
	}
	lc.close()
	return lc
}

// before returns the base offsets of the batches of response i that lie
// wholly before stream byte gap.
func (lc *lossyConv) before(i int, gap int64) []int64 {
	start := lc.respOff[i] + int64(bytes.Index(lc.resp[i], lc.recs[i]))
	var out []int64
	for k, e := range lc.ends[i] {
		if start+int64(e) <= gap {
			out = append(out, lc.bases[i][k])
		}
	}
	return out
}

// gaps returns the stretches of the server's stream that dropping the
// segments drop leaves out, [from, to).
func (lc *lossyConv) gaps(drop []int) [][2]int64 {
	var out [][2]int64
	dropped := false
	for i := range lc.pkts {
		if lc.fromClient[i] || i < 3 {
			continue
		}
		switch {
		case slices.Contains(drop, i) && !dropped:
			out = append(out, [2]int64{lc.streamOff[i], 0})
			dropped = true
		case !slices.Contains(drop, i) && dropped:
			out[len(out)-1][1] = lc.streamOff[i]
			dropped = false
		}
	}
	return out
}

func baseOffsets(f *Fetch) []int64 {
	var out []int64
	for _, b := range f.Batches {
		out = append(out, b.BaseOffset)
	}
	return out
}

// problemAt returns the problem of stream where at offset whose message
// holds msg.
func problemAt(c *Capture, where string, off int64, msg string) *FormatError {
	for _, p := range c.Problems {
		var fe *FormatError
		if errors.As(p, &fe) && fe.Where == where && fe.Offset == off && strings.Contains(fe.Msg, msg) {
			return fe
		}
	}
	return nil
}

// TestLossyFetch drops TCP segments from a capture of Fetch exchanges, as
// a capture that could not keep up loses them (tshark: "previous segment
// not captured"):
//
//   - a segment in the middle of the first, 11 KB response: the batches
//     wholly before the gap are decoded, the gap is reported with its
//     stream and byte, and the two responses after it are decoded, found
//     by the first one's size across the gap;
//   - the first segment of the second response: its start is lost, so
//     framing resumes at the third response, found by its correlation id
//     and size; the second exchange is reported lost;
//   - the first response's last segment and the second's first: the
//     first is cut, framing resumes at the third;
//   - the third response's last segment, before the broker's FIN: the
//     third is cut, and nothing else is said.
func TestLossyFetch(t *testing.T) {
	for _, version := range []int16{11, 13} {
		lc := newLossyConv(t, version)
		s2c := lc.server() + "->" + lc.client()
		mid := lc.respSeg[0][len(lc.respSeg[0])/2]
		cases := []struct {
			name     string
			drop     []int
			fetches  [][]int64 // base offsets per decoded fetch
			cut      int       // index of the incomplete fetch, -1 if none
			resumeAt int64     // where framing resumes after a lost frame start, -1 if it need not
		}{
			{"middle of response 1", []int{mid}, [][]int64{lc.before(0, lc.streamOff[mid]), lc.bases[1], lc.bases[2]}, 0, -1},
			{"start of response 2", []int{lc.respSeg[1][0]}, [][]int64{lc.bases[0], lc.bases[2]}, -1, lc.respOff[2]},
			{"end of 1 and start of 2", []int{lc.respSeg[0][len(lc.respSeg[0])-1], lc.respSeg[1][0]},
				[][]int64{lc.before(0, lc.streamOff[lc.respSeg[0][len(lc.respSeg[0])-1]]), lc.bases[2]}, 0, lc.respOff[2]},
			{"end of response 3", []int{lc.respSeg[2][len(lc.respSeg[2])-1]},
				[][]int64{lc.bases[0], lc.bases[1], lc.before(2, lc.streamOff[lc.respSeg[2][len(lc.respSeg[2])-1]])}, 2, -1},
		}
		for _, tc := range cases {
			t.Run(fmt.Sprintf("v%d %s", version, tc.name), func(t *testing.T) {
				c, err := Read(bytes.NewReader(lc.pcap(tc.drop...)), "lossy.pcap")
				if err != nil {
					t.Fatal(err)
				}
				var got [][]int64
				for i, f := range c.Fetches {
					got = append(got, baseOffsets(f))
					if f.Incomplete != (i == tc.cut) {
						t.Errorf("fetch %d (corr %d): incomplete %v", i, f.CorrelationID, f.Incomplete)
					}
				}
				if !slices.EqualFunc(got, tc.fetches, slices.Equal) {
					t.Errorf("fetched batches %v, want %v", got, tc.fetches)
				}
				if tc.cut >= 0 && (len(tc.fetches[tc.cut]) == 0 || len(tc.fetches[tc.cut]) == len(lc.bases[tc.cut])) {
					t.Fatalf("the dropped segment keeps %d of %d batches: the test does not cut inside the record set", len(tc.fetches[tc.cut]), len(lc.bases[tc.cut]))
				}
				for _, g := range lc.gaps(tc.drop) {
					if problemAt(c, s2c, g[0], fmt.Sprintf("TCP segments not captured: stream bytes %#x..%#x (%d bytes) missing", g[0], g[1]-1, g[1]-g[0])) == nil {
						t.Errorf("gap %#x..%#x not reported: %v", g[0], g[1], c.Problems)
					}
				}
				if tc.cut >= 0 && problemAt(c, s2c, lc.respOff[tc.cut], fmt.Sprintf("Fetch v%d response corr %d cut by bytes not captured", version, tc.cut+1)) == nil {
					t.Errorf("cut response not reported: %v", c.Problems)
				}
				if tc.resumeAt >= 0 && problemAt(c, s2c, tc.resumeAt, "framing resumes here") == nil {
					t.Errorf("resynchronisation at %#x not reported: %v", tc.resumeAt, c.Problems)
				}
				if tc.resumeAt >= 0 && problemAt(c, lc.client()+"->"+lc.server(), lc.reqOff[1], fmt.Sprintf("Fetch v%d request corr 2 has no response in the capture", version)) == nil {
					t.Errorf("the lost exchange is not reported: %v", c.Problems)
				}
				want := len(lc.gaps(tc.drop))
				if tc.cut >= 0 {
					want++ // the cut response
				}
				if tc.resumeAt >= 0 {
					want += 2 // the resumption, the exchange lost
				}
				if len(c.Problems) != want {
					t.Errorf("%d problems, want %d", len(c.Problems), want)
				}
				for _, p := range c.Problems {
					if n := strings.Count(p.Error(), "byte 0x"); n != 1 {
						t.Errorf("%d positions in %q", n, p)
					}
				}
				t.Logf("%d packets, fetches %v; problems:", c.Packets, got)
				for _, p := range c.Problems {
					t.Log("  ", p)
				}
			})
		}
	}
}

// TestNoFetch: a capture with no Fetch to decide says so plainly, with what
// it does hold, instead of leaving the caller to find no partition.
func TestNoFetch(t *testing.T) {
	lc := newLossyConv(t, 11)
	var drop []int
	for _, s := range lc.respSeg {
		drop = append(drop, s...)
	}
	c, err := Read(bytes.NewReader(lc.pcap(drop...)), "noresp.pcap")
	if err != nil {
		t.Fatal(err)
	}
	want := "capture: noresp.pcap: no Fetch exchange to decide: its 8 packets hold 1 TCP connection but no Kafka request answered by a response; " +
		"3 Fetch requests have no response in the capture (not captured, or sent after it ended); 1 problem reported, the first: " +
		"capture: noresp.pcap: 10.0.0.2:9092->10.0.0.1:40000: byte 0x0: TCP segments not captured: stream bytes 0x0..0x38d5 (14550 bytes) missing"
	if err := c.NoFetch(); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	c, err = Read(bytes.NewReader(lc.pcap()), "whole.pcap")
	if err != nil || c.NoFetch() != nil || len(c.Fetches) != 3 {
		t.Errorf("whole conversation: %v, %v", err, c.NoFetch())
	}
	path := filepath.Join(realdata, "deepflowio_deepflow/agent/resources/test/flow_generator/kafka/18-api-versions-v3.pcap")
	if c, err = Open(path); err != nil {
		t.Fatal(err)
	}
	if err := c.NoFetch(); err == nil || !strings.Contains(err.Error(), "no Fetch exchange to decide: its 2 packets hold 1 TCP connection and 1 Kafka exchange (ApiVersions 1), none a Fetch") {
		t.Errorf("ApiVersions capture: %v", err)
	}
}

// TestLossySeeds keeps the lossy conversations in testdata/hostile, where
// FuzzRead takes its seeds, equal to their generators (-update rewrites
// them): a segment lost in the middle of a response (v11), and the start
// of a response lost (v13).
func TestLossySeeds(t *testing.T) {
	v11, v13 := newLossyConv(t, 11), newLossyConv(t, 13)
	for name, b := range map[string][]byte{
		"lossy-fetch-v11.pcap":  v11.pcap(v11.respSeg[0][len(v11.respSeg[0])/2]),
		"lossy-resync-v13.pcap": v13.pcap(v13.respSeg[1][0]),
	} {
		path := filepath.Join(hostileDir, name)
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, b) {
			t.Errorf("%s does not match its generator (%v): go test -run TestLossySeeds -update", path, err)
		}
	}
}

// TestManyGaps: a response that lost every other segment lists its first
// gaps and counts the rest, so a capture with millions of gaps does not
// make millions of problems; the batches before the first gap are kept.
func TestManyGaps(t *testing.T) {
	cv := newConv(t)
	var recs []byte
	for i := range 20 {
		recs = append(recs, batch(int64(i*10), 10, 40)...)
	}
	req, resp := fetchExchange(11, 0, recs)
	cv.send(true, requestFrame(req, 1), 1460)
	segs := cv.send(false, responseFrame(resp, 1), 200)
	cv.close()
	var drop []int
	for i := 5; i < len(segs); i += 2 {
		drop = append(drop, segs[i])
	}
	c, err := Read(bytes.NewReader(cv.pcap(drop...)), "many.pcap")
	if err != nil {
		t.Fatal(err)
	}
	if len(drop) <= maxStreamProblems {
		t.Fatalf("only %d gaps", len(drop))
	}
	var last error
	if n := len(c.Problems); n > 0 {
		last = c.Problems[n-1]
	}
	// The listed gaps and the count of the rest, then the cut response.
	if len(c.Problems) != maxStreamProblems+2 || !strings.Contains(c.Problems[maxStreamProblems].Error(), fmt.Sprintf("%d more problems in this stream not listed", len(drop)-maxStreamProblems)) {
		t.Errorf("%d problems, the last two %v, %v", len(c.Problems), c.Problems[len(c.Problems)-2], last)
	}
	if len(c.Fetches) != 1 || !c.Fetches[0].Incomplete || len(c.Fetches[0].Batches) != 1 {
		t.Errorf("fetches %+v", c.Fetches)
	}
}
