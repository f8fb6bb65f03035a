package api

import (
	"container/list"
	"context"
	"encoding/binary"
	"iter"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/txnindex"
)

// Binary chunk layout (docs/protocol.md, "Binary frames"). Every number is
// little-endian; offsets are float64 because browsers have no cheap int64
// and Kafka offsets stay below 2^53 in practice.
const (
	frameHeaderSize = 16
	// decisionSize grew from 32 to 40 bytes in record layout 2 (the batch's
	// max timestamp, for the time axis); decisionLayout goes in header byte
	// 2 of decision frames so a client can tell the layouts apart.
	decisionSize   = 40
	decisionLayout = 2
	txnSize        = 32

	frameDecisions = 1
	frameTxns      = 2

	// laneGap is the lane of a gap decision (no batch, drawn on every lane).
	laneGap = 0xFFFF

	flagTransactional = 1 << 0
	flagControl       = 1 << 1
	flagCommit        = 1 << 2
	flagAbort         = 1 << 3
	flagTxnOpen       = 1 << 4

	defaultChunkSize = 4096
)

// laneInfo maps producers to lanes: lane 0 holds batches without a producer
// id, lane i+1 is l.Producers[i].
type laneInfo struct {
	lane map[txnindex.ProducerID]uint16
	// txns is l.Txns: a decision's transaction is a pointer into it, and
	// its index is found from the pointer (txnIndex), not from a map of
	// every transaction, which cost a cache miss per decision.
	txns []txnindex.Txn
}

// lanes keeps the lanes of recent logs. It is bounded: a live partition
// (live.go) is a new log at every change, and an unbounded map keyed by log
// would keep every one of them alive.
type lanes struct {
	mu sync.Mutex
	m  map[*txnindex.Log]*laneInfo
}

const lanesCacheSize = 64

// newLaneInfo computes l's lanes.
func newLaneInfo(l *txnindex.Log) *laneInfo {
	li := &laneInfo{lane: make(map[txnindex.ProducerID]uint16, len(l.Producers)), txns: l.Txns}
	for i, p := range l.Producers {
		li.lane[p.ID] = uint16(min(i+1, laneGap-1))
	}
	return li
}

// lanesOf is l's lanes, kept unless l is forgotten (forget.go).
func (c *streamCache) lanesOf(l *txnindex.Log) *laneInfo {
	c.lanes.mu.Lock()
	li, ok := c.lanes.m[l]
	c.lanes.mu.Unlock()
	if ok {
		return li
	}
	li = newLaneInfo(l)
	c.lanes.mu.Lock()
	defer c.lanes.mu.Unlock()
	if old, ok := c.lanes.m[l]; ok {
		return old // built concurrently: share one
	}
	if c.forgotten.has(l) {
		return li // not kept: it would keep l's transactions alive (forget.go)
	}
	if c.lanes.m == nil || len(c.lanes.m) >= lanesCacheSize {
		c.lanes.m = map[*txnindex.Log]*laneInfo{}
	}
	c.lanes.m[l] = li
	return li
}

func (li *laneInfo) laneOf(b *txnindex.Batch) uint16 {
	if b == nil {
		return laneGap
	}
	if !b.HasProducerID() {
		return 0
	}
	return li.lane[b.ProducerID]
}

// txnIndex is the index in li.txns of t, which points into it, or -1 when
// t is nil or (defensively) points elsewhere. The heap does not move, so
// the address arithmetic is exact.
func (li *laneInfo) txnIndex(t *txnindex.Txn) int32 {
	if t == nil || len(li.txns) == 0 {
		return -1
	}
	size := unsafe.Sizeof(li.txns[0])
	base, p := uintptr(unsafe.Pointer(&li.txns[0])), uintptr(unsafe.Pointer(t))
	if p < base || p >= base+uintptr(len(li.txns))*size || (p-base)%size != 0 {
		return -1
	}
	return int32((p - base) / size)
}

// laneCursor is laneOf with a one-entry cache, for one goroutine's pass
// (laneInfo itself is shared by every connection and stays read-only).
type laneCursor struct {
	li   *laneInfo
	pid  txnindex.ProducerID
	lane uint16
	ok   bool
}

