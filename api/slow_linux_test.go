//go:build linux

package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/txnscope/txnscope/view"
)

// smallBufDialer dials with a tiny receive buffer, so that the stream
// cannot hide in the kernel.
var smallBufDialer = websocket.Dialer{NetDialContext: (&net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
	return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
}}).DialContext}

// smallSendListener gives each accepted connection a 4 KiB send buffer.
type smallSendListener struct{ net.Listener }

func (l smallSendListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestStreamViewportReprioritises: a viewport message in mid-stream sends
// the chunks under it next, ahead of the ones in offset order.
//
// The server's side of the socket gets a small send buffer too: with the
// kernel's autotuned one (megabytes on loopback) thousands of chunks were
// already in flight when the viewport arrived on a loaded machine, and
// which came first said more about the scheduler than about the stream.
func TestStreamViewportReprioritises(t *testing.T) {
	l := large(100_000)
	a := New(fakeCatalog{"large": l}, nil, view.NewDiagnoser())
	a.ChunkSize = 16
	mux := http.NewServeMux()
	mux.Handle("GET /ws/v1/sources/{id}/partitions/{topic}/{partition}", a.Stream())
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener = smallSendListener{srv.Listener}
	srv.Start()
	t.Cleanup(func() { a.Shutdown(); srv.Close() })
	c, _, err := smallBufDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/v1/sources/large/partitions/big/0?from=0&to=10", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	meta := readMsg(t, c).text
	nChunks := int(meta["totals"].(map[string]any)["chunks"].(float64))
	seen := 0
	for seen < 3 {
		if m := readMsg(t, c); m.kind == frameDecisions {
			seen++
		}
	}
	end := l.LogEndOffset
	c.WriteJSON(map[string]any{"type": "viewport", "from": end - 20, "to": end})
	for {
		m := readMsg(t, c)
		if m.kind != frameDecisions {
			continue
		}
		seen++
		if last := m.recs[len(m.recs)-1]; last.To >= end-20 {
			t.Logf("the last chunk, under the new viewport, arrived %d of %d", seen, nChunks)
			if seen > nChunks/10 {
				t.Errorf("the viewport's chunk came %d of %d: not reprioritised", seen, nChunks)
			}
			return
		}
	}
}

// TestStreamSlowClientClosed: a client that stops reading is closed once a
// write has waited WriteWait, with close code 4000 when the frame gets
// through, and the server forgets it.
func TestStreamSlowClientClosed(t *testing.T) {
	srv, a := server(t, fakeCatalog{"large": large(100_000)}, nil, func(a *API) { a.WriteWait = 300 * time.Millisecond })
	c, _, err := smallBufDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/v1/sources/large/partitions/big/0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for a.Streams() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("server still streams to a client that does not read (%d open)", a.Streams())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Draining what was buffered ends in the close (4000 if its frame got
	// through, else an abrupt close): never in more data forever.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, _, err = c.ReadMessage(); err != nil {
			break
		}
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		t.Logf("closed with %d %q", ce.Code, ce.Text)
		if ce.Code != closeTooSlow && ce.Code != websocket.CloseAbnormalClosure {
			t.Errorf("close code %d, want %d", ce.Code, closeTooSlow)
		}
	} else {
		t.Logf("connection ended with %v", err)
	}
}
