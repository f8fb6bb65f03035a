package server

import (
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/genlogdir"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/view"
)

// TestLazyPartTailFirst: while a partition's full load has not finished,
// its page gets the tail (pinned where the snapshot says, offsets before
// the roll not read) and a note that says so; once the load is done, the
// whole log with its files for record decoding.
func TestLazyPartTailFirst(t *testing.T) {
	dir := t.TempDir()
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: 1, Stuck: []string{"t0-0"}}); err != nil {
		t.Fatal(err)
	}
	x, err := logindex.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	lz := &lazyPart{x: x, e: x.Entries[0], d: load.NewLogDir(x, load.Question{}, load.Budget{}), diags: view.NewDiagnoser()}
	// A full load that has started and not finished (a partition of many
	// GiB): the start is taken, nothing loads.
	lz.done, lz.began = make(chan struct{}), time.Now().Add(-tailWait)
	tail := lz.get()
	if tail == nil || lz.built() != nil || lz.filesOf(tail) != nil {
		t.Fatalf("tail %v, built %v", tail != nil, lz.built() != nil)
	}
	if tail.LastStableOffset != 0 || len(tail.Batches) == 0 || tail.Batches[0].BaseOffset == 0 {
		t.Errorf("tail: LSO %d (want 0, the snapshot's open transaction), first batch at %d (want the roll)", tail.LastStableOffset, tail.Batches[0].BaseOffset)
	}
	if p := strings.Join(lz.problemList(), " "); !strings.Contains(p, "loading the whole partition") || !strings.Contains(p, "the last 1 of 2 segments") || !strings.Contains(p, "switches to the whole partition") {
		t.Errorf("problems while loading: %q", p)
	}
	lz.load(lz.done)
	full := lz.get()
	if full == tail || full != lz.built() || lz.filesOf(full) == nil || full.Batches[0].BaseOffset != 0 || full.LastStableOffset != 0 {
		t.Errorf("after the load: the full log is not served")
	}
	if p := lz.problemList(); len(p) != 0 {
		t.Errorf("problems after the load: %q", p)
	}
}

// lazyServer serves a lazy log directory of genlogdir's shape (t0-0 stuck
// before the roll: its tail and its whole log differ) with the page and
// stream routes; the full load of t0-0 is taken as started and not done,
// as for a partition of many GiB, until the test calls load.
func lazyServer(t *testing.T) (*httptest.Server, *lazyPart) {
	t.Helper()
	dir := t.TempDir()
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: 2, Stuck: []string{"t0-0"}}); err != nil {
		t.Fatal(err)
	}
	x, err := logindex.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	cat := diagnosing(&catalog{})
	cat.addLogDir("load1", load.NewLogDir(x, load.Question{}, load.Budget{}))
	lz := cat.find("load1", "t0", 0).lazy
	// Begun tailWait ago: requests get the tail at once.
	lz.done, lz.began = make(chan struct{}), time.Now().Add(-tailWait)
	srv := httptest.NewServer(routes(cat, api.New(apiCatalog{cat}, loaderRecords{cat}, cat.diags)))
	t.Cleanup(srv.Close)
	return srv, lz
}

// streamMeta opens the partition's websocket and returns it with its first
// meta message.
func streamMeta(t *testing.T, srv *httptest.Server, path string) (*websocket.Conn, api.Meta) {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/v1"+path, nil)
	if err != nil {
		t.Error(err)
		return nil, api.Meta{}
	}
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	m, err := nextMeta(c)
	if err != nil {
		t.Errorf("first meta: %v", err)
	}
	return c, m
}

// nextMeta reads c's messages up to the next meta (the decisions are
// binary frames).
func nextMeta(c *websocket.Conn) (api.Meta, error) {
	for {
		typ, b, err := c.ReadMessage()
		if err != nil {
			return api.Meta{}, err
		}
		var m api.Meta
		if typ == websocket.TextMessage && json.Unmarshal(b, &m) == nil && m.Type == "meta" {
			return m, nil
		}
	}
}

var dataBatches = regexp.MustCompile(`data-batches="(\d+)"`)

// TestLazyPageStreamRace: a partition page and its websocket
// stream opened at once while the full load is in progress both get the
// tail, whole and alike (the page's batches are the stream's), never a mix
// or an error; the page says the timeline shows the tail and switches when
// the load lands; when it lands, the open stream gets a new generation with
// the whole partition, and a page opened then gets it too. Run with -race:
// the page, the stream, its prewarm and the load touch the lazy partition
// from four goroutines.
func TestLazyPageStreamRace(t *testing.T) {
	srv, lz := lazyServer(t)
	path := "/sources/load1/partitions/t0/0"
	var wg sync.WaitGroup
	var page string
	var conn *websocket.Conn
	var meta api.Meta
	wg.Go(func() { page = getPage(t, srv.URL+path) })
	wg.Go(func() { conn, meta = streamMeta(t, srv, path) })
	wg.Wait()
	if conn == nil {
		t.FailNow()
	}
	defer conn.Close()
	tail := lz.get()
	m := dataBatches.FindStringSubmatch(page)
	if m == nil || m[1] != strconv.Itoa(len(tail.Batches)) || meta.Totals.Batches != len(tail.Batches) || meta.LogStartOffset != tail.LogStartOffset {
		t.Fatalf("page batches %v, stream %d from %d; the tail has %d from %d", m, meta.Totals.Batches, meta.LogStartOffset, len(tail.Batches), tail.LogStartOffset)
	}
	if !strings.Contains(page, "the timeline shows its tail") || !strings.Contains(page, "switches to the whole partition") {
		t.Errorf("the page does not say which part it shows")
	}

	lz.load(lz.done) // the full load lands while the stream is open
	full := lz.get()
	if full == tail || len(full.Batches) <= len(tail.Batches) {
		t.Fatalf("full %d batches, tail %d", len(full.Batches), len(tail.Batches))
	}
	next, err := nextMeta(conn)
	if err != nil {
		t.Fatalf("the stream did not switch to the whole partition: %v", err)
	}
	if next.Generation <= meta.Generation || next.Totals.Batches != len(full.Batches) {
		t.Errorf("new generation %d with %d batches, want > %d with %d", next.Generation, next.Totals.Batches, meta.Generation, len(full.Batches))
	}
	page = getPage(t, srv.URL+path)
	if m := dataBatches.FindStringSubmatch(page); m == nil || m[1] != strconv.Itoa(len(full.Batches)) || strings.Contains(page, "the timeline shows its tail") {
		t.Errorf("the page after the load: batches %v, want %d, and no tail note", m, len(full.Batches))
	}
	c2, m2 := streamMeta(t, srv, path)
	if c2 != nil {
		c2.Close()
	}
	if m2.Totals.Batches != len(full.Batches) {
		t.Errorf("a stream opened after the load has %d batches, want %d", m2.Totals.Batches, len(full.Batches))
	}
}

