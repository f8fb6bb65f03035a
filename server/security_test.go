package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"
	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/guard"
	"github.com/txnscope/txnscope/internal/testfixture"
	"golang.org/x/net/html"
)

// served is a real server started as `txnscope serve` runs it (New, then
// Run) on a loopback port.
type served struct {
	addr      string
	out, errb *syncBuffer
	proc      *testfixture.Serving
}

// startServe runs a server with serve's default options, changed by set,
// and waits until it listens. The demos are loaded; the 1M-batch one is
// left out unless set asks for it. Its exit code, as the command's, is 0
// when Run ends without error, else 1 (the error on errb).
func startServe(t *testing.T, set ...func(*Options)) *served {
	t.Helper()
	s := &served{out: &syncBuffer{}, errb: &syncBuffer{}}
	o := testOptions(set...)
	o.Stdout, o.Stderr = s.out, s.errb
	s.proc = testfixture.StartServing(t, s.errb, func(ctx context.Context, ready func(string)) int {
		o.Listening = ready
		srv, err := New(ctx, o)
		if err == nil {
			err = srv.Run(ctx)
		}
		if err != nil {
			fmt.Fprintf(s.errb, "txnscope serve: %v\n", err)
			return 1
		}
		return 0
	})
	s.addr = s.proc.Addr
	return s
}

// loads is the Options change of `--load PATH` for each path.
func loads(paths ...string) func(*Options) {
	return func(o *Options) { o.Loads = append(o.Loads, paths...) }
}

func (s *served) stop(t *testing.T) int { return s.proc.Stop(t) }

func (s *served) url(p string) string { return "http://" + s.addr + p }

// captureLog sends slog's default logger to a buffer for the test.
func captureLog(t *testing.T) *syncBuffer {
	t.Helper()
	b := &syncBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(b, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return b
}

// buildDemoDir writes the interleaved demo scenario as a real log directory.
func buildDemoDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "logs")
	writeScenario(t, "../scenario/demos/interleaved.txn", dir)
	return dir
}

const interleaved = "/sources/interleaved/partitions/demo-interleaved/0"

// TestListenPublic: a non-loopback --addr is refused without
// --listen-public, and warned about with it.
func TestListenPublic(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		err := serveErr(t, func(o *Options) { o.Addr = addr })
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--listen-public") {
			t.Errorf("--addr %s without --listen-public: %v, want the caller's mistake naming the flag", addr, err)
		}
	}
	s := startServe(t, func(o *Options) { o.Addr = "0.0.0.0:0"; o.ListenPublic = true })
	if !strings.Contains(s.errb.String(), "warning: listening on 0.0.0.0:0, reachable from other machines, WITHOUT a token") {
		t.Errorf("no warning for a public listener: %q", s.errb.String())
	}
	_, port, _ := net.SplitHostPort(s.addr)
	if resp, _ := do(t, "GET", "http://127.0.0.1:"+port+"/healthz", nil); resp.StatusCode != 200 {
		t.Errorf("public listener: %s", resp.Status)
	}
	// localhost and loopback literals need no flag.
	for _, addr := range []string{"localhost:0", "[::1]:0", "127.0.0.2:0"} {
		if public, err := isPublic(addr); public || err != nil {
			t.Errorf("isPublic(%s) = %v, %v", addr, public, err)
		}
	}
}

