// Package pathname puts names (source ids, topics) into URL paths and
// takes them back out, so that every name a partition directory or a
// broker's Metadata can carry opens its own page.
//
// Two things stand in the way of url.PathEscape alone. A browser, and
// net/url's ResolveReference, remove the path segments "." and ".."
// (RFC 3986 section 5.2.4; the WHATWG URL standard also takes "%2e" for a
// dot), so a topic named ".." would link to the page above it. And chi
// routes on the escaped path whenever the request has one (url.URL's
// RawPath: "a%3Bb" for a topic "a;b"), and gives the handlers its
// segments still escaped, which name no topic. Segment therefore writes
// a segment that is a dot segment, or that begins with the marker '~',
// with one more '~' in front (no legal topic begins with '~', so their
// URLs are unchanged), and Routing has chi route on the unescaped path
// with that marker removed.
package pathname

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
)

// marker begins a segment Segment wrote for a name that is "", "." or
// "..", or that begins with the marker itself.
const marker = "~"

// Segment is the path segment for name.
func Segment(name string) string {
	e := url.PathEscape(name)
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, marker) {
		return marker + e
	}
	return e
}

// Name is the name a segment stands for, unescaped: Segment's inverse.
func Name(seg string) (string, error) {
	n, err := url.PathUnescape(seg)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(n, marker), nil
}

// Routing is a middleware for the top of a chi router: it has chi route
// on the path with each segment unescaped and unmarked (Name), so that
// the handlers' path values ({topic}, {id}) are the names themselves. A
// path that does not unescape, or whose segment unescapes to a '/', is
// routed as it came (no name of a file holds a '/'). The request's URL is
// not changed: redirects built from it stay escaped.
func Routing(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePath == "" {
			if p, ok := namesPath(r.URL.EscapedPath()); ok {
				rctx.RoutePath = p
			}
		}
		next.ServeHTTP(w, r)
	})
}

func namesPath(escaped string) (string, bool) {
	if !strings.ContainsAny(escaped, "%"+marker) {
		return "", false // chi's own choice is the same path
	}
	segs := strings.Split(escaped, "/")
	for i, s := range segs {
		n, err := Name(s)
		if err != nil || strings.Contains(n, "/") {
			return "", false
		}
		segs[i] = n
	}
	return strings.Join(segs, "/"), true
}
