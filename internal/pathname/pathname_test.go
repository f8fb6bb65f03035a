package pathname

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/go-chi/chi/v5"
)

// TestSegmentRoundTrip: each name's segment survives a browser's
// resolution of dot segments and comes back out of chi as the name.
func TestSegmentRoundTrip(t *testing.T) {
	r := chi.NewRouter()
	r.Use(Routing)
	r.Get("/p/{topic}/{n}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.PathValue("topic"))) })
	srv := httptest.NewServer(r)
	defer srv.Close()
	base, _ := url.Parse(srv.URL + "/index")
	for _, tc := range []struct{ name, topic, seg string }{
		{"legal name unchanged", "orders.v2_x-y", "orders.v2_x-y"},
		{"semicolon", "a;b", "a%3Bb"},
		{"dot", ".", "~."},
		{"dot dot", "..", "~.."},
		{"three dots are no dot segment", "...", "..."},
		{"marker doubled", "~x", "~~x"},
		{"escaped dots stay a name", "%2e%2e", "%252e%252e"},
		{"question mark", "a?b", "a%3Fb"},
		{"hash", "a#b", "a%23b"},
		{"space", "a b", "a%20b"},
		{"newline", "a\nb", "a%0Ab"},
		{"not UTF-8", "a\xffb", "a%FFb"},
		{"unicode", "zamówienia", "zam%C3%B3wienia"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seg := Segment(tc.topic)
			if seg != tc.seg {
				t.Errorf("Segment(%q) = %q; want %q", tc.topic, seg, tc.seg)
			}
			if n, err := Name(seg); n != tc.topic || err != nil {
				t.Errorf("Name(%q) = %q, %v", seg, n, err)
			}
			ref, err := url.Parse("/p/" + seg + "/0")
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get(base.ResolveReference(ref).String())
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b := make([]byte, 512)
			n, _ := resp.Body.Read(b)
			if resp.StatusCode != 200 || string(b[:n]) != tc.topic {
				t.Errorf("GET %s: %d %q; want %q", ref, resp.StatusCode, b[:n], tc.topic)
			}
		})
	}
}

// FuzzSegment: Name undoes Segment for any name, and a segment is never a
// dot segment nor holds a '/'.
func FuzzSegment(f *testing.F) {
	for _, s := range []string{"", ".", "..", "~", "~~.", "a;b", "a/b", "%2e", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seg := Segment(s)
		if seg == "." || seg == ".." || seg == "" {
			t.Fatalf("Segment(%q) = %q", s, seg)
		}
		for i := 0; i < len(seg); i++ {
			if seg[i] == '/' {
				t.Fatalf("Segment(%q) = %q holds a '/'", s, seg)
			}
		}
		if n, err := Name(seg); n != s || err != nil {
			t.Fatalf("Name(Segment(%q)) = %q, %v", s, n, err)
		}
	})
}
