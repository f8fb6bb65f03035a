// Package guard is the HTTP hardening every route of the server runs
// behind: panic recovery, strict response headers and the Content Security
// Policy, a bearer token traded for a session cookie, a per-request
// timeout that spares the websocket stream, and the same-origin check of
// state-changing requests. Each is a plain func(http.Handler) http.Handler.
package guard

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// SameOrigin refuses a state-changing request a browser sends from another
// site: without it any page a person visits could POST to this loopback
// server (CSRF). net/http's CrossOriginProtection decides from
// Sec-Fetch-Site, or from Origin against Host; requests with neither
// (curl, scripts) pass, as they carry no ambient credentials of a
// browser. The allowed origins (serve --allowed-origin), trusted to embed
// the pages, are trusted here too; each must be a valid origin
// (scheme://host[:port]), else SameOrigin panics.
func SameOrigin(allowed []string) func(http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	for _, o := range allowed {
		if err := cop.AddTrustedOrigin(o); err != nil {
			panic("checked origin refused: " + err.Error())
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		json.NewEncoder(w).Encode(map[string]any{"error": "cross-origin request refused: only pages of this server (and --allowed-origin) may upload", "code": http.StatusForbidden})
	}))
	return cop.Handler
}

// Recover answers a panicking handler with 500 and logs the panic with the
// request's method and path (never its query, which may hold ?token=) and
// the stack; the server goes on serving. http.ErrAbortHandler is net/http's
// own "abort this response" panic and is passed on, as net/http expects.
func Recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		defer func() {
			rec := recover()
			if rec == nil {
				return
			}
			if rec == http.ErrAbortHandler {
				panic(rec)
			}
			slog.Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(rec), "stack", string(debug.Stack()))
			// A hijacked (websocket) connection or a response already
			// under way cannot take a status any more.
			if ww.Status() == 0 && !IsWebsocket(r) {
				http.Error(ww, "internal error", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(ww, r)
	})
}

// IsWebsocket tells the decision stream (or any websocket handshake) from
// the requests a timeout or a 500 page applies to.
func IsWebsocket(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/ws/") || strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// ContentSecurityPolicy is the policy of every response. Scripts come only
// from /static (no inline script, no eval: the templ pages hold none, and
// the export page, which inlines its script, is a file opened from file://
// and never served). Inline style attributes stay allowed because the
// timeline positions markers and axis ticks with them; they cannot run
// code. connect-src 'self' covers the websocket (CSP3 matches ws: for the
// page's own host). frame-ancestors is 'self' plus origins, the sites
// allowed to embed the pages.
func ContentSecurityPolicy(origins []string) string {
	return "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; object-src 'none'; " +
		"frame-ancestors " + strings.Join(append([]string{"'self'"}, origins...), " ")
}

// FrameAncestors sets Content-Security-Policy: frame-ancestors 'self' and
// the allowed origins.
func FrameAncestors(origins []string) func(http.Handler) http.Handler {
	v := ContentSecurityPolicy(origins)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", v)
			next.ServeHTTP(w, r)
		})
	}
}

// Headers sets the strict headers on every response.
// Cross-Origin-Opener-Policy same-origin severs window.opener links to other
// origins; it does not affect being framed (that is frame-ancestors), so the
// embed route keeps working. No X-Frame-Options: it cannot express the
// allowed origins and browsers prefer frame-ancestors anyway.
func Headers(origins []string) func(http.Handler) http.Handler {
	csp := ContentSecurityPolicy(origins)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Security-Policy", csp)
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			next.ServeHTTP(w, r)
		})
	}
}

// Token checks a bearer token (serve --auth-token-file). Programs send
// "Authorization: Bearer TOKEN". Browsers cannot set that header on a page
// load or a websocket handshake, so a person opens any page once with
// ?token=TOKEN: the server sets an HttpOnly cookie and redirects (303) to
// the same URL without the token, so the token stays out of the address
// bar, the history's final URL, Referer headers (also cut by
// Referrer-Policy) and any access log that records URLs. The cookie holds
// an HMAC of the token, not the token, so a leaked cookie does not reveal
// it. Browsers send same-origin cookies on the websocket handshake too.
type Token struct {
	sum    [32]byte // SHA-256 of the token
	cookie string   // the session cookie's value
}

