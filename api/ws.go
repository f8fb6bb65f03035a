package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/txnindex"
	"golang.org/x/time/rate"
)

const (
	// Time allowed to write one message to the peer. A client that stops
	// reading fills its TCP window and the next write times out after this:
	// the connection is then closed with closeTooSlow.
	writeWait = 10 * time.Second

	// Time allowed to read the next pong (or any message) from the peer.
	pongWait = 60 * time.Second

	// Send pings to the peer with this period. Must be less than pongWait.
	pingPeriod = (pongWait * 9) / 10

	// Largest message a client may send by default; its commands are tiny.
	maxMessageSize = 4096

	// sendQueue bounds the replies the read side queues for the writer
	// (errors for bad commands). A client that sends commands faster than
	// it reads their replies fills it and is closed.
	sendQueue = 16

	// txnsPerFrame is how many transaction records go in one binary frame.
	txnsPerFrame = 8192

	// closeTooSlow is the close code for a client that does not keep up.
	closeTooSlow = 4000
)

// upgrader leaves CheckOrigin nil: gorilla's default rejects a cross-origin
// handshake (Origin host must equal Host), which is what a local tool wants.
// The write buffers come from a pool: a connection holds one only while it
// writes a message, so 200 idle or slow clients do not pin 200 of them.
var upgrader = websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 1 << 16, WriteBufferPool: &sync.Pool{}}

// Meta is the partition summary: the first message of every stream
// generation, and the summary in the partitions API.
type Meta struct {
	Type                string        `json:"type,omitempty"`
	Version             int           `json:"version"`
	Generation          uint32        `json:"generation"`
	Source              string        `json:"source"`
	Topic               string        `json:"topic"`
	Partition           int32         `json:"partition"`
	LogStartOffset      int64         `json:"log_start_offset"`
	LogEndOffset        int64         `json:"log_end_offset"`
	HighWatermark       int64         `json:"high_watermark"`
	HighWatermarkSource string        `json:"high_watermark_source,omitempty"`
	LastStableOffset    int64         `json:"last_stable_offset"`
	Lanes               []LaneJSON    `json:"lanes"`
	Segments            []SegmentJSON `json:"segments"`
	Open                []TxnRef      `json:"open_transactions"`
	Totals              Totals        `json:"totals"`
	Options             *Options      `json:"options,omitempty"`
	ChunkSize           int           `json:"chunk_size,omitempty"`
	ChunkStarts         []int64       `json:"chunk_starts,omitempty"`
	Window              *Window       `json:"window,omitempty"`
}

// LaneJSON is one producer lane of the timeline. Lane 0 is "none": batches
// without a producer id.
type LaneJSON struct {
	Lane          int    `json:"lane"`
	ProducerID    int64  `json:"producer_id"`
	FirstEpoch    int16  `json:"first_epoch"`
	LastEpoch     int16  `json:"last_epoch"`
	Transactional bool   `json:"transactional"`
	Batches       int    `json:"batches"`
	Txns          int    `json:"transactions"`
	Label         string `json:"label"`
}

// SegmentJSON is one segment.
type SegmentJSON struct {
	Name       string `json:"name"`
	BaseOffset int64  `json:"base_offset"`
	Size       int64  `json:"size"`
	TxnIndex   string `json:"txnindex"`
	Aborted    int    `json:"aborted_entries"`
}

// Totals counts what the stream carries.
type Totals struct {
	Batches      int `json:"batches"`
	Decisions    int `json:"decisions,omitempty"`
	Transactions int `json:"transactions"`
	Open         int `json:"open_transactions"`
	Gaps         int `json:"gaps"`
	Chunks       int `json:"chunks,omitempty"`
}