func (c *laneCursor) laneOf(b *txnindex.Batch) uint16 {
	if b == nil || !b.HasProducerID() {
		return c.li.laneOf(b)
	}
	if !c.ok || c.pid != b.ProducerID {
		c.pid, c.lane, c.ok = b.ProducerID, c.li.lane[b.ProducerID], true
	}
	return c.lane
}

// encoded is every decision of one (log, options) pair in the binary record
// layout, shared read-only by all connections that ask for it.
type encoded struct {
	once    sync.Once
	decOnce sync.Once           // fills decs, on the first range request
	decs    []txnindex.Decision // every decision, for decisions?from=&to= and batches/{offset}
	recs    []byte              // decisionSize bytes per decision
	n       int                 // decisions
	firstOf []float64           // from-offset of each decision, for window lookups
	lanes   *laneInfo           // the lanes recs uses, which the transaction frames use too
}

func appendDecision(dst []byte, lc *laneCursor, d *txnindex.Decision) []byte {
	var r [decisionSize]byte
	binary.LittleEndian.PutUint64(r[0:], math.Float64bits(float64(d.From)))
	binary.LittleEndian.PutUint64(r[8:], math.Float64bits(float64(d.To)))
	binary.LittleEndian.PutUint32(r[16:], uint32(d.BatchIndex))
	binary.LittleEndian.PutUint32(r[20:], uint32(lc.li.txnIndex(d.Txn)))
	binary.LittleEndian.PutUint16(r[24:], lc.laneOf(d.Batch))
	r[26], r[27], r[28] = byte(d.Verdict), byte(d.Cause), byte(d.Uncommitted)
	var f byte
	if b := d.Batch; b != nil {
		if b.IsTransactional() {
			f |= flagTransactional
		}
		if b.IsControl() {
			f |= flagControl
		}
		if b.IsCommitMarker() {
			f |= flagCommit
		}
		if b.IsAbortMarker() {
			f |= flagAbort
		}
	}
	if d.Txn != nil && d.Txn.State == txnindex.TxnOpen {
		f |= flagTxnOpen
	}
	r[29] = f
	// The max timestamp as float64 (milliseconds stay exact below 2^53, and
	// the browser reads it through the same Float64Array as the offsets);
	// −1 for a gap, which has no batch.
	ts := -1.0
	if d.Batch != nil {
		ts = float64(d.Batch.MaxTimestamp)
	}
	binary.LittleEndian.PutUint64(r[32:], math.Float64bits(ts))
	return append(dst, r[:]...)
}

func (e *encoded) fill(l *txnindex.Log, o txnindex.ConsumeOptions, li *laneInfo) {
	e.lanes = li
	lc := &laneCursor{li: li}
	n := len(l.Batches) + len(l.Gaps) + 1
	e.recs = make([]byte, 0, decisionSize*n)
	e.firstOf = make([]float64, 0, n)
	for d := range l.Decisions(o) {
		e.recs = appendDecision(e.recs, lc, &d)
		e.firstOf = append(e.firstOf, float64(d.From))
	}
	e.n = len(e.recs) / decisionSize
}

// overlapping calls f, in offset order, with each decision of e that
// overlaps the offsets [from, to], rebuilt from its record with the fields
// a record carries (From, To, BatchIndex, Batch, Verdict, Cause,
// Uncommitted); l is the log e encodes.
func (e *encoded) overlapping(l *txnindex.Log, from, to int64, f func(*txnindex.Decision)) {
	// The last decision starting at or before from may reach into the
	// range; decisions do not overlap each other.
	i := max(searchF(e.firstOf, float64(from))-1, 0)
	for ; i < e.n && e.firstOf[i] <= float64(to); i++ {
		r := e.recs[i*decisionSize:]
		d := txnindex.Decision{
			From: int64(math.Float64frombits(binary.LittleEndian.Uint64(r))), To: int64(math.Float64frombits(binary.LittleEndian.Uint64(r[8:]))),
			BatchIndex: int32(binary.LittleEndian.Uint32(r[16:])), Verdict: txnindex.Verdict(r[26]), Cause: txnindex.Cause(r[27]), Uncommitted: txnindex.Verdict(r[28]),
		}
		if d.To < from {
			continue
		}
		if d.BatchIndex >= 0 && int(d.BatchIndex) < len(l.Batches) {
			d.Batch = &l.Batches[d.BatchIndex]
		}
		f(&d)
	}
}

