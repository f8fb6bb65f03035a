package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/google/gopacket/tcpassembly"
)

// direction is one half of a connection: the bytes captured, as runs
// separated by gaps where TCP segments were not captured, and when they
// arrived.
//
// Stream bytes are counted from the first byte captured in this direction
// (the first after the SYN when the handshake was captured); errors about
// a stream give positions in that count.
type direction struct {
	src, dst string
	runs     []run
	marks    []mark // stream byte -> time of the chunk starting there, increasing
	syn      bool   // the handshake was captured: stream byte 0 starts a frame
}

// run is a stretch of bytes captured without a gap.
type run struct {
	off int64 // stream byte of its first byte
	buf bytes.Buffer
	// lost: the gap before this run has an unknown size, so off is only
	// a lower bound and no frame can be followed across it.
	lost bool
}

func (r *run) end() int64 { return r.off + int64(r.buf.Len()) }

type mark struct {
	off int64
	t   time.Time
}

// first returns the bytes of the first run, for orient.
func (d *direction) first() []byte {
	if len(d.runs) == 0 {
		return nil
	}
	return d.runs[0].buf.Bytes()
}

// add appends a chunk tcpassembly delivered after skip missing bytes (-1:
// an unknown number).
func (d *direction) add(b []byte, skip int, t time.Time) {
	switch n := len(d.runs); {
	case n == 0:
		// Skip is -1 on the first chunk when the capture began
		// mid-stream; the count starts here all the same.
		d.runs = append(d.runs, run{})
	case skip == 0:
	case d.runs[n-1].buf.Len() == 0 && skip > 0:
		d.runs[n-1].off += int64(skip) // nothing captured yet (a SYN alone)
	case skip > 0:
		d.runs = append(d.runs, run{off: d.runs[n-1].end() + int64(skip)})
	default:
		d.runs = append(d.runs, run{off: d.runs[n-1].end(), lost: true})
	}
	if len(b) == 0 {
		return
	}
	r := &d.runs[len(d.runs)-1]
	d.marks = append(d.marks, mark{r.end(), t})
	r.buf.Write(b)
}

func (d *direction) timeAt(off int64) time.Time {
	i := sort.Search(len(d.marks), func(i int) bool { return d.marks[i].off > off })
	if i == 0 {
		return time.Time{}
	}
	return d.marks[i-1].t
}

type stream struct{ d *direction }

func (s *stream) Reassembled(rs []tcpassembly.Reassembly) {
	for _, r := range rs {
		if r.Start {
			s.d.syn = true
		}
		s.d.add(r.Bytes, r.Skip, r.Seen)
	}
}

func (s *stream) ReassemblyComplete() {}

// frame is one size-prefixed Kafka message of a direction.
type frame struct {
	off  int64  // stream byte of its size field
	size int64  // the bytes after the size field, as declared
	data []byte // those captured contiguously from the start: shorter than size when the frame runs into a gap or the capture's end
}

func (f frame) cut() bool { return int64(len(f.data)) < f.size }

// noCorr stands for "no correlation id seen yet".
const noCorr = int32(-1 << 31)

// maxStreamProblems bounds the problems reported per direction; the rest
// are counted.
const maxStreamProblems = 20

// framer splits a direction into Kafka frames by their 4-byte size
// prefixes. A gap (TCP segments not captured) does not end the walk, as
// it ends Wireshark's dissection of the message it falls in but not of the
// stream: a frame whose start was captured is followed by its size across
// the gap, and when the gap swallowed a frame's start, the walk scans the
// bytes after it for the next position where a frame plausibly starts
// (plausible: a size in range and a correlation id that fits; see
// decodeConn and scan).
type framer struct {
	file, where string
	d           *direction
	min         int64 // smallest frame size
	corrAt      int   // where the correlation id sits, counted from the size field
	// plausible reports whether b, starting at a size field, can start
	// the frame following one with correlation id after (noCorr: none
	// seen yet).
	plausible func(b []byte, after int32) bool
	// confirm, if set, checks a plausible frame that runs past the
	// captured bytes more closely.
	confirm func(b []byte) bool

	frames   []frame
	problems []error
	dropped  int
}

func (fr *framer) problem(off int64, format string, args ...any) {
	if len(fr.problems) >= maxStreamProblems {
		fr.dropped++
		return
	}
	fr.problems = append(fr.problems, &FormatError{File: fr.file, Where: fr.where, Offset: off, Msg: fmt.Sprintf(format, args...)})
}

func (fr *framer) corr(b []byte) int32 {
	if len(b) < fr.corrAt+4 {
		return noCorr
	}
	return int32(binary.BigEndian.Uint32(b[fr.corrAt:]))
}

