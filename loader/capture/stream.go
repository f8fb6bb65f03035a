package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/google/gopacket/tcpassembly"

	"github.com/txnscope/txnscope/txnindex"
)

// direction is one half of a connection: the bytes captured and not yet
// framed, as runs separated by gaps where TCP segments were not captured,
// and when they arrived. Bytes are dropped as soon as the framer is past
// them, so a direction holds the frame in progress and little else.
//
// Stream bytes are counted from the first byte captured in this direction
// (the first after the SYN when the handshake was captured); errors about
// a stream give positions in that count.
type direction struct {
	src, dst string
	runs     []run
	marks    []mark // stream byte -> time of the chunk starting there, increasing
	syn      bool   // the handshake was captured: stream byte 0 starts a frame
	// midStream: the handshake was not captured; the first packet was
	// handed to tcpassembly as a SYN (readPackets), which says nothing of
	// where frames start.
	midStream bool
	held      int64 // bytes held in runs
	gone      int   // runs dropped (framed) so far
	goneEnd   int64 // where the last run dropped ended
	// dropped: bytes of this direction were thrown away before the
	// connection could be oriented (see maxUnoriented); it is not decoded.
	dropped bool
}

// run is a stretch of bytes captured without a gap.
type run struct {
	start int64 // stream byte of its first byte
	off   int64 // stream byte of buf's first byte: start, or later once framed bytes are dropped
	buf   bytes.Buffer
	// lost: the gap before this run has an unknown size, so start is
	// only a lower bound and no frame can be followed across it.
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
	if d.dropped {
		return
	}
	switch n := len(d.runs); {
	case n == 0:
		// Skip is -1 on the first chunk when the capture began
		// mid-stream; the count starts here all the same.
		d.runs = append(d.runs, run{})
	case skip == 0:
	case d.runs[n-1].end() == d.runs[n-1].start && skip > 0:
		// Nothing captured yet (a SYN alone).
		d.runs[n-1].start += int64(skip)
		d.runs[n-1].off = d.runs[n-1].start
	case skip > 0:
		e := d.runs[n-1].end() + int64(skip)
		d.runs = append(d.runs, run{start: e, off: e})
	default:
		e := d.runs[n-1].end()
		d.runs = append(d.runs, run{start: e, off: e, lost: true})
	}
	if len(b) == 0 {
		return
	}
	r := &d.runs[len(d.runs)-1]
	d.marks = append(d.marks, mark{r.end(), t})
	r.buf.Write(b)
	d.held += int64(len(b))
}

func (d *direction) timeAt(off int64) time.Time {
	i := sort.Search(len(d.marks), func(i int) bool { return d.marks[i].off > off })
	if i == 0 {
		return time.Time{}
	}
	return d.marks[i-1].t
}

// drop forgets the runs before run ri and the bytes of run ri before
// stream byte keep, and the arrival times before keep but the last; it
// returns the new index of run ri (0).
func (d *direction) drop(ri int, keep int64) int {
	for i := range ri {
		d.held -= int64(d.runs[i].buf.Len())
	}
	if ri > 0 {
		d.gone += ri
		d.goneEnd = d.runs[ri-1].end()
		n := copy(d.runs, d.runs[ri:])
		clear(d.runs[n:])
		d.runs = d.runs[:n]
	}
	if len(d.runs) > 0 {
		r := &d.runs[0]
		if k := min(keep, r.end()) - r.off; k > 0 {
			r.buf.Next(int(k))
			r.off += k
			d.held -= k
		}
	}
	if i := sort.Search(len(d.marks), func(i int) bool { return d.marks[i].off > keep }); i > 1 {
		n := copy(d.marks, d.marks[i-1:])
		d.marks = d.marks[:n]
	}
	return 0
}

// discard throws away what the direction holds and all it will be given.
func (d *direction) discard() {
	d.runs, d.marks, d.held, d.dropped = nil, nil, 0, true
}

type stream struct {
	d *direction
	f *factory
	c *Conn
}