// chunkRange returns the chunks [lo, hi) holding decisions that overlap the
// offsets [from, to].
func (e *encoded) chunkRange(from, to int64, chunk int) (int, int) {
	if e.n == 0 {
		return 0, 0
	}
	// First decision whose From > to, then step back to the one covering from.
	hiD := searchF(e.firstOf, float64(to)+0.5)
	loD := searchF(e.firstOf, float64(from)+0.5) - 1
	loD = max(loD, 0)
	hiD = max(hiD, loD+1)
	return loD / chunk, (hiD + chunk - 1) / chunk
}

// searchF returns the first index with a[i] > x.
func searchF(a []float64, x float64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m] <= x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// frameHeader returns the header of a binary frame of kind with count
// records starting at start; the body follows it in the same message. A
// decision frame names its record layout in byte 2 (docs/protocol.md).
func frameHeader(kind byte, gen uint32, start, count int) [frameHeaderSize]byte {
	var b [frameHeaderSize]byte
	b[0], b[1] = Version, kind
	if kind == frameDecisions {
		b[2] = decisionLayout
	}
	binary.LittleEndian.PutUint32(b[4:], gen)
	binary.LittleEndian.PutUint32(b[8:], uint32(start))
	binary.LittleEndian.PutUint32(b[12:], uint32(count))
	return b
}

// frame builds a binary frame of kind with count records starting at start.
func frame(kind byte, gen uint32, start, count int, body []byte) []byte {
	h := frameHeader(kind, gen, start, count)
	return append(h[:len(h):len(h)], body...)
}

func encodeTxns(l *txnindex.Log, li *laneInfo, from, to int) []byte {
	out := make([]byte, 0, (to-from)*txnSize)
	for i := from; i < to; i++ {
		t := &l.Txns[i]
		var r [txnSize]byte
		binary.LittleEndian.PutUint64(r[0:], math.Float64bits(float64(t.FirstOffset)))
		binary.LittleEndian.PutUint64(r[8:], math.Float64bits(float64(t.LastDataOffset)))
		binary.LittleEndian.PutUint64(r[16:], math.Float64bits(float64(t.MarkerOffset)))
		binary.LittleEndian.PutUint16(r[24:], li.lane[t.ProducerID])
		r[26] = byte(t.State)
		binary.LittleEndian.PutUint16(r[28:], uint16(t.ProducerEpoch))
		binary.LittleEndian.PutUint16(r[30:], uint16(t.MarkerEpoch))
		out = append(out, r[:]...)
	}
	return out
}

// streamCache keeps the encodings of the last few (log, options) pairs so
// that a hundred clients on one partition share one pass of the algorithm.
type streamCache struct {
	// sem bounds the full passes of the algorithm (encodings and decision
	// slices for distinct options) running at once, so that clients
	// choosing many options cannot take every core from the API.
	sem      chan struct{}
	fills    atomic.Int64 // encodings computed, for tests
	mu       sync.Mutex
	max      int
	maxBytes int        // the bytes kept encodings may hold (API.SetCacheBytes); cacheBytes by default
	lru      *list.List // of *cacheEntry, most recent first
	m        map[cacheKey]*list.Element
	// lanes and forgotten are the API's too: the lanes of the logs
	// streamed, and the logs Forget was told of.
	lanes     lanes
	forgotten forgottenSet
}

type cacheKey struct {
	l *txnindex.Log
	o txnindex.ConsumeOptions
}

type cacheEntry struct {
	k    cacheKey
	e    *encoded
	size int // bytes of e once filled; 0 while it is computed
}

func newStreamCache(n int) *streamCache {
	return &streamCache{sem: make(chan struct{}, fullPasses), max: n, maxBytes: cacheBytes, lru: list.New(), m: map[cacheKey]*list.Element{}}
}