// walk fills frames and problems.
func (fr *framer) walk() {
	runs := fr.d.runs
	if len(runs) == 0 {
		return
	}
	fr.gaps()
	defer func() {
		if fr.dropped > 0 {
			fr.problems = append(fr.problems, &FormatError{File: fr.file, Where: fr.where, Offset: runs[len(runs)-1].end(),
				Msg: fmt.Sprintf("%d more problems in this stream not listed", fr.dropped)})
		}
	}()
	ri, pos := 0, int64(0)
	aligned := fr.d.syn // else the capture began mid-stream, perhaps mid-frame
	after := noCorr
	scanFrom := int64(-1) // where the current resynchronisation began
	for {
		r := &runs[ri]
		if aligned && pos < r.off {
			aligned = false // the frame starting at pos began in the gap
			pos = r.off
		}
		if !aligned {
			if scanFrom < 0 {
				scanFrom = max(pos, r.off)
			}
			p, ok := fr.scan(r, max(pos, r.off), after)
			if !ok {
				if ri+1 == len(runs) {
					if (scanFrom > 0 || fr.d.syn) && r.end() > scanFrom {
						fr.problem(scanFrom, "no frame boundary found after this byte: the %d bytes to the capture's end are skipped", r.end()-scanFrom)
					}
					return
				}
				ri++
				pos = runs[ri].off
				continue
			}
			if p > scanFrom && (scanFrom > 0 || fr.d.syn) {
				fr.problem(p, "framing resumes here, at the next frame found by its size and correlation id; stream bytes %#x..%#x skipped", scanFrom, p-1)
			}
			pos, aligned, scanFrom = p, true, -1
		}
		if pos >= r.end() {
			if ri+1 == len(runs) {
				return // the end of the capture, or a frame declared to run past it
			}
			ri++
			if runs[ri].lost {
				aligned = false
				pos = runs[ri].off
			}
			continue
		}
		b := r.buf.Bytes()[pos-r.off:]
		if len(b) < 4 {
			if ri+1 == len(runs) {
				fr.problem(pos, "truncated frame size (%d bytes left)", len(b))
				return
			}
			// The size field runs into a gap: that frame is lost.
			aligned = false
			ri++
			pos = runs[ri].off
			continue
		}
		n := int64(int32(binary.BigEndian.Uint32(b)))
		if n < fr.min || n > maxFrame {
			fr.problem(pos, "frame size %d, want %d..%d", n, fr.min, maxFrame)
			aligned, scanFrom = false, pos
			pos++
			continue
		}
		if int64(len(b)-4) >= n {
			fr.frames = append(fr.frames, frame{off: pos, size: n, data: b[4 : 4+n]})
			after = fr.corr(b)
			pos += 4 + n
			continue
		}
		fr.frames = append(fr.frames, frame{off: pos, size: n, data: b[4:]})
		after = fr.corr(b)
		if ri+1 == len(runs) {
			fr.problem(pos, "frame of %d bytes cut after %d (capture ended mid-message)", n, len(b)-4)
			return
		}
		pos += 4 + n // the next frame starts there, gap or not
	}
}

// maxWeak bounds the candidates scan hands to confirm, which costs up to a
// batch's length each.
const maxWeak = 16

// scan returns where, within r at or after from, framing resumes. A
// position where a frame plausibly starts is taken if the frame after it
// plausibly starts where the size says, or the run ends there: two frames
// that fit each other do not occur by chance in the bytes of a lost
// message. Failing that, the first of the plausible frames that run past
// the run's end that confirm (when set) accepts.
func (fr *framer) scan(r *run, from int64, after int32) (int64, bool) {
	b := r.buf.Bytes()
	need := fr.corrAt + 4
	var weak []int
	for i := int(from - r.off); i+need <= len(b); i++ {
		if !fr.plausible(b[i:], after) {
			continue
		}
		next := i + 4 + int(int32(binary.BigEndian.Uint32(b[i:])))
		switch {
		case next == len(b), next+need <= len(b) && fr.plausible(b[next:], fr.corr(b[i:])):
			return r.off + int64(i), true
		case next+need > len(b) && len(weak) < maxWeak:
			weak = append(weak, i)
		}
	}
	for _, i := range weak {
		if fr.confirm == nil || fr.confirm(b[i:]) {
			return r.off + int64(i), true
		}
	}
	return 0, false
}

// gaps reports each stretch of the stream that was not captured.
func (fr *framer) gaps() {
	runs := fr.d.runs
	if len(runs) > 0 && fr.d.syn && runs[0].off > 0 {
		fr.problem(0, "TCP segments not captured: stream bytes 0x0..%#x (%d bytes) missing", runs[0].off-1, runs[0].off)
	}
	for i := 1; i < len(runs); i++ {
		a, b := runs[i-1].end(), runs[i].off
		if runs[i].lost {
			fr.problem(a, "TCP segments not captured after this byte (an unknown number of bytes); stream positions after it are counted without them")
			continue
		}
		fr.problem(a, "TCP segments not captured: stream bytes %#x..%#x (%d bytes) missing", a, b-1, b-a)
	}
}