// Window is a range of offsets, inclusive.
type Window struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Lanes returns the timeline lanes of l: "none" first, then one per
// producer in order of first appearance. The web package draws the same.
func Lanes(l *txnindex.Log) []LaneJSON {
	none := LaneJSON{Lane: 0, ProducerID: -1, FirstEpoch: -1, LastEpoch: -1, Label: "no producer id"}
	for i := range l.Batches {
		if !l.Batches[i].HasProducerID() {
			none.Batches++
		}
	}
	out := []LaneJSON{none}
	for i, p := range l.Producers {
		label := "producer " + strconv.FormatInt(int64(p.ID), 10) + " epoch " + strconv.Itoa(int(p.FirstEpoch))
		if p.LastEpoch != p.FirstEpoch {
			label += "–" + strconv.Itoa(int(p.LastEpoch))
		}
		out = append(out, LaneJSON{Lane: i + 1, ProducerID: int64(p.ID), FirstEpoch: p.FirstEpoch, LastEpoch: p.LastEpoch,
			Transactional: p.Transactional, Batches: p.Batches, Txns: p.Txns, Label: label})
	}
	return out
}

func summary(id string, l *txnindex.Log) Meta {
	m := Meta{Version: Version, Source: id, Topic: l.Topic, Partition: l.Partition,
		LogStartOffset: l.LogStartOffset, LogEndOffset: l.LogEndOffset, HighWatermark: l.HighWatermark,
		HighWatermarkSource: l.HighWatermarkSource, LastStableOffset: l.LastStableOffset, Lanes: Lanes(l),
		Open: []TxnRef{}, Totals: Totals{Batches: len(l.Batches), Transactions: len(l.Txns), Open: len(l.Open), Gaps: len(l.Gaps)}}
	for i := range l.Segments {
		s := &l.Segments[i]
		m.Segments = append(m.Segments, SegmentJSON{Name: s.Name, BaseOffset: s.BaseOffset, Size: s.Size,
			TxnIndex: s.TxnIndexName(), Aborted: len(l.AbortedEntries(i))})
	}
	for _, i := range l.Open {
		m.Open = append(m.Open, *txnRef(&l.Txns[i]))
	}
	return m
}

// clientMsg is any message a client sends.
type clientMsg struct {
	Type      string `json:"type"`
	From      *int64 `json:"from"`
	To        *int64 `json:"to"`
	Isolation string `json:"isolation"`
	Position  *int64 `json:"position"`
	MaxBytes  int32  `json:"max_bytes"`
	Variant   string `json:"variant"`
}

// Stream serves the websocket at /ws/v1/sources/{id}/partitions/{topic}/{partition}.
// The query may carry the initial options (isolation, position, max_bytes,
// variant) and viewport (from, to).
func (a *API) Stream() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		id, l, err := a.partition(r)
		if err != nil {
			return err
		}
		o, err := queryOptions(r)
		if err != nil {
			return err
		}
		vp := Window{From: l.LogStartOffset, To: l.LogEndOffset}
		if vp.From, err = queryInt(r, "from", vp.From); err != nil {
			return err
		}
		if vp.To, err = queryInt(r, "to", vp.To); err != nil {
			return err
		}
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return nil // Upgrade has replied
		}
		a.active.Add(1)
		defer a.active.Add(-1)
		c := &wsConn{a: a, conn: conn, id: id, l: l, opts: o, vp: vp,
			wake: make(chan struct{}, 1), send: make(chan []byte, sendQueue), readDone: make(chan struct{})}
		var unsub func()
		c.changed, unsub = a.subscribe(id, l) // live partitions (live.go)
		defer unsub()
		go c.readPump()
		c.writePump()
		return nil
	})
}

// Streams returns the number of open websocket streams.
func (a *API) Streams() int64 { return a.active.Load() }

// Shutdown closes every open stream; give it to http.Server.RegisterOnShutdown
// (the server does not track hijacked connections).
func (a *API) Shutdown() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.quit == nil {
		a.quit = make(chan struct{})
	}
	select {
	case <-a.quit:
	default:
		close(a.quit)
	}
}

func (a *API) quitC() chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.quit == nil {
		a.quit = make(chan struct{})
	}
	return a.quit
}

// wsConn is one websocket client. readPump is its only reader and
// writePump its only writer; they share the pending commands under mu.
type wsConn struct {
	a    *API
	conn *websocket.Conn
	id   string
	l    *txnindex.Log

	mu         sync.Mutex
	opts       txnindex.ConsumeOptions
	optsDirty  bool
	vp         Window
	vpDirty    bool
	wake       chan struct{} // cap 1: "look at the pending commands"
	send       chan []byte   // bounded replies from the reader
	readDone   chan struct{}
	tooSlowMsg string
	changed    <-chan struct{} // a live partition changed (live.go); nil otherwise
}

