package static

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	p := Path("js/timeline.js")
	if !strings.HasPrefix(p, "/static/js/timeline.js?v=") || len(p) != len("/static/js/timeline.js?v=")+12 {
		t.Fatalf("Path = %q", p)
	}
	for _, c := range []struct {
		url, cache string
		code       int
	}{
		{p, "immutable", 200},
		{"/static/js/timeline.js", "no-cache", 200},
		{Path("css/app.css"), "immutable", 200},
		{"/static/nope.js", "", 404},
		{"/static/", "", 404},
	} {
		rec := httptest.NewRecorder()
		Handler().ServeHTTP(rec, httptest.NewRequest("GET", c.url, nil))
		if rec.Code != c.code || !strings.Contains(rec.Header().Get("Cache-Control"), c.cache) {
			t.Errorf("%s: %d %q", c.url, rec.Code, rec.Header().Get("Cache-Control"))
		}
	}
}