func (s *stream) Reassembled(rs []tcpassembly.Reassembly) {
	for _, r := range rs {
		if r.Start && !s.d.midStream {
			s.d.syn = true
		}
		s.d.add(r.Bytes, r.Skip, r.Seen)
	}
	s.f.advance(s.c)
}

func (s *stream) ReassemblyComplete() {}

// frame is one size-prefixed Kafka message of a direction. Its data is
// the direction's buffer: it is valid only during the call it is handed to.
type frame struct {
	off  int64     // stream byte of its size field
	size int64     // the bytes after the size field, as declared
	data []byte    // those captured contiguously from the start: shorter than size when the frame runs into a gap or the capture's end
	seen time.Time // when its first byte was captured, once the direction no longer tells (connDecoder.response)
}

func (f frame) cut() bool { return int64(len(f.data)) < f.size }

// noCorr stands for "no correlation id seen yet".
const noCorr = int32(-1 << 31)

// maxStreamProblems bounds the problems reported per direction; the rest
// are counted.
const maxStreamProblems = 20

// framer splits a direction into Kafka frames by their 4-byte size
// prefixes as the bytes arrive, handing each to emit as soon as it is
// complete (or, once no more bytes can come to complete it, cut). A gap
// (TCP segments not captured) does not end the walk, as it ends
// Wireshark's dissection of the message it falls in but not of the
// stream: a frame whose start was captured is followed by its size across
// the gap, and when the gap swallowed a frame's start, the walk scans the
// bytes after it for the next position where a frame plausibly starts
// (plausible: a size in range and a correlation id that fits; see
// connDecoder and scan).
//
// Between calls of advance the framer keeps its place; the direction then
// holds only the bytes from that place on: the frame in progress, or
// while resynchronising the candidate frame waiting for its successor.
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
	// undecided, if set, reports whether b, starting at a size field
	// at stream byte off, is not plausible now but may become so once
	// the other direction's bytes arrive: a response whose request has
	// not been framed yet, when tcpassembly hands a connection's
	// responses over before its requests.
	undecided func(b []byte, off int64) bool
	emit      func(frame)

	// The walk's place: run ri, stream byte pos; aligned when pos starts
	// a frame, else pos is where scanning resumes.
	ri       int
	pos      int64
	aligned  bool
	started  bool
	after    int32 // the last frame's correlation id
	scanFrom int64 // where the current resynchronisation began, -1 if none
	gapsDone int   // runs, counted from the direction's first, whose preceding gap was reported
	ended    bool

	gaps     []error // stretches not captured, listed before the walk's problems
	problems []error
	dropped  int
}

func (fr *framer) problem(off int64, format string, args ...any) {
	fr.add(&fr.problems, off, format, args...)
}

func (fr *framer) add(to *[]error, off int64, format string, args ...any) {
	if len(fr.gaps)+len(fr.problems) >= maxStreamProblems {
		fr.dropped++
		return
	}
	*to = append(*to, &FormatError{File: fr.file, Where: fr.where, Offset: off, Msg: fmt.Sprintf(format, args...)})
}

// report is the framer's problems in stream order of kind: the gaps, then
// the framing, then how many more were not listed.
func (fr *framer) report() []error {
	out := append(fr.gaps, fr.problems...)
	if fr.dropped > 0 {
		var end int64
		if n := len(fr.d.runs); n > 0 {
			end = fr.d.runs[n-1].end()
		}
		out = append(out, &FormatError{File: fr.file, Where: fr.where, Offset: end,
			Msg: txnindex.Plural(fr.dropped, "more problem", "more problems") + " in this stream not listed"})
	}
	return out
}

func (fr *framer) corr(b []byte) int32 {
	if len(b) < fr.corrAt+4 {
		return noCorr
	}
	return int32(binary.BigEndian.Uint32(b[fr.corrAt:]))
}

