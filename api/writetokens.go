package api

// Chunk write tokens. The websocket writers send decision chunks holding
// one of 2×GOMAXPROCS tokens (API.chunkSem), so that 200 streams do not
// split the cores 200 ways while an API request waits behind them. A token
// bounds CPU work only: a write that blocks because its client does not
// read gives its token back and waits on without it. Before, a writer
// blocked on a client that never reads kept its token until WriteWait
// (10 s), so four such clients (2×GOMAXPROCS on two cores) made every other
// chunk wait chunkWait for a token: a 1M-decision stream took 8 s instead
// of 0.09 s, a 9-decision one 201 ms instead of 0.24 ms.

import (
	"bufio"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// chunkWait is how long a writer waits for a chunk token before writing
// without one. A token is held for one chunk's copy into the socket, well
// under a millisecond of CPU, and at most tokenWriteWait more on a client
// that stalls; a wait this long means the cores are saturated, and then
// writing without a token is the lesser harm. A short wait (20 ms) let most
// writers through untokened once the cores were merely busy.
const chunkWait = 200 * time.Millisecond

// tokenWriteWait is the longest a write blocks while its writer holds a
// chunk token. A chunk (ChunkSize records of 40 bytes, 160 KiB by default)
// goes into a socket with room for it in tens of microseconds; a write
// still blocked after this waits on its client (or the scheduler), not on
// the CPU the tokens bound, and giving the token back costs one more write
// call. It is also the longest another stream can wait for a token that
// clients not reading hold: at 10 ms, four of them (each taking a token
// again when its send buffer grew) delayed a 9-decision stream of ~1.5 ms
// by up to 10 ms.
const tokenWriteWait = 2 * time.Millisecond

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

// tokenConn is a websocket's socket as gorilla writes to it. While its
// writer holds a chunk token, a write that blocks for tokenWriteWait gives
// the token back and goes on without it until the deadline gorilla set
// (WriteWait): a slow client then slows only its own stream. The rest of
// net.Conn passes through.
//
// gorilla serialises every write and write deadline of a connection under
// its write lock (the writer's messages, WriteControl from the reader), so
// deadline needs no lock of its own; held is atomic because hold and
// release run outside that lock.
type tokenConn struct {
	net.Conn
	a        *API
	held     atomic.Bool // the writer holds one of a.chunkSem's tokens
	deadline time.Time   // the write deadline gorilla set; zero for none
	// resumable: a write cut by a deadline can go on where it stopped, as
	// net.Conn's contract has it (n > 0 bytes written, then the error).
	// Not for crypto/tls, whose state a write timeout corrupts: there a
	// token is held for the whole write.
	resumable bool
}

// hold records that the writer took a token (ok), which release gives back.
func (t *tokenConn) hold(ok bool) { t.held.Store(ok) }

// release gives the writer's token back, once, if it still holds it.
func (t *tokenConn) release() {
	if t.held.CompareAndSwap(true, false) {
		<-t.a.chunkSem
	}
}

func (t *tokenConn) SetDeadline(d time.Time) error {
	t.deadline = d
	return t.Conn.SetDeadline(d)
}

func (t *tokenConn) SetWriteDeadline(d time.Time) error {
	t.deadline = d
	return t.Conn.SetWriteDeadline(d)
}

// Write writes b within the deadline gorilla set; holding a token, the
// first tokenWriteWait of it only, then without the token.
func (t *tokenConn) Write(b []byte) (int, error) {
	if !t.held.Load() || !t.resumable {
		return t.Conn.Write(b)
	}
	short := time.Now().Add(tokenWriteWait)
	if !t.deadline.IsZero() && !short.Before(t.deadline) {
		return t.Conn.Write(b) // gorilla's own deadline comes first
	}
	t.Conn.SetWriteDeadline(short)
	n, err := t.Conn.Write(b)
	t.Conn.SetWriteDeadline(t.deadline)
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return n, err
	}
	// The client is not taking the bytes: wait for it without the token.
	t.release()
	t.a.chunkReleased.Add(1)
	m, err := t.Conn.Write(b[n:])
	return n + m, err
}

// hijacker hands gorilla's Upgrade the hijacked connection wrapped in tc.
type hijacker struct {
	http.ResponseWriter
	tc *tokenConn
}

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	_, isTLS := nc.(*tls.Conn)
	h.tc.Conn, h.tc.resumable = nc, !isTLS
	return h.tc, rw, nil
}