func (c *wsConn) notify() {
	select {
	case c.wake <- struct{}{}:
	default: // a wake-up is already pending; commands coalesce
	}
}

// WSLimits bound what one websocket client may send. A client's messages
// are small commands (viewport, options), typed by a person or sent on
// scroll; anything much bigger or faster is a broken or hostile client and
// is closed with 1008 (policy violation, RFC 6455 section 7.4.1) and a
// reason naming the limit.
type WSLimits struct {
	// MaxMessageSize is the largest message, in bytes.
	MaxMessageSize int
	// MessageRate is the sustained messages per second, MessageBurst the
	// token bucket's depth above it.
	MessageRate  float64
	MessageBurst int
}

// Defaults: a viewport message is about 50 bytes; a browser panning sends
// at most one per animation frame (60/s) and coalesces them.
const (
	defaultMaxMessage = maxMessageSize
	defaultRate       = 50
	defaultBurst      = 100
)

func (l WSLimits) withDefaults() WSLimits {
	if l.MaxMessageSize <= 0 {
		l.MaxMessageSize = defaultMaxMessage
	}
	if l.MessageRate <= 0 {
		l.MessageRate = defaultRate
	}
	if l.MessageBurst <= 0 {
		l.MessageBurst = defaultBurst
	}
	return l
}

// clientCmd is one decoded, validated client message: exactly one of
// viewport and opts is set.
type clientCmd struct {
	viewport *Window
	opts     *txnindex.ConsumeOptions
}

// decodeClientMsg parses and validates one client message. Any input gives
// a command or an error the client can act on (with the byte position of a
// JSON error), never a panic; it keeps nothing of b.
func decodeClientMsg(b []byte) (clientCmd, error) {
	var m clientMsg
	if err := json.Unmarshal(b, &m); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return clientCmd{}, fmt.Errorf("bad message at byte %d: %v", se.Offset, err)
		case errors.As(err, &te):
			return clientCmd{}, fmt.Errorf("bad message at byte %d: field %q wants a %v, not a JSON %s", te.Offset, te.Field, te.Type, te.Value)
		}
		return clientCmd{}, fmt.Errorf("bad message: %v", err)
	}
	switch m.Type {
	case "viewport":
		if m.From == nil || m.To == nil || *m.To < *m.From {
			return clientCmd{}, errors.New("viewport needs from <= to")
		}
		return clientCmd{viewport: &Window{From: *m.From, To: *m.To}}, nil
	case "options":
		o := Options{Isolation: m.Isolation, Position: -1, MaxBytes: m.MaxBytes, Variant: m.Variant}
		if m.Position != nil {
			o.Position = *m.Position
		}
		co, err := o.consume()
		if err != nil {
			var he *httpError
			if errors.As(err, &he) {
				return clientCmd{}, errors.New(he.Msg)
			}
			return clientCmd{}, err
		}
		return clientCmd{opts: &co}, nil
	}
	return clientCmd{}, errors.New("unknown message type " + strconv.Quote(m.Type))
}

// readPump reads client commands until the connection fails. It is the only
// reader of the connection.
func (c *wsConn) readPump() {
	defer close(c.readDone)
	lim := c.a.Limits.withDefaults()
	// No gorilla read limit: its overflow closes with 1009 before we see
	// the message. Reading through a LimitReader bounds memory the same way
	// (gorilla streams frames without buffering them) and lets the close
	// say 1008 like the rate limit does.
	buf := make([]byte, lim.MaxMessageSize+1)
	bucket := rate.NewLimiter(rate.Limit(lim.MessageRate), lim.MessageBurst)
	c.conn.SetReadDeadline(time.Now().Add(c.a.PongWait))
	c.conn.SetPongHandler(func(string) error {
		c.conn.SetReadDeadline(time.Now().Add(c.a.PongWait))
		return nil
	})
	for {
		_, r, err := c.conn.NextReader()
		if err != nil {
			return
		}
		n, err := io.ReadFull(r, buf)
		switch {
		case n > lim.MaxMessageSize:
			c.violation(fmt.Sprintf("message larger than %d bytes", lim.MaxMessageSize))
			return
		case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF:
			return
		case !bucket.Allow():
			c.violation(fmt.Sprintf("more than %g messages per second", lim.MessageRate))
			return
		}
		c.conn.SetReadDeadline(time.Now().Add(c.a.PongWait))
		cmd, err := decodeClientMsg(buf[:n])
		switch {
		case err != nil:
			c.reply(errorMsg(err.Error()))
		case cmd.viewport != nil:
			c.mu.Lock()
			c.vp, c.vpDirty = *cmd.viewport, true
			c.mu.Unlock()
			c.notify()
		case cmd.opts != nil:
			c.mu.Lock()
			c.opts, c.optsDirty = *cmd.opts, true
			c.mu.Unlock()
			c.notify()
		}
	}
}

