package capture

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// maxHeld and maxHeldFrames bound the responses a connection holds while
// it waits for the requests they answer (see connDecoder.response), in
// bytes and in frames: past either, the oldest is taken as answering a
// request that was not captured. The count bounds a stream of the
// smallest frames (8 bytes, each costing some 150 bytes to keep); real
// traffic holds at most a response per request tcpassembly queues behind
// a gap, 4,096 of them before it lets go (flushHeldFrames).
const (
	maxHeld       = 64 << 20
	maxHeldFrames = 8192
)

// flushHeld and flushHeldFrames are what a connection holds before it
// asks tcpassembly to stop waiting for missing segments
// (factory.flushBefore): a request stream that lost a segment is held back
// by tcpassembly, one page per request, until 4,096 pages have queued or
// the capture ends, while the responses to the requests after the gap
// keep coming.
const (
	flushHeld       = 8 << 20
	flushHeldFrames = 4096
)

// connDecoder decodes one connection's exchanges as their frames
// complete: each request is kept, decoded, by correlation id until its
// response comes; each response is decoded as soon as its last byte is
// captured, and of a Fetch only the batch headers, the aborted list and
// the partition fields are kept. Its problems are kept per kind and
// listed in that order when the connection ends, as a reader of the whole
// stream would list them.
type connDecoder struct {
	c                   *Capture
	conn                *Conn
	rq, rs              *framer
	reqWhere, respWhere string

	byCorr map[int32]pending
	// Each request's place on the connection: a broker answers the
	// requests of one connection in the order they were sent (Kafka
	// protocol guide, "Network"), so after a gap the next response must
	// answer a request later than the last one answered.
	place    map[int32]int
	nreq     int
	fetchReq []reqAt // the Fetch requests, to find those left unanswered
	// Offsets named by earlier requests of a fetch session (KIP-227): an
	// incremental request lists only partitions that changed.
	session  map[sessionKey]int64
	answered map[int32]bool
	// held: responses waiting for their request, copied, in stream order
	// (a request whose segments tcpassembly still holds for a missing
	// one arrives after its response).
	held      []frame
	heldBytes int
	// flush asks for the streams waiting since before t for a missing
	// segment to go on without it; nil when decoding whole streams.
	flush func(t time.Time)

	reqProblems, respProblems streamProblems
	fetches                   []*Fetch
	failed                    error // a decoder panicked: the connection's remaining exchanges are skipped
}

// reqAt is a Fetch request's place in its stream.
type reqAt struct {
	off     int64
	version int16
	corr    int32
	i       int
}

func newConnDecoder(c *Capture, conn *Conn) *connDecoder {
	d := &connDecoder{c: c, conn: conn, byCorr: map[int32]pending{}, place: map[int32]int{},
		session: map[sessionKey]int64{}, answered: map[int32]bool{},
		reqWhere: conn.Client + "->" + conn.Server, respWhere: conn.Server + "->" + conn.Client}
	d.rq = &framer{file: c.Name, where: d.reqWhere, d: conn.c2s, min: minRequest, corrAt: 8, plausible: plausibleRequest, emit: d.request}
	d.rs = &framer{file: c.Name, where: d.respWhere, d: conn.s2c, min: minResponse, corrAt: 4, plausible: d.plausibleResponse, confirm: d.confirmResponse, undecided: d.undecidedResponse, emit: d.response}
	return d
}

// advance decodes what the bytes captured so far complete.
func (d *connDecoder) advance(final bool) {
	if d.failed != nil {
		return
	}
	defer func() {
		// The decoders work on bytes an attacker chose; a panic in them
		// is a bug, reported rather than taking the process down.
		if v := recover(); v != nil {
			d.failed = fmt.Errorf("capture: %s: %s: decoding this connection failed (%v); its remaining exchanges are skipped", d.c.Name, d.reqWhere, v)
			d.conn.c2s.discard()
			d.conn.s2c.discard()
			d.held = nil
		}
	}()
	d.rq.advance(final)
	// The request stream may have moved past held responses without
	// framing a request (requestsPast).
	d.release(final)
	d.rs.advance(final)
	if final {
		d.release(true)
	}
}

// finish decodes the rest once the capture has ended and hands the
// connection's fetches and problems to the capture.
func (d *connDecoder) finish() {
	d.advance(true)
	c := d.c
	c.report(d.rq.report()...)
	c.report(d.reqProblems.report(c.Name)...)
	c.report(d.rs.report()...)
	c.report(d.respProblems.report(c.Name)...)
	if d.failed != nil {
		c.report(d.failed)
	} else {
		d.unanswered()
	}
	c.Fetches = append(c.Fetches, d.fetches...)
	// Only the connection's endpoints stay with the capture.
	d.conn.c2s.discard()
	d.conn.s2c.discard()
	d.fetches, d.byCorr, d.place, d.session, d.answered = nil, nil, nil, nil, nil
}