func (c *streamCache) get(l *txnindex.Log, o txnindex.ConsumeOptions) *encoded {
	k := cacheKey{l, o}
	c.mu.Lock()
	el, ok := c.m[k]
	switch {
	case ok:
		c.lru.MoveToFront(el)
	case c.forgotten.has(l):
		// A log its catalog dropped (Forget), still held by a request:
		// computed for it, not kept, since a kept entry would keep l
		// alive. Checked under mu, which Forget takes after marking l,
		// so that no entry is put back behind it.
		c.mu.Unlock()
		e := &encoded{}
		e.once.Do(func() {
			c.fills.Add(1)
			c.sem <- struct{}{}
			e.fill(l, o, c.lanesOf(l))
			<-c.sem
		})
		return e
	default:
		el = c.lru.PushFront(&cacheEntry{k: k, e: &encoded{}})
		c.m[k] = el
		for c.lru.Len() > c.max {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.m, old.Value.(*cacheEntry).k)
		}
	}
	ce := el.Value.(*cacheEntry)
	e := ce.e
	c.mu.Unlock()
	// Computed outside the lock; concurrent askers wait on the Once, so
	// 200 clients on one partition share one encoding.
	e.once.Do(func() {
		c.fills.Add(1)
		c.sem <- struct{}{}
		e.fill(l, o, c.lanesOf(l))
		<-c.sem
		c.mu.Lock()
		ce.size += cap(e.recs) + 8*cap(e.firstOf)
		c.mu.Unlock()
	})
	c.trim()
	return e
}

// getCtx is get that returns ctx's error once ctx ends, rather than
// waiting for a pass over a large log past the request's deadline
// (--request-timeout). The pass goes on to its end behind the request:
// it is shared by every request on the log (one pass under sem), and the
// next request finds it cached.
func (c *streamCache) getCtx(ctx context.Context, l *txnindex.Log, o txnindex.ConsumeOptions) (*encoded, error) {
	return await(ctx, func() *encoded { return c.get(l, o) })
}

// decisionsCtx is decisions with getCtx's rule.
func (c *streamCache) decisionsCtx(ctx context.Context, l *txnindex.Log, o txnindex.ConsumeOptions) ([]txnindex.Decision, error) {
	return await(ctx, func() []txnindex.Decision { return c.decisions(l, o) })
}

// await runs f in its own goroutine and returns its result, or ctx's
// error if ctx ends first (f then runs on to its end).
func await[T any](ctx context.Context, f func() T) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// decisions returns every decision of l for o, computed once per cached
// (log, options) and shared by every request: a 100-offset range of the
// 1M-batch demo is then a binary search instead of a walk of the whole log.
// The slice is shared; callers must not modify it.
func (c *streamCache) decisions(l *txnindex.Log, o txnindex.ConsumeOptions) []txnindex.Decision {
	e := c.get(l, o)
	e.decOnce.Do(func() {
		c.sem <- struct{}{}
		decs := make([]txnindex.Decision, 0, e.n)
		for d := range l.Decisions(o) {
			decs = append(decs, d)
		}
		<-c.sem
		e.decs = decs
		c.mu.Lock()
		if el, ok := c.m[cacheKey{l, o}]; ok && el.Value.(*cacheEntry).e == e {
			el.Value.(*cacheEntry).size += cap(decs) * int(unsafe.Sizeof(txnindex.Decision{}))
		}
		c.mu.Unlock()
	})
	c.trim()
	return e.decs
}

// decisionsOverlapping returns the decisions of decs (in offset order, not
// overlapping) that overlap [from, to].
func decisionsOverlapping(decs []txnindex.Decision, from, to int64) []txnindex.Decision {
	lo := sort.Search(len(decs), func(i int) bool { return decs[i].To >= from })
	hi := lo
	for hi < len(decs) && decs[hi].From <= to {
		hi++
	}
	return decs[lo:hi]
}

// fullPasses is how many full passes over a log may run at once: one
// leaves the second core of a small machine to the API and the writers.
const fullPasses = 1

// cacheBytes bounds the encodings kept: the 1M-batch demo takes 32 MB per
// set of options.
const cacheBytes = 256 << 20

// trim evicts the least recently used encodings beyond maxBytes, keeping
// the newest. Connections that hold an evicted encoding keep using it.
func (c *streamCache) trim() {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		total += el.Value.(*cacheEntry).size
		if total > c.maxBytes && el != c.lru.Front() {
			c.lru.Remove(el)
			delete(c.m, el.Value.(*cacheEntry).k)
		}
		el = next
	}
}

// newStream starts generation gen of a stream over e, cut into chunks of
// chunk decisions, with the chunks overlapping the viewport vp first. The
// websocket (ws.go) and Recording share it, so that a recording holds the
// messages a client would have read.
func newStream(gen uint32, e *encoded, chunk int, vp Window) *stream {
	s := &stream{gen: gen, e: e, chunk: chunk, nChunks: (e.n + chunk - 1) / chunk, window: true, started: time.Now()}
	s.sent = make([]bool, s.nChunks)
	s.prioritise(vp)
	return s
}