// SessionCookie is the cookie a browser gets for the token.
const SessionCookie = "txnscope_session"

// NewToken checks token.
func NewToken(token string) *Token {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("txnscope session cookie v1"))
	return &Token{sum: sha256.Sum256([]byte(token)), cookie: hex.EncodeToString(m.Sum(nil))}
}

// matches compares in constant time. Both sides are hashed first so that
// neither the token's length nor a common prefix shows in the timing
// (subtle.ConstantTimeCompare returns at once on a length mismatch).
func (b *Token) matches(s string) bool {
	got := sha256.Sum256([]byte(s))
	return subtle.ConstantTimeCompare(got[:], b.sum[:]) == 1
}

func (b *Token) authorized(r *http.Request) bool {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return b.matches(strings.TrimSpace(h[7:]))
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		return subtle.ConstantTimeCompare([]byte(c.Value), []byte(b.cookie)) == 1
	}
	return false
}

// Middleware refuses a request without the token (401), and trades a
// ?token= for the session cookie (303 to the URL without it).
func (b *Token) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Has("token") {
			if !b.matches(q.Get("token")) {
				unauthorized(w, "the token is wrong")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: b.cookie, Path: "/", HttpOnly: true,
				Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
			q.Del("token")
			u := url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		if !b.authorized(r) {
			unauthorized(w, "this server needs its token: send Authorization: Bearer TOKEN, or open any page once with ?token=TOKEN")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="txnscope"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// Timeout bounds every request but the websocket stream (long-lived
// by design; gorilla's Upgrade clears the server's deadlines and the stream
// has its own ping/pong and write deadlines). The handler runs with a
// context deadline, in the request's own goroutine: http.TimeoutHandler
// would run it in another goroutine that outlives the request, racing
// with chi reusing its pooled routing context. The handlers stop at the
// deadline (the NDJSON decisions stream ends there); one that had written
// nothing is answered 503 naming the limit: setting is how it is set
// ("--request-timeout").
func Timeout(d time.Duration, setting string) func(http.Handler) http.Handler {
	msg := fmt.Sprintf("request took longer than %s %s", setting, d)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if IsWebsocket(r) {
				next.ServeHTTP(w, r)
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r.WithContext(ctx))
			if ww.Status() == 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				http.Error(ww, msg, http.StatusServiceUnavailable)
			}
		})
	}
}

// Hosts refuses (421 Misdirected Request) a request whose Host header is
// not a name this server answers to: a loopback name or address
// (localhost, *.localhost per RFC 6761, 127.0.0.0/8, ::1), addrHost (the
// host of serve --addr) or the host of an allowed origin. This is the
// defence against DNS rebinding: a page of evil.example whose name is
// re-resolved to 127.0.0.1 reaches this loopback server as same-origin to
// the browser (Origin and Host both say evil.example), so SameOrigin
// cannot tell, but the Host it sends is not one of ours. A request without
// a Host (HTTP/1.0) carries no browser origin and passes. serve
// --listen-public turns the check off: the names a public server is
// reached by are not known.
func Hosts(addrHost string, origins []string) func(http.Handler) http.Handler {
	allowed := map[string]bool{}
	add := func(h string) {
		if h = normHost(h); h != "" {
			allowed[h] = true
		}
	}
	add(addrHost)
	for _, o := range origins {
		if u, err := url.Parse(o); err == nil {
			add(u.Hostname())
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host == "" || hostAllowed(r.Host, allowed) {
				next.ServeHTTP(w, r)
				return
			}
			http.Error(w, fmt.Sprintf("Host %.64q is not a name of this server: it answers to loopback names (localhost, 127.0.0.1, [::1]), its --addr host and the --allowed-origin hosts (a DNS-rebinding page sends its own name); use one of those, or serve --listen-public", r.Host),
				http.StatusMisdirectedRequest)
		})
	}
}

// normHost lower-cases a host name and drops a trailing dot and IPv6
// brackets.
func normHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

func hostAllowed(hostport string, allowed map[string]bool) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = normHost(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || allowed[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