// decodeConn decodes a connection whose directions hold all their bytes.
func decodeConn(c *Capture, conn *Conn) { newConnDecoder(c, conn).finish() }

func (d *connDecoder) problem(to *streamProblems, where string, off int64, format string, args ...any) {
	if len(to.list) >= maxStreamProblems {
		if to.dropped == 0 {
			to.firstWhere, to.firstOff = where, off
		}
		to.dropped++
		return
	}
	to.list = append(to.list, &FormatError{File: d.c.Name, Where: where, Offset: off, Msg: fmt.Sprintf(format, args...)})
}

// streamProblems is what decoding one direction's frames found wrong: the
// first maxStreamProblems, then a count, as the framer keeps its own. A
// stream of the smallest frames, each answering no request, is one
// problem per 8 bytes.
type streamProblems struct {
	list       []error
	dropped    int
	firstWhere string
	firstOff   int64
}

// report is the problems listed, then one counting those not listed, at
// the first of them.
func (p *streamProblems) report(file string) []error {
	if p.dropped == 0 {
		return p.list
	}
	return append(p.list, &FormatError{File: file, Where: p.firstWhere, Offset: p.firstOff,
		Msg: txnindex.Plural(p.dropped, "more problem", "more problems") + " decoding this stream's frames not listed, the first of them here"})
}

// request takes one request frame.
func (d *connDecoder) request(f frame) {
	i := d.nreq
	d.nreq++
	fr := f.data
	if len(fr) >= 8 {
		corr := corrOf(fr)
		if int16(binary.BigEndian.Uint16(fr)) == 1 {
			d.fetchReq = append(d.fetchReq, reqAt{off: f.off, version: int16(binary.BigEndian.Uint16(fr[2:])), corr: corr, i: i})
		}
	}
	defer d.release(false)
	if f.cut() {
		if len(fr) >= 8 {
			key, version, corr := int16(binary.BigEndian.Uint16(fr)), int16(binary.BigEndian.Uint16(fr[2:])), corrOf(fr)
			d.byCorr[corr], d.place[corr] = pending{key: key, version: version}, i
			d.problem(&d.reqProblems, d.reqWhere, f.off, "%s v%d request corr %d cut by bytes not captured after %d of its %d bytes: the exchange is not decoded", kmsg.NameForKey(key), version, corr, len(fr), f.size)
		}
		return
	}
	p, body, herr := requestHeader(fr)
	if herr != nil {
		d.problem(&d.reqProblems, d.reqWhere, f.off, "%s", herr)
		return
	}
	if p.req != nil {
		if err := p.req.ReadFrom(body); err != nil {
			d.problem(&d.reqProblems, d.reqWhere, f.off, "%s v%d request body: %v", kmsg.NameForKey(p.key), p.version, err)
			p.req = nil
		} else if _, ok := p.req.(*kmsg.FetchRequest); !ok {
			// Only a Fetch request is read again (its offsets and
			// isolation level); others only tell how to decode their
			// response. A fresh one keeps nothing of the stream's bytes
			// (kmsg's byte fields, a Produce request's records, point
			// into them).
			p.req = kmsg.RequestForKey(p.key)
			p.req.SetVersion(p.version)
		}
	}
	d.byCorr[corrOf(fr)], d.place[corrOf(fr)] = p, i
}

// plausibleResponse: a size in range and a correlation id of a request
// sent after the one the previous response answered.
func (d *connDecoder) plausibleResponse(b []byte, after int32) bool {
	if len(b) < 8 {
		return false
	}
	if n := int32(binary.BigEndian.Uint32(b)); n < minResponse || n > maxFrame {
		return false
	}
	i, ok := d.placeOf(int32(binary.BigEndian.Uint32(b[4:])))
	if !ok {
		return false
	}
	// after is placed the same way: when the previous candidate answers
	// the tentative request too, this one (the same correlation id) does
	// not come after it; a broker answers each request once.
	j, ok := d.placeOf(after)
	return !ok || i > j
}

// placeOf is the place on the connection of the request with correlation
// id corr: one framed, or the one the request framer has found but cannot
// take yet (it waits for the frame after it), which comes next.
func (d *connDecoder) placeOf(corr int32) (int, bool) {
	if i, ok := d.place[corr]; ok {
		return i, true
	}
	if t, ok := d.rq.tentative(); ok && t == corr {
		return d.nreq, true
	}
	return 0, false
}

