package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/loader"
	loadinput "github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// TestUISegmentWindows: a log directory whose partition (6 segments of
// 1 MiB) is over --max-source-bytes, so its full load is refused. Its page
// shows the segment strip, one cell per segment whose counts are segsum's
// summaries, and the last segment's window; clicking a cell shows that
// segment (the view's width kept, TestUISegmentCellKeepsWidth), and with
// the view fitted to it ("fit", the 0 key) the counts line of the window
// ("in view, offsets …") equals what a full load of the same partition
// counts for that range.
func TestUISegmentWindows(t *testing.T) {
	path := testtool.Need(t, "chromium")
	logDir := t.TempDir()
	st, err := gen.WriteLog(logDir, gen.LogOptions{SegmentBytes: 1 << 20, TotalBytes: 6 << 20, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	ld, _, ov := openSegmented(t, st.Dir)
	full := ld.Partitions[0].Log
	if len(ov.Segments) < 6 {
		t.Fatalf("generated %d segments, want 6", len(ov.Segments))
	}
	s := startServe(t, loads(logDir), func(o *server.Options) { o.MaxSourceBytes = 2 << 20; o.SummaryCacheDir = t.TempDir() })
	ctx := startChromium(t, path)
	checkSegmentWindows(t, ctx, s, full, ov)
	screenshot(t, ctx, "TestUISegmentWindows")
}

// openSegmented loads the partition directory dir whole and opens it with
// segsum: the full load a segment page must agree with, the store and its
// overview.
func openSegmented(t *testing.T, dir string) (*loadinput.Contents, *segsum.Store, *segsum.Overview) {
	t.Helper()
	ld, err := loadinput.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := segsum.Open(dir, segsum.Options{Scan: loader.HeaderScanOptions, Cache: segsum.NewCache(1 << 30)})
	if err != nil {
		t.Fatal(err)
	}
	ov, err := store.Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ld, store, ov
}

// checkSegmentWindows opens the page of full's partition (source load1),
// over --max-source-bytes, and checks its segment strip against ov and
// its windows' counts and LSO against the full load: the last segment's
// by default, then the third's, clicked.
func checkSegmentWindows(t *testing.T, ctx context.Context, s *served, full *txnindex.Log, ov *segsum.Overview) {
	t.Helper()
	page := s.url("/sources/load1/partitions/" + full.Topic + "/" + fmt.Sprint(full.Partition))

	// counted reads the page's counts line and checks it against the full
	// load's decisions for the same offsets.
	counted := func(seg segsum.SegmentView) {
		t.Helper()
		if err := chromedp.Do(ctx, pollFresh(`(() => { const e = document.querySelector('[data-testid="view-counts"]'); return e && !e.hidden && e.dataset.pending === undefined && e.dataset.from !== "" && e.dataset.from !== undefined; })()`, 30*time.Second)); err != nil {
			t.Fatalf("counts never shown: %v", err)
		}
		got := eval[map[string]any](t, ctx, `(() => { const e = document.querySelector('[data-testid="view-counts"]'), o = { from: +e.dataset.from, to: +e.dataset.to };
			e.querySelectorAll('[data-kind]').forEach((b) => { o[b.dataset.kind] = +b.textContent.replace(/[^0-9]/g, ""); }); return o; })()`)
		m := map[string]int64{}
		for k, v := range got {
			m[k] = int64(v.(float64))
		}
		if m["from"] != seg.BaseOffset || m["to"] != seg.NextOffset-1 {
			t.Errorf("counts line over offsets %d–%d, want segment %s: %d–%d", m["from"], m["to"], seg.Name, seg.BaseOffset, seg.NextOffset-1)
		}
		want := txnindex.NewCounts(m["from"], m["to"])
		for d := range full.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
			want.Add(&d)
		}
		for k, w := range map[string]int64{"records": want.Records(), "delivered": want.Delivered, "aborted": want.Aborted, "control": want.ControlMarkers, "pending": want.Pending} {
			if g, ok := m[k]; (ok || w != 0 || k == "delivered") && g != w {
				t.Errorf("segment %s, offsets %d-%d: the page shows %s %d, the full load counts %d (page: %v)", seg.Name, m["from"], m["to"], k, g, w, m)
			}
		}
		if want.Records() == 0 {
			t.Errorf("segment %s: no records counted", seg.Name)
		}
	}
	cells := func() []map[string]any {
		return eval[[]map[string]any](t, ctx, `Array.from(document.querySelectorAll('[data-testid="segment-cell"]')).map((c) => ({
			base: +c.dataset.base, next: +c.dataset.next, delivered: +c.dataset.delivered, aborted: +c.dataset.aborted,
			pending: +c.dataset.pending, control: +c.dataset.control, current: c.classList.contains("current"), title: c.title }))`)
	}

	// pinned checks that the LSO sentence and the diagnosis name the transaction a full load
	// finds holding the LSO, though it begins in another segment than the
	// one shown.
	pinned := func() {
		t.Helper()
		h := full.LSOHolder()
		if h == nil {
			t.Fatal("the generated partition has no transaction holding the LSO")
		}
		for sel, want := range map[string]string{"pinned": fmt.Sprintf("producer %d from offset %d", h.ProducerID, h.FirstOffset),
			"diagnosis": fmt.Sprintf("Pinned by producer %d, epoch %d, whose transaction began at offset %d", h.ProducerID, h.ProducerEpoch, h.FirstOffset)} {
			if got := eval[string](t, ctx, `document.querySelector('[data-testid="`+sel+`"]').textContent`); !strings.Contains(strings.Join(strings.Fields(got), " "), want) {
				t.Errorf("%s: %q does not name %q", sel, got, want)
			}
		}
	}

	// The default window: the last segment.
	if err := chromedp.Do(ctx, chromedp.Navigate(page), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	cs := cells()
	if len(cs) != len(ov.Segments) {
		t.Fatalf("strip of %d cells, %d segments", len(cs), len(ov.Segments))
	}
	for i, c := range cs {
		x := ov.Segments[i]
		want := map[string]int64{"base": x.BaseOffset, "next": x.NextOffset, "delivered": x.NonTransactional + x.Committed,
			"aborted": x.Aborted, "pending": x.Open, "control": x.Control}
		for k, w := range want {
			if g := int64(c[k].(float64)); g != w {
				t.Errorf("cell %d (%s): %s %d, the summary says %d", i, x.Name, k, g, w)
			}
		}
		if c["current"].(bool) != (i == len(cs)-1) {
			t.Errorf("cell %d highlighted: %v; the last segment is shown by default", i, c["current"])
		}
	}
	counted(ov.Segments[len(ov.Segments)-1])
	pinned()

	// Clicking the third cell shows its window; fitted, the counts line
	// spans the segment.
	k := 2
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="segment-cell"]:nth-child(%d)`, k+1))),
		pollFresh(fmt.Sprintf(`location.search.includes("segment=%d")`, ov.Segments[k].BaseOffset), 20*time.Second), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if c := cells(); !c[k]["current"].(bool) {
		t.Errorf("after the click, cell %d is not highlighted", k)
	}
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`)), chromedp.KeyEvent("0")); err != nil {
		t.Fatal(err)
	}
	counted(ov.Segments[k])
	pinned()
	eval[bool](t, ctx, `(() => { document.activeElement.blur(); return true; })()`) // the callers' pictures without the focus ring
}

