package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/txnscope/txnscope/txnindex"
)

// TestPrewarmSharesTheStreamsEncoding serves a page route wrapped in
// Prewarm: the page view computes the encoding of the options in its URL
// in the background, and the websocket the page then opens with the same
// options (spelled as the page's script spells them) uses that encoding
// instead of computing another.
func TestPrewarmSharesTheStreamsEncoding(t *testing.T) {
	l := large(50_000)
	srv, a := server(t, fakeCatalog{"large": l}, nil, nil)
	page := httptest.NewServer(func() http.Handler {
		mux := http.NewServeMux()
		mux.Handle("GET /sources/{id}/partitions/{topic}/{partition}", a.Prewarm(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})))
		return mux
	}())
	defer page.Close()

	waitFills := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for a.cache.fills.Load() < want || a.warming.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("%d encodings after the page view, want %d", a.cache.fills.Load(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	count := func(o txnindex.ConsumeOptions) int {
		n := 0
		for range l.Decisions(o) {
			n++
		}
		return n
	}

	for i, c := range []struct {
		page, ws string
		o        txnindex.ConsumeOptions
	}{
		// The page's default URL; the script sends every option.
		{"", "?isolation=read_committed&position=-1&max_bytes=1048576&variant=java&from=0&to=100",
			txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: txnindex.DefaultMaxBytes}},
		{"?isolation=read_uncommitted&position=7", "?isolation=read_uncommitted&position=7&max_bytes=1048576&variant=java",
			txnindex.ConsumeOptions{From: 7, Isolation: txnindex.ReadUncommitted, MaxBytes: txnindex.DefaultMaxBytes}},
	} {
		resp, err := http.Get(page.URL + "/sources/large/partitions/big/0" + c.page)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		waitFills(int64(i + 1))
		if err := streamToDone(srv.URL+"/ws/v1/sources/large/partitions/big/0"+c.ws, count(c.o)); err != nil {
			t.Fatal(err)
		}
		if f := a.cache.fills.Load(); f != int64(i+1) {
			t.Errorf("page %q then stream %q: %d encodings, want %d (the stream did not use the prewarmed one)", c.page, c.ws, f, i+1)
		}
	}

	// A page of an unknown partition or with bad options warms nothing.
	for _, q := range []string{"/sources/nope/partitions/big/0", "/sources/large/partitions/big/x", "/sources/large/partitions/big/0?isolation=bogus"} {
		resp, err := http.Get(page.URL + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	waitFills(2)
	if f := a.cache.fills.Load(); f != 2 {
		t.Errorf("bad page URLs computed %d encodings", f-2)
	}
}