// advance frames what the bytes so far allow and drops the bytes behind
// it. With final set no more bytes will come: frames running into the
// capture's end are handed over cut, and what cannot be framed reported.
func (fr *framer) advance(final bool) {
	if fr.ended || len(fr.d.runs) == 0 {
		return
	}
	if r := &fr.d.runs[0]; !fr.started && !final && r.end() == r.start {
		return // nothing arrived yet: where the first byte will be may still move (add)
	}
	if !fr.started {
		fr.started, fr.aligned, fr.after, fr.scanFrom = true, fr.d.syn, noCorr, -1 // else the capture began mid-stream, perhaps mid-frame
		fr.pos = fr.d.runs[0].start
	}
	fr.reportGaps(final)
	fr.walk(final)
	if final {
		fr.ended = true
		return
	}
	keep := fr.pos
	if fr.ri < len(fr.d.runs) {
		keep = max(keep, fr.d.runs[fr.ri].off)
	}
	fr.ri = fr.d.drop(fr.ri, keep)
}

// reportGaps reports each stretch of the stream not captured, once. The
// last run, while nothing of it has arrived, may still move (add): its
// gap waits.
func (fr *framer) reportGaps(final bool) {
	d := fr.d
	runs := d.runs
	if last := &runs[len(runs)-1]; !final && last.end() == last.start {
		runs = runs[:len(runs)-1]
	}
	for ; fr.gapsDone < d.gone+len(runs); fr.gapsDone++ {
		i := fr.gapsDone - d.gone
		if fr.gapsDone == 0 {
			if d.syn && runs[0].start > 0 {
				fr.add(&fr.gaps, 0, "TCP segments not captured: stream bytes 0x0..%#x (%d bytes) missing", runs[0].start-1, runs[0].start)
			}
			continue
		}
		a, b := d.goneEnd, runs[i].start
		if i > 0 {
			a = runs[i-1].end()
		}
		if runs[i].lost {
			fr.add(&fr.gaps, a, "TCP segments not captured after this byte (an unknown number of bytes); stream positions after it are counted without them")
			continue
		}
		fr.add(&fr.gaps, a, "TCP segments not captured: stream bytes %#x..%#x (%d bytes) missing", a, b-1, b-a)
	}
}

// walk frames from the framer's place on. A run before the last one, or
// the last once final, will not grow: "done" below.
func (fr *framer) walk(final bool) {
	runs := fr.d.runs
	for {
		r := &runs[fr.ri]
		last := fr.ri+1 == len(runs)
		done := !last || final
		if fr.aligned && fr.pos < r.start {
			fr.aligned = false // the frame starting at pos began in the gap
			fr.pos = r.start
		}
		if !fr.aligned {
			from := max(fr.pos, r.off)
			if fr.scanFrom < 0 {
				fr.scanFrom = from
			}
			p, found, wait := fr.scan(r, from, fr.after, done)
			switch {
			case wait:
				fr.pos = p // wait for the bytes that decide
				return
			case !found && last:
				if (fr.scanFrom > 0 || fr.d.syn) && r.end() > fr.scanFrom {
					fr.problem(fr.scanFrom, "no frame boundary found after this byte: the %d bytes to the capture's end are skipped", r.end()-fr.scanFrom)
				}
				return
			case !found:
				fr.ri++
				fr.pos = runs[fr.ri].start
				continue
			}
			if p > fr.scanFrom && (fr.scanFrom > 0 || fr.d.syn) {
				fr.problem(p, "framing resumes here, at the next frame found by its size and correlation id; stream bytes %#x..%#x skipped", fr.scanFrom, p-1)
			}
			fr.pos, fr.aligned, fr.scanFrom = p, true, -1
		}
		if fr.pos >= r.end() {
			if last {
				return // wait; or the end of the capture, or a frame declared to run past it
			}
			fr.ri++
			if runs[fr.ri].lost {
				fr.aligned = false
				fr.pos = runs[fr.ri].start
			}
			continue
		}
		b := r.buf.Bytes()[fr.pos-r.off:]
		if len(b) < 4 {
			switch {
			case !done:
				return
			case last:
				fr.problem(fr.pos, "truncated frame size (%d bytes left)", len(b))
				return
			}
			// The size field runs into a gap: that frame is lost.
			fr.aligned = false
			fr.ri++
			fr.pos = runs[fr.ri].start
			continue
		}
		n := int64(int32(binary.BigEndian.Uint32(b)))
		if n < fr.min || n > maxFrame {
			fr.problem(fr.pos, "frame size %d, want %d..%d", n, fr.min, maxFrame)
			fr.aligned, fr.scanFrom = false, fr.pos
			fr.pos++
			continue
		}
		if int64(len(b)-4) >= n {
			fr.after = fr.corr(b)
			fr.emit(frame{off: fr.pos, size: n, data: b[4 : 4+n]})
			fr.pos += 4 + n
			continue
		}
		if !done {
			return // the rest of the frame is still to come
		}
		fr.after = fr.corr(b)
		fr.emit(frame{off: fr.pos, size: n, data: b[4:]})
		if last {
			fr.problem(fr.pos, "frame of %d bytes cut after %d (capture ended mid-message)", n, len(b)-4)
			return
		}
		fr.pos += 4 + n // the next frame starts there, gap or not
	}
}