// TestAuthToken: with --auth-token-file every route and the websocket
// need the token (header or the cookie from a ?token= login), the login
// redirect strips the token, and the token appears in no log, page or header.
func TestAuthToken(t *testing.T) {
	logs := captureLog(t)
	const token = "s3cret-t0ken-abcdefghij"
	tf := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tf, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, func(o *Options) { o.AuthTokenFile = tf })
	var seen strings.Builder // everything the server said, to search for the token
	record := func(resp *http.Response, body string) {
		seen.WriteString(body)
		for k, v := range resp.Header {
			seen.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
	}
	routes := []string{"/", interleaved, "/embed/interleaved/demo-interleaved/0", "/api/v1/sources",
		"/api/v1" + interleaved + "/decisions", "/static/js/timeline.js", "/healthz", "/nope"}
	for _, p := range routes {
		for _, h := range []http.Header{nil, {"Authorization": {"Bearer wrong-token-0123456789"}}, {"Authorization": {"Basic " + token}},
			{"Cookie": {guard.SessionCookie + "=" + token}}} {
			resp, body := do(t, "GET", s.url(p), h)
			record(resp, body)
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("GET %s with %v: %s, want 401", p, h, resp.Status)
			}
		}
		resp, body := do(t, "GET", s.url(p), http.Header{"Authorization": {"Bearer " + token}})
		record(resp, body)
		if want := map[bool]int{true: 404, false: 200}[p == "/nope"]; resp.StatusCode != want {
			t.Errorf("GET %s with the token: %s, want %d", p, resp.Status, want)
		}
	}
	if resp, body := do(t, "GET", s.url(interleaved+"?token=wrong-token-0123456789"), nil); resp.StatusCode != 401 {
		t.Errorf("login with a wrong token: %s", resp.Status)
	} else {
		record(resp, body)
	}

	// The browser login: ?token= sets the cookie and redirects without it,
	// keeping the rest of the query.
	resp, body := do(t, "GET", s.url(interleaved+"?isolation=read_uncommitted&token="+token), nil)
	record(resp, body)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || loc != interleaved+"?isolation=read_uncommitted" {
		t.Fatalf("login: %s, Location %q", resp.Status, loc)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == guard.SessionCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value == token {
		t.Fatalf("session cookie %+v", cookie)
	}
	ch := http.Header{"Cookie": {cookie.String()}}
	resp, body = do(t, "GET", s.url(loc), ch)
	record(resp, body)
	if resp.StatusCode != 200 || !strings.Contains(body, `data-testid="timeline"`) {
		t.Errorf("page with the cookie: %s", resp.Status)
	}

	// The websocket: refused without, served with the header or the cookie.
	wsURL := "ws://" + s.addr + "/ws/v1" + interleaved
	if _, r, err := websocket.DefaultDialer.Dial(wsURL, nil); err == nil || r == nil || r.StatusCode != 401 {
		t.Errorf("websocket without the token: %v %v", err, r)
	}
	for _, h := range []http.Header{{"Authorization": {"Bearer " + token}}, ch} {
		c, _, err := websocket.DefaultDialer.Dial(wsURL, h)
		if err != nil {
			t.Fatalf("websocket with %v: %v", h, err)
		}
		readUntilDone(t, c)
		c.Close()
	}

	s.stop(t)
	all := seen.String() + s.out.String() + s.errb.String() + logs.String()
	if strings.Contains(all, token) {
		t.Errorf("the token appears in a response, header or log")
	}
	if strings.Contains(all, "wrong-token-0123456789") {
		t.Errorf("a presented token is echoed back or logged")
	}

	// A token file others can read is warned about; a short one refused.
	loose := filepath.Join(t.TempDir(), "loose")
	os.WriteFile(loose, []byte(token), 0o644)
	s2 := startServe(t, func(o *Options) { o.AuthTokenFile = loose })
	if !strings.Contains(s2.errb.String(), "readable by other users") {
		t.Errorf("no warning for a 0644 token file: %q", s2.errb.String())
	}
	short := filepath.Join(t.TempDir(), "short")
	os.WriteFile(short, []byte("abc"), 0o600)
	var ue *UsageError
	if err := serveErr(t, func(o *Options) { o.AuthTokenFile = short }); err == nil || errors.As(err, &ue) || strings.Contains(err.Error(), "abc") || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("short token: %v", err)
	}
}

// readUntilDone reads a stream to its done message and returns it.
func readUntilDone(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		_, m, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("stream ended before done: %v", err)
		}
		if strings.Contains(string(m), `"type":"done"`) {
			return string(m)
		}
	}
}

// TestSecurityHeaders: every response carries the strict headers, the CSP
// allows no inline script, and no served page holds an inline script or an
// on* handler attribute.
func TestSecurityHeaders(t *testing.T) {
	s := startServe(t, func(o *Options) { o.AllowedOrigins = append(o.AllowedOrigins, "https://docs.example.com") })
	for _, p := range []string{"/", interleaved, "/embed/interleaved/demo-interleaved/0", "/sources/stuck-lso/partitions/demo-stuck-lso/0",
		"/api/v1/sources", "/api/v1" + interleaved + "/decisions", "/api/v1" + interleaved + "/batches/2", "/static/js/timeline.js",
		"/static/css/app.css", "/healthz", "/nope", "/api/v1/sources/nope/partitions"} {
		resp, body := do(t, "GET", s.url(p), nil)
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		var scriptSrc string
		for _, d := range strings.Split(csp, ";") {
			if f := strings.Fields(d); len(f) > 0 && f[0] == "script-src" {
				scriptSrc = strings.Join(f[1:], " ")
			}
		}
		if scriptSrc != "'self'" || !strings.Contains(csp, "default-src 'none'") || !strings.HasSuffix(csp, "frame-ancestors 'self' https://docs.example.com") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cross-Origin-Opener-Policy") != "same-origin" {
			t.Errorf("%s: headers %v", p, h)
		}
		if strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			for _, bad := range inlineCode(body) {
				t.Errorf("%s: %s", p, bad)
			}
		}
	}
}

