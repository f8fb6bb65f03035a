package server

import (
	"fmt"
	"html"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// TestDiagnosisAPIClock: GET …/diagnosis ages a demo by the demo's own time
// (its newest write), as the diagnosis panel of its page does, so that the
// API says "stuck for 20 minutes" where the page does, not the years since
// the demo's fixed timestamps; the same partition served as a source that
// is not a demo is aged by the server's clock on both.
func TestDiagnosisAPIClock(t *testing.T) {
	cat := diagnosing(demoCatalog(false))
	demo := cat.find("stuck-lso", "demo-stuck-lso", 0)
	l := demo.get()
	plain := &source{id: "stuck-copy", title: "not a demo", topic: demo.topic, partition: demo.partition, build: func() *txnindex.Log { return l }}
	cat.put(plain)
	srv := httptest.NewServer(routes(cat, api.New(apiCatalog{cat}, loaderRecords{cat}, cat.diags)))
	t.Cleanup(srv.Close)
	newest := int64(-1)
	for i := range l.Batches {
		newest = max(newest, l.Batches[i].MaxTimestamp)
	}
	clockText := regexp.MustCompile(`data-testid="diag-clock" data-clock="([^"]*)">([^<]*)<`)
	for _, s := range []*source{demo, plain} {
		before := time.Now().Truncate(time.Second).UnixMilli() // the diagnosis' clock counts seconds
		var d struct {
			Now      int64  `json:"now"`
			Clock    string `json:"clock"`
			LagMs    int64  `json:"lso_lag_ms"`
			PinnedBy *struct {
				FirstTimestamp int64 `json:"first_timestamp"`
			} `json:"pinned_by"`
		}
		getJSONInto(t, fmt.Sprintf("%s/api/v1/sources/%s/partitions/%s/%d/diagnosis", srv.URL, s.id, s.topic, s.partition), &d)
		_, page := get(t, fmt.Sprintf("%s/sources/%s/partitions/%s/%d/diagnosis", srv.URL, s.id, s.topic, s.partition))
		m := clockText.FindStringSubmatch(html.UnescapeString(page))
		if m == nil {
			t.Fatalf("%s: the diagnosis panel shows no clock", s.id)
		}
		if d.Clock != m[1] {
			t.Errorf("%s: the API's clock is %q, the page's %q", s.id, d.Clock, m[1])
		}
		if s.demo {
			if d.Now != newest || d.Clock != view.ClockDemo {
				t.Errorf("demo: the API ages it at %d (%q), want the demo's newest write %d (%q)", d.Now, d.Clock, newest, view.ClockDemo)
			}
			if d.PinnedBy == nil || d.LagMs/60_000 != 20 || d.Now-d.PinnedBy.FirstTimestamp != d.LagMs {
				t.Errorf("demo: LSO held %d ms by the API, want the 20 minutes the demo tells", d.LagMs)
			}
			if want := time.UnixMilli(newest).UTC().Format("2006-01-02 15:04:05") + " UTC"; m[2] != want+" " && m[2] != want {
				t.Errorf("demo: the page's clock %q, want %q", m[2], want)
			}
		} else if d.Now < before || d.Clock != view.ClockServer {
			t.Errorf("not a demo: the API ages it at %d (%q), want the server's clock (from %d)", d.Now, d.Clock, before)
		}
	}
}