// undecidedResponse: b, at stream byte off, has a size in range and the
// correlation id of a request that may still be framed (waits), so that a
// response framer resynchronising ahead of its requests does not pass
// over the response whose request comes next.
func (d *connDecoder) undecidedResponse(b []byte, off int64) bool {
	if len(b) < 8 {
		return false
	}
	if n := int32(binary.BigEndian.Uint32(b)); n < minResponse || n > maxFrame {
		return false
	}
	return d.waits(frame{off: off, data: b[4:8]})
}

// confirmResponse: a response that runs past the bytes captured after a
// gap is only taken as such if it is a Fetch response whose first batch
// arrived whole, CRC and all.
func (d *connDecoder) confirmResponse(b []byte) bool {
	p := d.byCorr[int32(binary.BigEndian.Uint32(b[4:]))]
	if _, ok := p.req.(*kmsg.FetchRequest); !ok {
		return false
	}
	body := b[8:]
	if p.req.IsFlexible() {
		var err error
		if body, err = skipTags(body); err != nil {
			return false
		}
	}
	resp, want := fetchPrefix(body, p.version)
	if want < 0 {
		return false
	}
	t := resp.Topics[len(resp.Topics)-1]
	recs := t.Partitions[len(t.Partitions)-1].RecordBatches
	if len(recs) < 12 {
		return false
	}
	// The first batch only: its length is at bytes 8..12.
	n := 12 + int64(int32(binary.BigEndian.Uint32(recs[8:])))
	if n < 12 || n > int64(len(recs)) {
		return false
	}
	bs, _ := loader.ParseRecordSet(recs[:n], "")
	return len(bs) == 1
}

// response takes one response frame: decoded now if its request is known,
// else held (copied) until the request comes, or cannot come any more.
func (d *connDecoder) response(f frame) {
	if len(d.held) == 0 && !d.waits(f) {
		d.decode(f)
		return
	}
	f.data = append([]byte(nil), f.data...)
	f.seen = d.conn.s2c.timeAt(f.off) // the direction forgets it once past f
	d.held = append(d.held, f)
	d.heldBytes += len(f.data)
	if (d.heldBytes > flushHeld || len(d.held) > flushHeldFrames) && d.flush != nil {
		// A response is captured after the whole of the request it
		// answers reached the broker: what the request stream still
		// waits for from before this response (its start, when the
		// held response answers a request lost in the gap, the next
		// one's) was not captured and will not be.
		d.flush(f.seen)
	}
	d.release(false)
}

// waits reports whether f answers a request that may still be framed:
// one not seen yet, while the request stream has not been framed past
// the bytes captured up to f's first byte (requestsPast). The capture
// times decide, not the correlation ids: a client counts its ids up, but
// Java's clients share one counter across connections, so a connection's
// ids jump, and a damaged or hostile id can be any number.
func (d *connDecoder) waits(f frame) bool {
	if len(f.data) < 4 || d.rq.ended {
		return false
	}
	if _, ok := d.byCorr[int32(binary.BigEndian.Uint32(f.data))]; ok {
		return false
	}
	return !d.requestsPast(d.seen(f))
}

// requestsPast reports whether every request a response captured at t
// can answer has been framed (or lost in a gap). A broker reads a request
// whole before it answers, and TCP hands it the request's bytes only
// after every byte before them: a request byte captured after t lies
// after the request the response answers, and tcpassembly hands over a
// direction's bytes in stream order too. So the request framer is past
// that request once the byte where it stands, the first it has not
// framed, was captured after t; or, with all bytes so far framed, once
// the last chunk was.
func (d *connDecoder) requestsPast(t time.Time) bool {
	fr, dir := d.rq, d.conn.c2s
	if !fr.started || len(dir.runs) == 0 || len(dir.marks) == 0 {
		return false
	}
	if fr.pos < dir.runs[len(dir.runs)-1].end() {
		return dir.timeAt(fr.pos).After(t)
	}
	return dir.marks[len(dir.marks)-1].t.After(t)
}

// release decodes the held responses whose turn has come; all of them
// when final.
func (d *connDecoder) release(final bool) {
	for len(d.held) > 0 && (final || !d.waits(d.held[0]) || d.heldBytes > maxHeld || len(d.held) > maxHeldFrames) {
		f := d.held[0]
		if !final && d.waits(f) {
			d.problem(&d.respProblems, d.respWhere, f.off, "response corr %d held with %d bytes of responses after it for a request that did not come: not decoded",
				int32(binary.BigEndian.Uint32(f.data)), d.heldBytes-len(f.data))
		}
		d.held[0] = frame{}
		d.held = d.held[1:]
		d.heldBytes -= len(f.data)
		d.decode(f)
	}
	if len(d.held) == 0 {
		d.held = nil
	}
}