// inlineCode lists the inline scripts and on* attributes of an HTML page.
func inlineCode(page string) []string {
	var bad []string
	z := html.NewTokenizer(strings.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return bad
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			hasSrc, isJSON := false, false
			for _, a := range tok.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					bad = append(bad, fmt.Sprintf("<%s %s=%q>", tok.Data, a.Key, a.Val))
				}
				if strings.HasPrefix(strings.TrimSpace(strings.ToLower(a.Val)), "javascript:") {
					bad = append(bad, fmt.Sprintf("<%s %s=%q>", tok.Data, a.Key, a.Val))
				}
				hasSrc = hasSrc || a.Key == "src"
				isJSON = isJSON || (a.Key == "type" && a.Val == "application/json")
			}
			if tok.Data == "script" && !hasSrc && !isJSON {
				bad = append(bad, "inline <script>")
			}
		}
	}
}

// TestInlineCodeDetector: the page check above finds what it looks for.
func TestInlineCodeDetector(t *testing.T) {
	page := `<form onsubmit="return false"><script>alert(1)</script><a href="javascript:x()">x</a><script src="/a.js"></script>`
	if got := inlineCode(page); len(got) != 3 {
		t.Errorf("found %q, want the onsubmit, the inline script and the javascript: link", got)
	}
}

// TestWebsocketOrigin: a handshake from another origin is refused (403);
// one from the server's own origin or without Origin (not a browser) is
// served.
func TestWebsocketOrigin(t *testing.T) {
	s := startServe(t)
	u := "ws://" + s.addr + "/ws/v1" + interleaved
	for _, o := range []string{"http://evil.example", "http://" + s.addr + ".evil.example", "null"} {
		_, r, err := websocket.DefaultDialer.Dial(u, http.Header{"Origin": {o}})
		if err == nil || r == nil || r.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %s: %v %v, want 403", o, err, r)
		}
	}
	for _, h := range []http.Header{{"Origin": {"http://" + s.addr}}, nil} {
		c, _, err := websocket.DefaultDialer.Dial(u, h)
		if err != nil {
			t.Fatalf("Origin %v: %v", h, err)
		}
		readUntilDone(t, c)
		c.Close()
	}
}