// TestSegmentStripWhole: a partition directory loaded whole has the strip
// too, a cell per segment whose link zooms the full timeline to the
// segment's offsets (?from=&to=, the page without script; with it a click
// zooms in place, TestUIWholeStripCellZooms), and no window.
func TestSegmentStripWhole(t *testing.T) {
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: 64 << 10, TotalBytes: 256 << 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := startServe(t, loads(st.Dir), func(o *server.Options) { o.SummaryCacheDir = t.TempDir() })
	resp, body := do(t, "GET", s.url("/sources/load1/partitions/bench/0"), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("page: %s", resp.Status)
	}
	if n := strings.Count(body, `data-testid="segment-cell"`); n != len(st.Segments) {
		t.Errorf("%d cells, %d segments", n, len(st.Segments))
	}
	if !strings.Contains(body, `href="?from=0&amp;to=`) || strings.Contains(body, "segment=") || strings.Contains(body, `class="segment-cell current"`) {
		t.Errorf("the strip of a whole partition should zoom, not open windows")
	}
}

// TestWindowLogStreamEqualsFullPass: what the stream of a windowed page
// decides (the window log's own Decisions, as api's stream plays it, with
// the page's default position) equals a full load's decisions over the
// segment's offsets, decision by decision, for every segment and both
// isolation levels.
func TestWindowLogStreamEqualsFullPass(t *testing.T) {
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: 64 << 10, TotalBytes: 640 << 10, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	ld, store, ov := openSegmented(t, st.Dir)
	full := ld.Partitions[0].Log
	type dec struct {
		From, To int64
		Verdict  txnindex.Verdict
		Cause    txnindex.Cause
	}
	in := func(l *txnindex.Log, o txnindex.ConsumeOptions, from, next int64) []dec {
		var out []dec
		for d := range l.Decisions(o) {
			if d.From >= from && d.From < next {
				out = append(out, dec{d.From, d.To, d.Verdict, d.Cause})
			}
		}
		return out
	}
	for _, iso := range []txnindex.Isolation{txnindex.ReadCommitted, txnindex.ReadUncommitted} {
		o := txnindex.ConsumeOptions{From: -1, Isolation: iso}
		for k, x := range ov.Segments {
			w, err := store.Window(context.Background(), k, txnindex.ConsumeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, want := in(w.Log, o, x.BaseOffset, x.NextOffset), in(full, o, x.BaseOffset, x.NextOffset)
			if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("isolation %v, segment %s: %d decisions, the full load %d\nwindow %.300v\nfull   %.300v", iso, x.Name, len(got), len(want), got, want)
			}
		}
	}
}