// decode decodes one response frame against its request.
func (d *connDecoder) decode(f frame) {
	c, where, fr := d.c, d.respWhere, f.data
	if len(fr) < 4 {
		return
	}
	corr := int32(binary.BigEndian.Uint32(fr))
	p, ok := d.byCorr[corr]
	if !ok || p.req == nil {
		return
	}
	// The request is answered: only its key and version stay, so that
	// a second response with its id is not decoded again.
	d.byCorr[corr] = pending{key: p.key, version: p.version}
	d.answered[corr] = true
	c.Exchanges++
	c.apis[kmsg.NameForKey(p.key)]++
	body := fr[4:]
	resp := p.req.ResponseKind()
	resp.SetVersion(p.version)
	// Response header v1 (flexible) adds tagged fields, except for
	// ApiVersions, whose response header stays v0 so any client can
	// read it.
	if resp.IsFlexible() && p.key != 18 {
		var herr error
		body, herr = skipTags(body)
		if herr != nil {
			d.problem(&d.respProblems, where, f.off, "%s", herr)
			return
		}
	}
	if f.cut() {
		if freq, ok := p.req.(*kmsg.FetchRequest); ok {
			d.cutFetch(f, corr, p.version, freq, body)
		} else {
			d.problem(&d.respProblems, where, f.off, "%s v%d response corr %d cut by bytes not captured after %d of its %d bytes: not decoded", kmsg.NameForKey(p.key), p.version, corr, len(fr), f.size)
		}
		return
	}
	if err := resp.ReadFrom(body); err != nil {
		d.problem(&d.respProblems, where, f.off, "%s v%d response body: %v", kmsg.NameForKey(p.key), p.version, err)
		return
	}
	fresp, ok := resp.(*kmsg.FetchResponse)
	if !ok {
		if m, ok := resp.(*kmsg.MetadataResponse); ok {
			for _, t := range m.Topics {
				if t.Topic != nil && t.TopicID != ([16]byte{}) {
					c.ids[t.TopicID] = *t.Topic
				}
			}
		}
		return
	}
	d.fetches = append(d.fetches, fetchesOf(d.conn, d.seen(f), corr, p.version, p.req.(*kmsg.FetchRequest), fresp, d.session, where)...)
}

// seen is when f's first byte was captured.
func (d *connDecoder) seen(f frame) time.Time {
	if !f.seen.IsZero() {
		return f.seen
	}
	return d.conn.s2c.timeAt(f.off)
}

// cutFetch keeps what arrived of a Fetch response that runs into bytes not
// captured, as Wireshark keeps the fields before a gap: the partitions
// complete before it, and of the partition it falls in the complete
// batches before it (a consumer would have read those the same way: the
// batches of a record set are independent).
func (d *connDecoder) cutFetch(f frame, corr int32, version int16, freq *kmsg.FetchRequest, body []byte) {
	resp, want := fetchPrefix(body, version)
	kept := fetchesOf(d.conn, d.seen(f), corr, version, freq, resp, d.session, d.respWhere)
	d.fetches = append(d.fetches, kept...)
	msg := fmt.Sprintf("Fetch v%d response corr %d cut by bytes not captured after %d of its %d bytes", version, corr, len(f.data), f.size)
	whole := len(kept)
	if want >= 0 {
		last := kept[len(kept)-1]
		last.Incomplete = true
		whole--
		msg += fmt.Sprintf(": kept the %d complete batches of %s before the gap (%d of its %d record bytes captured)",
			len(last.Batches), partitionName(last), last.RecordBytes, want)
	}
	if whole > 0 || want < 0 {
		msg += fmt.Sprintf(", %d partitions before it whole", whole)
	}
	msg += "; the rest is lost"
	d.problem(&d.respProblems, d.respWhere, f.off, "%s", msg)
}

// unanswered reports the Fetch requests whose response was not captured.
// One left unanswered before one that was answered lost its response in a
// gap (responses come in request order); one after the last answered may
// have been pending when the capture stopped.
func (d *connDecoder) unanswered() {
	lastAnswered := -1
	for corr := range d.answered {
		lastAnswered = max(lastAnswered, d.place[corr])
	}
	for _, r := range d.fetchReq {
		if d.answered[r.corr] || d.place[r.corr] != r.i {
			continue
		}
		d.c.unanswered++
		if r.i < lastAnswered {
			d.c.report(&FormatError{File: d.c.Name, Where: d.reqWhere, Offset: r.off,
				Msg: fmt.Sprintf("Fetch v%d request corr %d has no response in the capture: it fell in bytes not captured", r.version, r.corr)})
		}
	}
}