// rawGet sends a request line byte for byte (no client-side cleaning or
// escaping) and returns the status code and body.
func rawGet(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %q: %v", target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPathTraversal: no route that names a source, partition or file can
// be made to read outside what was loaded. A canary file sits next to the
// loaded directory and in its partition directory; every attempt is
// answered 4xx without it, and the server stays up.
func TestPathTraversal(t *testing.T) {
	dir := buildDemoDir(t)
	const canary = "CANARY-f00dfeed"
	os.WriteFile(filepath.Join(filepath.Dir(dir), "secret.txt"), []byte(canary), 0o600)
	os.WriteFile(filepath.Join(dir, "demo-interleaved-0", "secret.txt"), []byte(canary), 0o600)
	s := startServe(t, loads(dir))
	// The loaded source serves normally.
	if code, body := rawGet(t, s.addr, "/api/v1/sources/load1/partitions/demo-interleaved/0/batches/2"); code != 200 || !strings.Contains(body, `"key_text"`) {
		t.Fatalf("loaded source: %d %.200s", code, body)
	}
	var attempts []string
	for _, dots := range []string{"..", "%2e%2e", "%2E%2E", ".%2e", "..%00", "%c0%ae%c0%ae"} {
		for _, sep := range []string{"/", "%2f", "%2F", "%5c", "\\"} {
			up := dots + sep + dots + sep
			attempts = append(attempts,
				"/static/"+up+"secret.txt",
				"/static/js/"+up+up+"secret.txt",
				"/sources/load1"+sep+up+"secret.txt/partitions/demo-interleaved/0",
				"/sources/"+up+"load1/partitions/demo-interleaved/0",
				"/embed/"+up+"secret.txt/demo-interleaved/0",
				"/api/v1/sources/"+up+"secret.txt/partitions",
				"/api/v1/sources/load1/partitions/"+up+"secret.txt/0/decisions",
				"/api/v1/sources/load1/partitions/demo-interleaved/"+up+"0/batches/2",
				"/api/v1/sources/load1/partitions/demo-interleaved-0"+sep+"secret.txt/0/diagnosis",
				"/ws/v1/sources/load1/partitions/"+up+"secret.txt/0",
			)
		}
	}
	for _, abs := range []string{filepath.Join(dir, "demo-interleaved-0"), filepath.Join(filepath.Dir(dir), "secret.txt"), "/etc/passwd"} {
		esc := strings.ReplaceAll(abs, "/", "%2F")
		attempts = append(attempts, "/static/"+abs, "/static"+abs, "/sources/"+esc+"/partitions/demo-interleaved/0",
			"/api/v1/sources/"+esc+"/partitions", "/api/v1/sources/load1/partitions/"+esc+"/0/decisions",
			"/api/v1/sources/load1%00/partitions/demo-interleaved/0/decisions", "/static/js/timeline.js%00.txt", "/static/%00/etc/passwd",
			"http://"+s.addr+"/static/../../secret.txt")
	}
	for _, a := range attempts {
		code, body := rawGet(t, s.addr, a)
		if code < 400 || code >= 500 {
			t.Errorf("GET %s: %d, want a 4xx", a, code)
		}
		if strings.Contains(body, canary) || strings.Contains(body, "root:x:0:0") {
			t.Errorf("GET %s: answered with a file outside the loaded data", a)
		}
	}
	if resp, _ := do(t, "GET", s.url("/healthz"), nil); resp.StatusCode != 200 {
		t.Errorf("server down after the attempts: %s", resp.Status)
	}
	t.Logf("%d traversal attempts refused", len(attempts))
}

// TestPanicRecovered: a handler that panics is answered 500, the panic is
// logged with the request path, and the server goes on serving.
func TestPanicRecovered(t *testing.T) {
	logs := captureLog(t)
	cat := diagnosing(demoCatalog(false))
	h := routesWith(cat, api.New(apiCatalog{cat}, loaderRecords{cat}, cat.diags), routeOptions{})
	// A route that panics, added for this test only; it runs behind the
	// same middleware stack as every real route.
	h.(chi.Router).Get("/test/panic/{what}", func(http.ResponseWriter, *http.Request) { panic("boom: handler bug") })
	srv := httptest.NewServer(h)
	defer srv.Close()
	for range 3 {
		resp, body := do(t, "GET", srv.URL+"/test/panic/once?token=do-not-log-me", nil)
		if resp.StatusCode != 500 || !strings.Contains(body, "internal error") || strings.Contains(body, "boom") {
			t.Errorf("panic: %s %q", resp.Status, body)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("the 500 lacks the security headers")
		}
		if resp, _ := do(t, "GET", srv.URL+"/healthz", nil); resp.StatusCode != 200 {
			t.Errorf("server down after a panic: %s", resp.Status)
		}
	}
	l := logs.String()
	if !strings.Contains(l, "path=/test/panic/once") || !strings.Contains(l, `panic="boom: handler bug"`) || !strings.Contains(l, "security_test.go") {
		t.Errorf("log lacks the path, the panic or its stack: %s", l)
	}
	if strings.Contains(l, "do-not-log-me") {
		t.Errorf("the query (which may hold ?token=) was logged")
	}
}

// TestSecurityHostHeader: a DNS-rebinding page reaches
// the loopback server with its own name in Host (and a matching Origin):
// refused with 421 on every route, websocket included; the loopback names
// and the --allowed-origin hosts pass. --listen-public turns it off.
func TestSecurityHostHeader(t *testing.T) {
	s := startServe(t, func(o *Options) { o.AllowedOrigins = append(o.AllowedOrigins, "https://docs.example.com") })
	get := func(host, path string, hdr http.Header) (int, string) {
		req, err := http.NewRequest("GET", s.url(path), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := (&http.Client{CheckRedirect: testfixture.NoRedirect, Timeout: 60 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, port, _ := net.SplitHostPort(s.addr)
	ws := http.Header{"Upgrade": {"websocket"}, "Connection": {"Upgrade"}, "Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	for _, path := range []string{"/", "/api/v1/sources", "/api/v1" + interleaved + "/decisions"} {
		code, body := get("rebind.evil.example:"+port, path, http.Header{"Origin": {"http://rebind.evil.example:" + port}})
		if code != http.StatusMisdirectedRequest || !strings.Contains(body, "is not a name of this server") {
			t.Errorf("GET %s with a foreign Host: %d %q", path, code, body)
		}
		for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "docs.example.com"} {
			if code, _ := get(host, path, nil); code != 200 {
				t.Errorf("GET %s with Host %s: %d", path, host, code)
			}
		}
	}
	if code, _ := get("rebind.evil.example:"+port, "/ws/v1"+interleaved, ws); code != http.StatusMisdirectedRequest {
		t.Errorf("websocket with a foreign Host: %d", code)
	}
	s.stop(t)

	pub := startServe(t, func(o *Options) { o.Addr = "127.0.0.1:0"; o.ListenPublic = true })
	s = pub
	if code, _ := get("rebind.evil.example", "/api/v1/sources", nil); code != 200 {
		t.Errorf("--listen-public: a foreign Host got %d", code)
	}
	pub.stop(t)
}
