package server

// The server's limits: sizes refused at load, open-file, websocket,
// request-time, header and body limits.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/api"
)

// TestLimitsAtLoad: --max-sources refuses a --load with an error naming
// the path and the flag (exit 1); --max-source-bytes and
// --max-source-batches refuse to open a partition in full, loaded alone or
// of a log directory, when it is opened, never at start: its page then
// shows one segment's window (e2e/ui_segments_test.go) and says why; the
// defaults load it.
func TestLimitsAtLoad(t *testing.T) {
	dir := buildDemoDir(t)
	pdir := filepath.Join(dir, "demo-interleaved-0")
	n := len(demoCatalog(false).list())
	for _, c := range []struct {
		path string
		set  func(*Options)
		want string
	}{
		{dir, func(o *Options) { o.MaxSources = n }, fmt.Sprintf("--load %s brings the partitions served to %d, over --max-sources %d", dir, n+1, n)},
		{filepath.Join(pdir, "00000000000000000000.log"), func(o *Options) { o.MaxSourceBytes = 1000 }, fmt.Sprintf("--load %s: more than 1000 B of files, over --max-source-bytes (1000 B); raise the limit, or load a partition directory", filepath.Join(pdir, "00000000000000000000.log"))},
		{dir, func(o *Options) { o.MaxSources = 0 }, "--max-sources must be positive"},
		{dir, func(o *Options) { o.WSRate = -1 }, "--ws-rate must be positive"},
	} {
		if err := serveErr(t, loads(c.path), c.set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.want, err, c.want)
		}
	}
	// A partition over a limit, of a log directory or loaded alone,
	// starts and is drawn segment by segment, its page saying why.
	batches8 := func(o *Options) { o.MaxSourceBatches = 8 }
	bytes1000 := func(o *Options) { o.MaxSourceBytes = 1000 }
	for _, c := range []struct {
		path string
		set  func(*Options)
		want string
	}{
		{dir, batches8, "demo-interleaved-0 holds 9 batches, more than --max-source-batches (8) allows: not opened in full, so it is drawn one segment at a time: the timeline shows segment"},
		{dir, bytes1000, "B of files, more than --max-source-bytes (1000 B) allows: not opened in full, so it is drawn one segment at a time: the timeline shows segment"},
		{pdir, batches8, "demo-interleaved-0 holds 9 batches, more than --max-source-batches (8) allows: not opened in full, so it is drawn one segment at a time: the timeline shows segment"},
		{pdir, bytes1000, "B of files, more than --max-source-bytes (1000 B) allows: not opened in full, so it is drawn one segment at a time: the timeline shows segment"},
	} {
		s := startServe(t, loads(c.path), c.set)
		resp, body := do(t, "GET", s.url("/sources/load1/partitions/demo-interleaved/0"), nil)
		if resp.StatusCode == http.StatusFound { // to the last segment's window
			resp, body = do(t, "GET", s.url(resp.Header.Get("Location")), nil)
		}
		if resp.StatusCode != 200 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %s, page lacks %q", c.path, resp.Status, c.want)
		}
		s.stop(t)
	}
	s := startServe(t, loads(dir), func(o *Options) { o.MaxSources = n + 1; o.MaxSourceBatches = 9 })
	if resp, _ := do(t, "GET", s.url("/api/v1/sources/load1/partitions"), nil); resp.StatusCode != 200 {
		t.Errorf("at the limits: %s", resp.Status)
	}
}

// TestMaxOpenFiles: record decoding waits for one of --max-open-files
// slots and, when none frees before the request's context ends, says so.
func TestMaxOpenFiles(t *testing.T) {
	cat := diagnosing(demoCatalog(false))
	lr := newLimitedRecords(loaderRecords{cat}, 2)
	src := cat.find("interleaved", "demo-interleaved", 0)
	l := src.get()
	b := &l.Batches[1]
	if recs, err := lr.Records(context.Background(), "interleaved", l, b); err != nil || len(recs) == 0 {
		t.Fatalf("records: %v %v", recs, err)
	}
	lr.sem <- struct{}{} // two readers hold the slots
	lr.sem <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := lr.Records(ctx, "interleaved", l, b)
	if err == nil || !strings.Contains(err.Error(), "all 2 file slots (--max-open-files) stayed busy") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("all slots busy: %v", err)
	}
	<-lr.sem
	if recs, err := lr.Records(context.Background(), "interleaved", l, b); err != nil || len(recs) == 0 {
		t.Errorf("after a slot freed: %v %v", recs, err)
	}
}