// violation closes the connection with 1008. WriteControl may be called
// concurrently with the writer's WriteMessage (gorilla's contract); once
// the close frame is out, the writer's next write fails with ErrCloseSent
// and it stops when readDone closes.
func (c *wsConn) violation(reason string) {
	c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, reason), time.Now().Add(time.Second))
}

func errorMsg(s string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "message": s})
	return b
}

// reply queues a message for the writer without ever blocking the reader.
func (c *wsConn) reply(b []byte) {
	select {
	case c.send <- b:
	default:
		c.mu.Lock()
		c.tooSlowMsg = "too slow: reply queue full"
		c.mu.Unlock()
		c.notify()
	}
}

// stream is the state of one generation: which chunks are still to send.
type stream struct {
	gen     uint32
	e       *encoded
	chunk   int
	nChunks int
	sent    []bool
	nSent   int
	prio    []int // window chunks, sent before the rest
	cursor  int
	window  bool // still sending the window's chunks
	txns    bool // the transaction frames have been sent
	started time.Time
}

func (s *stream) next() int {
	for len(s.prio) > 0 {
		k := s.prio[0]
		s.prio = s.prio[1:]
		if !s.sent[k] {
			return k
		}
	}
	for s.cursor < s.nChunks && s.sent[s.cursor] {
		s.cursor++
	}
	if s.cursor < s.nChunks {
		return s.cursor
	}
	return -1
}

func (s *stream) prioritise(vp Window) {
	lo, hi := s.e.chunkRange(vp.From, vp.To, s.chunk)
	s.prio = s.prio[:0]
	for k := lo; k < hi && k < s.nChunks; k++ {
		if !s.sent[k] {
			s.prio = append(s.prio, k)
		}
	}
}

// writePump is the connection's only writer: it sends each generation's
// meta, transactions and decision chunks, pulling them one at a time so
// that a slow client slows only its own stream.
func (c *wsConn) writePump() {
	ticker := time.NewTicker(c.a.PingPeriod)
	defer func() {
		ticker.Stop()
		c.conn.Close()
	}()
	quit := c.a.quitC()
	var s *stream
	var gen uint32
	start := func() error {
		c.mu.Lock()
		o, vp := c.opts, c.vp
		c.optsDirty, c.vpDirty = false, false
		c.mu.Unlock()
		gen++
		s = newStream(gen, c.a.cache.get(c.l, o), max(c.a.ChunkSize, 1), vp)
		if err := c.writeJSON(s.meta(c.id, c.l, o, vp)); err != nil {
			return err
		}
		if s.nChunks == 0 {
			if err := c.sendTxns(s); err != nil {
				return err
			}
			return c.finish(s)
		}
		return nil
	}
	if err := start(); err != nil {
		c.fail(err)
		return
	}
	if err := c.sendLive(s); err != nil {
		c.fail(err)
		return
	}
	work := make(chan struct{})
	close(work) // always ready: selected when there is a chunk to send
	for {
		// Commands first, without blocking, so a viewport change takes
		// effect before the next chunk.
		select {
		case <-c.wake:
			if err := c.commands(&s, start); err != nil {
				c.fail(err)
				return
			}
		default:
		}
		ready := work
		if s == nil || s.nSent == s.nChunks {
			ready = nil // idle: block until something happens
		}
		var err error
		select {
		case <-c.wake:
			err = c.commands(&s, start)
		case b := <-c.send:
			err = c.write(websocket.TextMessage, b)
		case <-c.changed:
			err = c.liveChanged(&s, start)
		case <-ticker.C:
			if c.ping() != nil {
				return
			}
		case <-c.readDone:
			return
		case <-quit:
			c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down"), time.Now().Add(time.Second))
			return
		case <-ready:
			err = c.sendChunk(s)
		}
		if err != nil {
			c.fail(err)
			return
		}
	}
}

