package api

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/txnindex"
	"golang.org/x/time/rate"
)

const (
	// Time allowed to write one message to the peer. A client that stops
	// reading fills its TCP window and the next write times out after this:
	// the connection is then closed with closeTooSlow. Meanwhile it holds
	// no chunk token (writetokens.go), so it delays no other stream.
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
		// gorilla writes to the hijacked connection through tc, which
		// gives a chunk token back when a write blocks on the client.
		tc := &tokenConn{a: a}
		conn, err := upgrader.Upgrade(hijacker{w, tc}, r, nil)
		if err != nil {
			return nil // Upgrade has replied
		}
		a.active.Add(1)
		defer a.active.Add(-1)
		c := &wsConn{a: a, conn: conn, tc: tc, id: id, l: l, opts: o, vp: vp,
			wake: make(chan struct{}, 1), send: make(chan []byte, sendQueue), readDone: make(chan struct{})}
		unsub := func() {}
		if _, seg, _ := segmentOf(r); !seg {
			// Live partitions (live.go); a segment's window does not change.
			c.changed, unsub = a.subscribe(id, l)
		}
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
	tc   *tokenConn // the socket under conn
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
	// A chunk is written holding one of a few tokens (writetokens.go): 200
	// writers all runnable would each get a 1/200 share of the cores and an
	// API request's goroutine would queue behind them for seconds. The
	// deadline covers only the write, not the wait for a token, and a
	// write that blocks on its client gives the token back.
	c.tc.hold(c.a.acquireChunk())
	err := c.writeFrame(s.chunkFrame(k))
	c.tc.release()
	if err != nil {
		return err
	}
	phase, txnsDue := s.chunkSent(k)
	if err := c.writeJSON(progressMsg(s.gen, phase, s.nSent, s.nChunks, k)); err != nil {
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
	b, err := jsonid.Marshal(v)
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