// TestLazyIndexMetadataRow: in a lazily loaded log dir, KRaft's
// metadata log __cluster_metadata-0 has a row of its own that says what it
// is, as the eager path's diagnosis does ("not a data partition": the
// KRaft cluster metadata log), not "clear" and not an empty partition's
// numbers, folded with the broker's own topics and never held back; its
// page opens and says the same.
func TestLazyIndexMetadataRow(t *testing.T) {
	dir := t.TempDir()
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: 2, Internal: 1, Metadata: true}); err != nil {
		t.Fatal(err)
	}
	x, err := logindex.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	cat := diagnosing(&catalog{})
	cat.addLogDir("load1", load.NewLogDir(x, load.Question{}, load.Budget{}))
	srv := httptest.NewServer(routes(cat, api.New(apiCatalog{cat}, loaderRecords{cat}, cat.diags)))
	t.Cleanup(srv.Close)
	row := regexp.MustCompile(`(?s)<tr data-testid="partition-row-load1-__cluster_metadata-0"[^>]*>.*?</tr>`)
	check := func(when string) {
		t.Helper()
		page := getPage(t, srv.URL+"/")
		r := row.FindString(page)
		if r == "" {
			t.Fatalf("%s: no row for __cluster_metadata-0", when)
		}
		if !strings.Contains(r, `data-testid="row-not-data"`) || !strings.Contains(r, "not a data partition</strong>: KRaft cluster metadata log") ||
			strings.Contains(r, "clear") || strings.Contains(r, "not built yet") || strings.Contains(r, "queued") {
			t.Errorf("%s: the row does not say what it is:\n%s", when, r)
		}
		if strings.Contains(page, `data-testid="held-row-load1-__cluster_metadata-0"`) {
			t.Errorf("%s: held back", when)
		}
		if !regexp.MustCompile(`<details class="topic-group internal"[^>]*data-topic="__cluster_metadata"`).MatchString(page) {
			t.Errorf("%s: its topic group is not folded with the internal ones", when)
		}
	}
	check("before the ranking")
	x.Start(t.Context(), 0)
	<-x.Done()
	check("after the ranking")
	if n, total := x.Progress(); n != total || total != 4 {
		t.Errorf("progress %d of %d, want 4 of 4 (the metadata log is not ranked)", n, total)
	}
	page := getPage(t, srv.URL+"/sources/load1/partitions/__cluster_metadata/0")
	if testidText(page, "diagnosis-verdict") != "not a data partition" {
		t.Errorf("its page: verdict %q", testidText(page, "diagnosis-verdict"))
	}
	check("after its page was opened")
}

// TestLazyIndexSeededLag: t0-0's transaction opened before the roll, so
// the index's tail scan knows it only from the producer snapshot (no first
// write read). Its row says how long the LSO has been held as a lower
// bound, since the last write the snapshot gives, with the reason; once the
// page has loaded the whole partition, the row shows the time from its
// first write, the same words as the partition page's "LSO held for".
func TestLazyIndexSeededLag(t *testing.T) {
	srv, lz := lazyServer(t)
	lz.x.Start(t.Context(), 0)
	<-lz.x.Done()
	cell := regexp.MustCompile(`(?s)<tr data-testid="held-row-load1-t0-0".*?<td class="num lag-time"( title="[^"]*")?>\s*([^<]*?)\s*</td>`)
	m := cell.FindStringSubmatch(getPage(t, srv.URL+"/"))
	if m == nil || !strings.HasPrefix(m[2], "at least ") || !strings.Contains(m[1], "first write was not read") {
		t.Fatalf("t0-0's row from its tail: %q", m)
	}
	lz.load(lz.done)
	m = cell.FindStringSubmatch(getPage(t, srv.URL+"/"))
	held := regexp.MustCompile(`(?s)data-testid="diag-lag-time"[^>]*>\s*([^<]*?)\s*<`).FindStringSubmatch(getPage(t, srv.URL+"/sources/load1/partitions/t0/0"))
	if m == nil || held == nil || strings.HasPrefix(m[2], "at least") || m[2] != held[1] {
		t.Errorf("t0-0's row from the whole log: %q, want the page's LSO held for, %q", m, held)
	}
}