// commands applies pending options and viewport changes.
func (c *wsConn) commands(s **stream, start func() error) error {
	c.mu.Lock()
	optsDirty, vpDirty, vp, slow := c.optsDirty, c.vpDirty, c.vp, c.tooSlowMsg
	c.vpDirty = false
	c.mu.Unlock()
	switch {
	case slow != "":
		return errTooSlow
	case optsDirty:
		return start()
	case vpDirty && *s != nil:
		(*s).prioritise(vp)
		if (*s).nSent < (*s).nChunks && len((*s).prio) > 0 {
			(*s).window = true
		}
	}
	return nil
}

var errTooSlow = errors.New("client too slow")

func (c *wsConn) sendChunk(s *stream) error {
	k := s.next()
	if k < 0 {
		return c.finish(s)
	}
	// A chunk is written holding one of a few tokens: 200 writers all
	// runnable would each get a 1/200 share of the cores and an API
	// request's goroutine would queue behind them for seconds. The
	// deadline covers only the write, not the wait for a token. The limit
	// is soft: a writer blocked on a client that stopped reading keeps its
	// token until WriteWait, so after chunkWait the others write without.
	held := c.a.acquireChunk()
	err := c.writeFrame(s.chunkFrame(k))
	if held {
		<-c.a.chunkSem
	}
	if err != nil {
		return err
	}
	phase, txnsDue := s.chunkSent(k)
	if err := c.writeJSON(map[string]any{"type": "progress", "generation": s.gen, "phase": phase,
		"chunks_sent": s.nSent, "chunks_total": s.nChunks, "chunk": k}); err != nil {
		return err
	}
	if txnsDue {
		if err := c.sendTxns(s); err != nil {
			return err
		}
	}
	if s.nSent == s.nChunks {
		return c.finish(s)
	}
	return nil
}

func (c *wsConn) finish(s *stream) error {
	return c.writeJSON(s.done())
}

func (c *wsConn) write(kind int, b []byte) error {
	c.conn.SetWriteDeadline(time.Now().Add(c.a.WriteWait))
	return c.conn.WriteMessage(kind, b)
}

// chunkWait is how long a writer waits for a chunk token before writing
// without one. A chunk write to a client that reads takes well under a
// millisecond of CPU, so a wait this long means the tokens are held by
// writers blocked on clients that do not read; a short wait (20 ms) let
// most writers through untokened once the cores were merely busy.
const chunkWait = 200 * time.Millisecond

// acquireChunk takes a chunk token, waiting at most chunkWait; it reports
// whether it holds one.
func (a *API) acquireChunk() bool {
	select {
	case a.chunkSem <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(chunkWait)
	defer t.Stop()
	select {
	case a.chunkSem <- struct{}{}:
		return true
	case <-t.C:
		a.chunkUntokened.Add(1)
		return false
	}
}

// writeFrame writes a binary frame from its header and a body that is a
// slice of the shared encoding: gorilla copies it into the connection's
// (pooled) write buffer, so no connection holds a copy of a chunk.
func (c *wsConn) writeFrame(h [frameHeaderSize]byte, body []byte) error {
	c.conn.SetWriteDeadline(time.Now().Add(c.a.WriteWait))
	w, err := c.conn.NextWriter(websocket.BinaryMessage)
	if err != nil {
		return err
	}
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	return w.Close()
}

func (c *wsConn) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.write(websocket.TextMessage, b)
}

func (c *wsConn) ping() error {
	return c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.a.WriteWait))
}

// fail closes the connection; a client that does not keep up gets
// closeTooSlow so that it can tell this from a server error.
func (c *wsConn) fail(err error) {
	var ne net.Error
	code, text := websocket.CloseInternalServerErr, "internal error"
	if errors.Is(err, errTooSlow) || (errors.As(err, &ne) && ne.Timeout()) {
		code, text = closeTooSlow, "too slow"
	}
	// The TCP window may be full: the close frame is best effort.
	c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
}
