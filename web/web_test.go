package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// fakeCatalog holds one partition: producer 7 aborts, producer 8 commits.
type fakeCatalog struct{ l *txnindex.Log }

func (f fakeCatalog) Sources() []Source {
	return []Source{{ID: "demo", Title: "A demo", Partitions: []Partition{{Topic: "t", Partition: 0}}}}
}

func (f fakeCatalog) Log(id, topic string, p int32) (*txnindex.Log, bool) {
	if id != "demo" || topic != "t" || p != 0 {
		return nil, false
	}
	return f.l, true
}

func testLog() *txnindex.Log {
	p := &txnindex.Partition{Topic: "t", LogStartOffset: -1, HighWatermark: -1}
	add := func(base, last int64, pid txnindex.ProducerID, attrs int16, ct txnindex.ControlType) {
		p.Batches = append(p.Batches, txnindex.BatchFields{BaseOffset: base, LastOffset: last, ProducerID: pid, Magic: 2,
			Attributes: attrs, Control: ct, Records: int32(last - base + 1), Size: 100, BaseSequence: -1}.Batch())
	}
	add(0, 1, -1, 0, txnindex.ControlNone)
	add(2, 3, 7, txnindex.AttrTransactional, txnindex.ControlNone)
	add(4, 4, 8, txnindex.AttrTransactional, txnindex.ControlNone)
	add(5, 5, 7, txnindex.AttrTransactional|txnindex.AttrControl, txnindex.ControlAbort)
	add(6, 6, 8, txnindex.AttrTransactional|txnindex.AttrControl, txnindex.ControlCommit)
	return txnindex.Build(p)
}

func serve(t *testing.T, h http.Handler, path string, want int) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /sources/{id}/partitions/{topic}/{partition}", h)
	mux.Handle("GET /{$}", h)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != want {
		t.Fatalf("GET %s: %d, want %d\n%s", path, rec.Code, want, rec.Body)
	}
	return rec.Body.String()
}

func TestIndex(t *testing.T) {
	ui := New(fakeCatalog{testLog()}, view.NewDiagnoser())
	body := serve(t, ui.Index(), "/", 200)
	for _, want := range []string{`data-testid="source-list"`, `data-testid="partition-link-demo-t-0"`, `href="/sources/demo/partitions/t/0"`, "A demo"} {
		if !strings.Contains(body, want) {
			t.Errorf("index lacks %s", want)
		}
	}
	if !regexp.MustCompile(`/static/css/app\.css\?v=[0-9a-f]{12}`).MatchString(body) {
		t.Errorf("stylesheet URL is not cache-busted")
	}
}

func TestTimeline(t *testing.T) {
	ui := New(fakeCatalog{testLog()}, view.NewDiagnoser())
	body := serve(t, ui.Timeline(), "/sources/demo/partitions/t/0", 200)
	for _, want := range []string{
		`data-testid="timeline"`, `data-testid="lane-none"`, `data-testid="lane-7"`, `data-testid="lane-8"`,
		`data-testid="lso"`, `data-testid="hwm"`, `data-testid="legend"`, `data-testid="isolation"`,
		`data-testid="position"`, `data-testid="max-bytes"`, `data-testid="variant"`, `data-testid="tooltip"`, `data-testid="detail"`,
		`data-testid="minimap"`, `data-ws="/ws/v1/sources/demo/partitions/t/0"`, `data-api="/api/v1/sources/demo/partitions/t/0"`,
		`data-lso="7"`, `data-hwm="7"`, "producer 7", "epoch 0", `/static/js/timeline.js?v=`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("timeline lacks %s", want)
		}
	}
	serve(t, ui.Timeline(), "/sources/demo/partitions/t/9", 404)
	serve(t, ui.Timeline(), "/sources/demo/partitions/t/x", 400)
	// A bad diagnosis option is answered with view.ParseDiagnoseQuery's
	// sentence alone (it used to carry api's "400 " and ": <nil>").
	for path, h := range map[string]http.Handler{"/sources/demo/partitions/t/0?now=soon": ui.Timeline(), "/?now=soon": ui.Index()} {
		if body := serve(t, h, path, 400); strings.TrimSpace(body) != `now "soon": want RFC 3339, Unix milliseconds or "log"` {
			t.Errorf("GET %s: %q", path, body)
		}
	}
}

func TestTimelineView(t *testing.T) {
	v := timelineView("demo", "A demo", testLog())
	if len(v.Lanes) != 3 || v.Lanes[0].TestID != "lane-none" || v.Lanes[1].TestID != "lane-7" || v.Lanes[2].Index != 2 {
		t.Errorf("lanes %+v", v.Lanes)
	}
	if v.Name != "t-0" || v.Txns != 2 || v.Open != 0 || !strings.Contains(v.Pinned, "equals") {
		t.Errorf("view %+v", v)
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1000, "1000 B"}, {1024, "1 KiB"}, {1397, "1.4 KiB"}, {256 << 20, "256 MiB"}, {3 << 29, "1.5 GiB"}, {4 << 40, "4 TiB"}, {5 << 50, "5120 TiB"}} {
		if got := FormatBytes(c.n); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestIndexNumbers: the index writes a lag, a count, in the one number
// format (thousands separated, as the timeline's "LSO lag 2,029,449
// offsets"), keeps the raw number for sorting, and says "1 partition".
func TestIndexNumbers(t *testing.T) {
	var b strings.Builder
	r := PartitionRow{Label: "orders-3", Href: "/x", Built: true, LSO: 8051570, HWM: 10081019, LagOffsets: 2029449, State: "hanging"}
	if err := partitionTR(r, false).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`data-lag="2029449"`, `>2,029,449</td>`, `>8051570</td>`} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("row lacks %s:\n%s", w, b.String())
		}
	}
	if s := (&LogDirView{Total: 1, Scanned: 0}).DirSummary(); !strings.HasPrefix(s, "1 partition listed") {
		t.Errorf("DirSummary %q", s)
	}
	g := TopicGroup{Rows: []PartitionRow{r}, Held: 1, MaxLag: 2029449}
	if s := g.Summary(); !strings.Contains(s, "largest lag 2,029,449") {
		t.Errorf("topic summary %q", s)
	}
}