// TestWebsocketLimits: a client message over --ws-max-message, or messages
// faster than --ws-rate allows, close the stream with 1008 and a reason
// naming the limit; messages within the limits are answered.
func TestWebsocketLimits(t *testing.T) {
	s := startServe(t, func(o *Options) { o.WSMaxMessage = 256; o.WSRate = 0.01; o.WSBurst = 3 })
	u := "ws://" + s.addr + "/ws/v1" + interleaved
	dial := func() *websocket.Conn {
		c, _, err := websocket.DefaultDialer.Dial(u, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		readUntilDone(t, c)
		return c
	}
	closeOf := func(c *websocket.Conn) *websocket.CloseError {
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				var ce *websocket.CloseError
				if !errors.As(err, &ce) {
					t.Fatalf("ended without a close frame: %v", err)
				}
				return ce
			}
		}
	}

	// Within the size limit: a bad command gets an error reply, not a close.
	c := dial()
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"viewport","from":5,"to":1,"pad":"`+strings.Repeat("x", 180)+`"}`))
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, m, err := c.ReadMessage(); err != nil || !strings.Contains(string(m), `viewport needs from \u003c= to`) {
		t.Errorf("reply: %s %v", m, err)
	}
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"viewport","from":0,"to":3,"pad":"`+strings.Repeat("x", 300)+`"}`))
	if ce := closeOf(c); ce.Code != websocket.ClosePolicyViolation || ce.Text != "message larger than 256 bytes" {
		t.Errorf("oversized message: close %d %q", ce.Code, ce.Text)
	}

	// A message of a megabyte: the same close, and memory stays bounded
	// (the reader never holds more than the limit).
	c = dial()
	c.WriteMessage(websocket.TextMessage, []byte(strings.Repeat(" ", 1<<20)))
	if ce := closeOf(c); ce.Code != websocket.ClosePolicyViolation {
		t.Errorf("1 MiB message: close %d %q", ce.Code, ce.Text)
	}

	// The rate: three messages pass (the burst), the fourth closes.
	c = dial()
	for range 6 {
		if c.WriteMessage(websocket.TextMessage, []byte(`{"type":"viewport","from":0,"to":3}`)) != nil {
			break
		}
	}
	if ce := closeOf(c); ce.Code != websocket.ClosePolicyViolation || ce.Text != "more than 0.01 messages per second" {
		t.Errorf("too fast: close %d %q", ce.Code, ce.Text)
	}
	if resp, _ := do(t, "GET", s.url("/healthz"), nil); resp.StatusCode != 200 {
		t.Errorf("server down: %s", resp.Status)
	}
}

// TestRequestTimeout: a handler that outlives --request-timeout is answered
// 503 naming the flag; the websocket stream is not cut by it.
func TestRequestTimeout(t *testing.T) {
	cat := diagnosing(demoCatalog(false))
	const d = 100 * time.Millisecond
	h := routesWith(cat, api.New(apiCatalog{cat}, loaderRecords{cat}, cat.diags), routeOptions{sec: &security{requestTimeout: d}})
	// A handler that never finishes on its own, for this test only.
	h.(chi.Router).Get("/test/stuck", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, body := do(t, "GET", srv.URL+"/test/stuck", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "request took longer than --request-timeout 100ms") {
		t.Errorf("stuck handler: %s %q", resp.Status, body)
	}
	if resp, _ := do(t, "GET", srv.URL+"/api/v1/sources", nil); resp.StatusCode != 200 {
		t.Errorf("a quick request: %s", resp.Status)
	}
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/v1"+interleaved, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	readUntilDone(t, c)
	// Well past the request timeout, the stream still answers commands.
	time.Sleep(5 * d)
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"options","isolation":"read_uncommitted"}`))
	readUntilDone(t, c)
}

// TestHeaderAndReadLimits: a header block over --max-header-bytes is
// answered 431; a client that never finishes its headers is disconnected
// after --read-timeout.
func TestHeaderAndReadLimits(t *testing.T) {
	s := startServe(t, func(o *Options) { o.MaxHeaderBytes = 4096; o.ReadTimeout = 300 * time.Millisecond })
	resp, _ := do(t, "GET", s.url("/healthz"), http.Header{"X-Big": {strings.Repeat("a", 16<<10)}})
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("16 KiB header: %s, want 431", resp.Status)
	}
	if resp, _ := do(t, "GET", s.url("/healthz"), http.Header{"X-Small": {strings.Repeat("a", 1000)}}); resp.StatusCode != 200 {
		t.Errorf("1 KB header: %s", resp.Status)
	}
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n") // and never the blank line
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	_, err = io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the server kept a connection with unfinished headers open for 60 s")
	}
}