// meta is the message that opens s: the summary of l (of source id) with
// the generation's options, viewport and chunk table.
func (s *stream) meta(id string, l *txnindex.Log, o txnindex.ConsumeOptions, vp Window) Meta {
	m := summary(id, l)
	m.Type, m.Generation, m.ChunkSize = "meta", s.gen, s.chunk
	opts := optionsOf(o)
	m.Options, m.Window = &opts, &vp
	m.Totals.Decisions, m.Totals.Chunks = s.e.n, s.nChunks
	m.ChunkStarts = make([]int64, s.nChunks)
	for k := range m.ChunkStarts {
		m.ChunkStarts[k] = int64(s.e.firstOf[k*s.chunk])
	}
	return m
}

// chunkFrame is the binary frame of chunk k of s.
func (s *stream) chunkFrame(k int) (h [frameHeaderSize]byte, body []byte) {
	from := k * s.chunk
	to := min(from+s.chunk, s.e.n)
	return frameHeader(frameDecisions, s.gen, from, to-from), s.e.recs[from*decisionSize : to*decisionSize]
}

// chunkSent records that chunk k has been written. It returns the phase
// its progress message names ("window" while the viewport's chunks go out,
// then "rest") and whether the transaction frames are due: right after the
// viewport's last chunk, so that the first paint does not wait for them
// (txnframes.go), and at the latest after the last chunk.
func (s *stream) chunkSent(k int) (phase string, txnsDue bool) {
	s.sent[k] = true
	s.nSent++
	phase = "rest"
	if s.window {
		phase = "window"
		if len(s.prio) == 0 {
			s.window = false
		}
	}
	return phase, !s.window || s.nSent == s.nChunks
}

// done is the message that ends s.
func (s *stream) done() map[string]any {
	return doneMsg(s.gen, s.e.n, s.nChunks, time.Since(s.started))
}

// txnFrames yields the transaction frames of l for generation gen, in
// order, txnsPerFrame transactions each, in the lanes li.
func txnFrames(l *txnindex.Log, li *laneInfo, gen uint32) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for i := 0; i < len(l.Txns); i += txnsPerFrame {
			j := min(i+txnsPerFrame, len(l.Txns))
			if !yield(frame(frameTxns, gen, i, j-i, encodeTxns(l, li, i, j))) {
				return
			}
		}
	}
}

// Message is one message of the decision stream: a JSON text message, or a
// binary frame (docs/protocol.md, "Binary frames").
type Message struct {
	Binary bool
	Data   []byte
}

// Recording returns the messages the decision stream of l (of source id)
// sends a client that opens it with options o and no viewport (the whole
// log) and reads until done: meta, the decision chunks, the transaction
// frames where the stream puts them, and done. It leaves out the progress
// messages, which tell a waiting client how far the stream has got: a
// recording is read whole. The encoding is computed here, not taken from
// an API's cache, so it needs no server; it is the static export's copy of
// the stream (api/export.go).
func Recording(id string, l *txnindex.Log, o txnindex.ConsumeOptions) ([]Message, error) {
	e := &encoded{}
	e.fill(l, o, newLaneInfo(l))
	vp := Window{From: l.LogStartOffset, To: l.LogEndOffset} // Stream's default viewport
	s := newStream(1, e, defaultChunkSize, vp)
	var out []Message
	text := func(v any) error {
		b, err := jsonid.Marshal(v)
		out = append(out, Message{Data: b})
		return err
	}
	txns := func() {
		if s.txns {
			return
		}
		s.txns = true
		for f := range txnFrames(l, s.e.lanes, s.gen) {
			out = append(out, Message{Binary: true, Data: f})
		}
	}
	if err := text(s.meta(id, l, o, vp)); err != nil {
		return nil, err
	}
	if s.nChunks == 0 {
		txns()
	}
	for k := s.next(); k >= 0; k = s.next() {
		h, body := s.chunkFrame(k)
		out = append(out, Message{Binary: true, Data: append(h[:len(h):len(h)], body...)})
		if _, due := s.chunkSent(k); due {
			txns()
		}
	}
	if err := text(s.done()); err != nil {
		return nil, err
	}
	return out, nil
}
