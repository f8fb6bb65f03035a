package server

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/txnindex"
)

// TestRoutes hits every route of routes.go over the demo catalog.
func TestRoutes(t *testing.T) {
	cat := diagnosing(demoCatalog(true))
	srv := httptest.NewServer(routes(cat, api.New(apiCatalog{cat}, loaderRecords{cat}, cat.diags)))
	defer srv.Close()
	p := "/sources/stuck-lso/partitions/demo-stuck-lso/0"
	for _, c := range []struct {
		path, want string
		code       int
	}{
		{"/healthz", "ok", 200},
		{"/", `data-testid="partition-link-big-demo-big-0"`, 200},
		{p, `data-testid="lane-6"`, 200},
		{"/sources/nope/partitions/t/0", "Not found", 404},
		{p + "/summary", `data-testid="summary-batches">`, 200},
		{"/sources/nope/partitions/t/0/summary", "Not found", 404},
		{"/api/v1/sources", `"id": "interleaved"`, 200},
		{"/api/v1/sources/spanning/partitions", `"last_stable_offset"`, 200},
		{"/api/v1" + p + "/decisions?isolation=read_uncommitted", `"decision":"delivered"`, 200},
		{"/api/v1" + p + "/batches/3", `"state": "open"`, 200},
		{"/api/v1/sources/interleaved/partitions/demo-interleaved/0/batches/11", `"control": "ABORT"`, 200},
		{"/api/v1/sources/interleaved/partitions/demo-interleaved/0/batches/2", `"key_text": "`, 200},
		{"/api/v1" + p + "/diagnosis", `"pinned_by": {`, 200},
		{"/api/v1" + p + "/batches/99", "no batch", 404},
		{"/static/js/timeline.js", "window.txnscope", 200},
		{"/static/css/app.css", "Okabe-Ito", 200},
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(string(b), c.want) {
			t.Errorf("GET %s: %d, want %d containing %q; got %.300s", c.path, resp.StatusCode, c.code, c.want, b)
		}
	}
	// The big demo is built on first request, not by demoCatalog.
	if big := cat.find("big", "demo-big", 0); big.built() != nil {
		t.Errorf("the 1M-batch demo was built before anyone asked")
	}

	// The websocket: meta first, done last with the API's count.
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/v1"+p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, first, err := c.ReadMessage()
	if err != nil || !strings.Contains(string(first), `"type":"meta"`) {
		t.Fatalf("first message %s (%v)", first, err)
	}
	var last []byte
	for !strings.Contains(string(last), `"type":"done"`) {
		if _, last, err = c.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}
	want := 0
	for range cat.find("stuck-lso", "demo-stuck-lso", 0).get().Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
		want++
	}
	resp, _ := http.Get(srv.URL + "/api/v1" + p + "/decisions")
	n := 0
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); n++ {
	}
	resp.Body.Close()
	if n != want || !strings.Contains(string(last), `"decisions":`+strconv.Itoa(want)) {
		t.Errorf("done %s; API %d lines; want %d", last, n, want)
	}
}

func TestCheckOrigin(t *testing.T) {
	for in, want := range map[string]string{"https://docs.example.com": "https://docs.example.com", "http://127.0.0.1:8081/": "http://127.0.0.1:8081"} {
		if got, err := checkOrigin(in); err != nil || got != want {
			t.Errorf("checkOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "docs.example.com", "ftp://x", "https://x/page", "https://x; script-src *", "https://x 'unsafe-inline'", "https://u@x"} {
		if _, err := checkOrigin(in); err == nil {
			t.Errorf("checkOrigin(%q) accepted", in)
		}
	}
}
