package guard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestRecover: a panicking handler is a 500 with the strict headers; net/http's
// own abort panic is passed on.
func TestRecover(t *testing.T) {
	h := Recover(Headers([]string{"https://docs.example.com"})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })))
	w := serve(h, httptest.NewRequest("GET", "/x?token=secret", nil))
	if w.Code != 500 || !strings.Contains(w.Body.String(), "internal error") ||
		!strings.HasSuffix(w.Header().Get("Content-Security-Policy"), "frame-ancestors 'self' https://docs.example.com") || w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%d %q %v", w.Code, w.Body, w.Header())
	}
	defer func() {
		if r := recover(); r != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler passed on", r)
		}
	}()
	serve(Recover(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })), httptest.NewRequest("GET", "/", nil))
}

// TestTimeout: a handler still running at the deadline that wrote nothing
// is answered 503 naming the setting; the websocket handshake gets no
// deadline.
func TestTimeout(t *testing.T) {
	var deadline bool
	h := Timeout(50*time.Millisecond, "--request-timeout")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, deadline = r.Context().Deadline()
		if !IsWebsocket(r) {
			<-r.Context().Done()
		}
	}))
	w := serve(h, httptest.NewRequest("GET", "/api/v1/sources", nil))
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "request took longer than --request-timeout 50ms") || !deadline {
		t.Errorf("%d %q", w.Code, w.Body)
	}
	serve(h, httptest.NewRequest("GET", "/ws/v1/sources/a/partitions/t/0", nil))
	if deadline {
		t.Error("the websocket stream got a deadline")
	}
}

// TestToken: a request needs the token as a bearer header or the session
// cookie; ?token= is traded for the cookie and removed from the URL.
func TestToken(t *testing.T) {
	const tok = "0123456789abcdef-token"
	h := NewToken(tok).Middleware(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	if w := serve(h, httptest.NewRequest("GET", "/", nil)); w.Code != 401 || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d", w.Code)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	if w := serve(h, r); w.Code != 200 {
		t.Errorf("bearer: %d", w.Code)
	}
	r.Header.Set("Authorization", "Bearer "+tok[:len(tok)-1])
	if w := serve(h, r); w.Code != 401 {
		t.Errorf("wrong bearer: %d", w.Code)
	}
	w := serve(h, httptest.NewRequest("GET", "/sources/a/partitions/t/0?token="+tok+"&step=2", nil))
	var cookie *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == SessionCookie {
			cookie = c
		}
	}
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/sources/a/partitions/t/0?step=2" || cookie == nil || !cookie.HttpOnly || strings.Contains(cookie.Value, tok) {
		t.Fatalf("?token=: %d %v %+v", w.Code, w.Header(), cookie)
	}
	r = httptest.NewRequest("GET", "/", nil)
	r.AddCookie(cookie)
	if w := serve(h, r); w.Code != 200 {
		t.Errorf("cookie: %d", w.Code)
	}
	if w := serve(h, httptest.NewRequest("GET", "/?token=nope", nil)); w.Code != 401 {
		t.Errorf("wrong ?token=: %d", w.Code)
	}
}

// TestSameOrigin: a browser's cross-site POST is refused with a JSON 403;
// the same site, an allowed origin and a script (no browser headers) pass.
func TestSameOrigin(t *testing.T) {
	h := SameOrigin([]string{"https://docs.example.com"})(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(201) }))
	for _, c := range []struct {
		hdr  map[string]string
		want int
	}{
		{map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403},
		{map[string]string{"Sec-Fetch-Site": "same-origin"}, 201},
		{map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://docs.example.com"}, 201},
		{nil, 201},
	} {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8080/api/v1/uploads?name=x.log", nil)
		for k, v := range c.hdr {
			r.Header.Set(k, v)
		}
		w := serve(h, r)
		if w.Code != c.want || (c.want == 403 && !strings.Contains(w.Body.String(), `"code":403`)) {
			t.Errorf("%v: %d %q, want %d", c.hdr, w.Code, w.Body, c.want)
		}
	}
}

// TestHosts (DNS rebinding): loopback names, the
// --addr host and the allowed origins' hosts pass; a rebinding page's own
// name is refused with 421 and a sentence naming what is accepted.
func TestHosts(t *testing.T) {
	h := Hosts("txnscope.lan", []string{"https://docs.example.com"})(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	for host, want := range map[string]int{
		"127.0.0.1:8080": 200, "localhost:8080": 200, "LOCALHOST.": 200, "[::1]:8080": 200, "127.0.0.2": 200,
		"app.localhost:1": 200, "txnscope.lan:8080": 200, "docs.example.com": 200, "": 200,
		"evil.example:8080": 421, "evil.example": 421, "127.0.0.1.evil.example": 421, "10.0.0.1:8080": 421,
		"docs.example.com.evil.example": 421, "[::2]:80": 421,
	} {
		r := httptest.NewRequest("GET", "/api/v1/sources", nil)
		r.Host = host
		w := serve(h, r)
		if w.Code != want {
			t.Errorf("Host %q: %d, want %d", host, w.Code, want)
		}
		if want == 421 && !strings.Contains(w.Body.String(), "is not a name of this server") {
			t.Errorf("Host %q: body %q", host, w.Body)
		}
	}
}