// tentative returns the correlation id of the frame the framer has found
// while resynchronising but cannot take until the frame after it arrives.
func (fr *framer) tentative() (int32, bool) {
	if !fr.started || fr.aligned || fr.ended || fr.ri >= len(fr.d.runs) {
		return 0, false
	}
	r := &fr.d.runs[fr.ri]
	if fr.pos < r.off || fr.pos >= r.end() {
		return 0, false
	}
	b := r.buf.Bytes()[fr.pos-r.off:]
	if len(b) < fr.corrAt+4 || !fr.plausible(b, fr.after) {
		return 0, false
	}
	return fr.corr(b), true
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
//
// While r may still grow (not done), a candidate whose successor has not
// arrived cannot be judged yet: scan then returns it, not found, with wait
// set, and is called again from there when more bytes come. So with a
// candidate that the other direction's bytes still to come may make
// plausible (undecided), for at most flushHeld bytes (past them the
// connection has stopped waiting for those bytes: connDecoder.response),
// unless a plausible candidate before it is waiting to be confirmed.
func (fr *framer) scan(r *run, from int64, after int32, done bool) (pos int64, found, wait bool) {
	b := r.buf.Bytes()
	need := fr.corrAt + 4
	var weak []int
	i := int(from - r.off)
	for ; i+need <= len(b); i++ {
		if !fr.plausible(b[i:], after) {
			if len(weak) == 0 && fr.undecided != nil && len(b)-i <= flushHeld && fr.undecided(b[i:], r.off+int64(i)) {
				return r.off + int64(i), false, true
			}
			continue
		}
		next := i + 4 + int(int32(binary.BigEndian.Uint32(b[i:])))
		switch {
		case next+need <= len(b) && fr.plausible(b[next:], fr.corr(b[i:])):
			return r.off + int64(i), true, false
		case next+need <= len(b) && len(weak) == 0 && fr.undecided != nil && len(b)-i <= flushHeld && fr.undecided(b[next:], r.off+int64(next)):
			return r.off + int64(i), false, true // the frame after it waits for its request
		case next+need <= len(b):
		case !done:
			return r.off + int64(i), false, true
		case next == len(b):
			return r.off + int64(i), true, false
		case len(weak) < maxWeak:
			weak = append(weak, i)
		}
	}
	if !done {
		return r.off + int64(max(i, int(from-r.off))), false, true
	}
	for _, i := range weak {
		if fr.confirm == nil || fr.confirm(b[i:]) {
			return r.off + int64(i), true, false
		}
		if fr.undecided != nil && len(b)-i <= flushHeld && fr.undecided(b[i:], r.off+int64(i)) {
			return r.off + int64(i), false, true // confirm needs its request
		}
	}
	return 0, false, false
}
