package e2e

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/server"
)

// span is the timeline's view, in offsets (window.txnscope.state().view).
type span struct{ From, To float64 }

// viewMs is how many milliseconds the timeline's view spans.
func viewMs(t *testing.T, ctx context.Context) float64 {
	tt := eval[[]float64](t, ctx, `window.txnscope.viewTimes()`)
	return tt[1] - tt[0]
}

// timeSpanKept waits (up to wait) for the page of segment k to apply the
// time span it was opened with, and checks that it is on the time axis
// showing ms0 milliseconds (within 1%) over at most a third of the w0
// offsets of the view before: segment k is written 7 times slower. It
// returns the view.
func timeSpanKept(t *testing.T, ctx context.Context, k int, ms0, w0 float64, wait time.Duration) span {
	t.Helper()
	if err := chromedp.Do(ctx, pollFresh(`document.querySelector('[data-testid="timeline"]').dataset.timeSpanKept !== undefined`, wait)); err != nil {
		t.Fatalf("segment %d's page (%s) never applied a time span: %v", k, eval[string](t, ctx, `location.search`), err)
	}
	if ax := eval[string](t, ctx, `window.txnscope.state().axis`); ax != "time" {
		t.Errorf("segment %d opened on the %s axis", k, ax)
	}
	ms1 := viewMs(t, ctx)
	if ms1 < ms0*0.99 || ms1 > ms0*1.01 {
		t.Errorf("segment %d opened spanning %.2f ms, the view before spanned %.2f ms", k, ms1, ms0)
	}
	v := eval[span](t, ctx, `window.txnscope.state().view`)
	t.Logf("segment %d: %.3f ms over %.2f offsets (before: %.3f ms over %.2f)", k, ms1, v.To-v.From, ms0, w0)
	if w1 := v.To - v.From; w1 > w0/3 {
		t.Errorf("segment %d is written 7 times slower, yet the view holds %.1f offsets, the view before %.1f", k, w1, w0)
	}
	return v
}

// clickCell clicks the strip cell of segment k.
func clickCell(t *testing.T, ctx context.Context, k int) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="segment-cell"]:nth-child(%d)`, k+1)))); err != nil {
		t.Fatal(err)
	}
}

// TestUISegmentCellKeepsWidth: on a segment's page, a click on
// another segment's strip cell opens that segment with the view as many
// offsets wide as before, at the segment's first offset (not the whole
// segment, which the cell's link alone opens); the counts line under the
// minimap then counts from that offset over the view's width. A click on
// the cell of the segment shown moves the view to its start, in place.
func TestUISegmentCellKeepsWidth(t *testing.T) {
	path := testtool.Need(t, "chromium")
	_, segs, _, page := segmentedLog(t)
	ctx := startChromium(t, path)
	k, to := 1, 4
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s?segment=%d&from=%d&to=%d", page, segs[k].BaseOffset, segs[k].BaseOffset+30, segs[k].BaseOffset+110))); err != nil {
		t.Fatal(err)
	}
	segmentShown(t, ctx, segs, k)
	before := eval[span](t, ctx, `window.txnscope.state().view`)
	w0 := before.To - before.From
	if n := float64(segs[to].NextOffset - segs[to].BaseOffset); w0 > n/2 {
		t.Fatalf("a view of %.0f offsets is not narrower than segment %d (%.0f offsets): nothing to keep", w0, to, n)
	}
	clickCell(t, ctx, to)
	segmentShown(t, ctx, segs, to)
	v := eval[span](t, ctx, `window.txnscope.state().view`)
	base := float64(segs[to].BaseOffset)
	if w1 := v.To - v.From; w1 < w0-2 || w1 > w0+2 {
		t.Errorf("the cell opened segment %d %.0f offsets wide (%.0f–%.0f), the view before was %.0f wide", to, w1, v.From, v.To, w0)
	}
	if v.From > base || v.From < base-0.1*w0 {
		t.Errorf("the cell opened segment %d at %.0f–%.0f, not at its first offset %.0f", to, v.From, v.To, base)
	}
	// The range in view, as the counts line shows it.
	if err := chromedp.Do(ctx, pollFresh(`(() => { const e = document.querySelector('[data-testid="view-counts"]'); return e && !e.hidden && e.dataset.pending === undefined && e.dataset.from !== ""; })()`, 20*time.Second)); err != nil {
		t.Fatalf("counts never shown: %v", err)
	}
	c := eval[span](t, ctx, `(() => { const e = document.querySelector('[data-testid="view-counts"]'); return { from: +e.dataset.from, to: +e.dataset.to }; })()`)
	if c.From != base || c.To != math.Ceil(v.To)-1 {
		t.Errorf("the counts line is over offsets %.0f–%.0f, want %.0f–%.0f", c.From, c.To, base, math.Ceil(v.To)-1)
	}

	// The cell of the segment shown: its start, the width kept, no new page.
	eval[bool](t, ctx, fmt.Sprintf(`(() => { window.txnscope.setView(%v, %v); window.keptPage = 1; return true; })()`, base+100, base+100+w0))
	clickCell(t, ctx, to)
	if err := chromedp.Do(ctx, pollFresh(fmt.Sprintf(`window.txnscope.state().view.from <= %v`, base), 10*time.Second)); err != nil {
		t.Errorf("a click on the current cell did not move the view to the segment's start: %v (view %v)", err, eval[span](t, ctx, `window.txnscope.state().view`))
	}
	v = eval[span](t, ctx, `window.txnscope.state().view`)
	if w1 := v.To - v.From; w1 < w0-0.01 || w1 > w0+0.01 || v.From < base-0.1*w0 || !eval[bool](t, ctx, `window.keptPage === 1`) {
		t.Errorf("after a click on the current cell: view %.1f–%.1f, want %.0f offsets from %.0f on the same page", v.From, v.To, w0, base)
	}
}

// TestUISegmentCellKeepsTimeSpan: on the time axis a click on
// a strip cell keeps the time the view spans, not its offsets: segment 3
// is written 7 times slower (7 ms between batches, the others 1 ms), so
// the same time holds a seventh of the offsets there. The new page opens
// on the time axis at the segment's first offset, and once its stream is
// done shows as many milliseconds as the view before.
func TestUISegmentCellKeepsTimeSpan(t *testing.T) {
	path := testtool.Need(t, "chromium")
	_, segs, _, page := segmentedLogSteps(t, []int64{1, 1, 1, 7, 1, 1})
	ctx := startChromium(t, path)
	k, to := 1, 3
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s?segment=%d&axis=time&from=%d&to=%d", page, segs[k].BaseOffset, segs[k].BaseOffset+30, segs[k].BaseOffset+110))); err != nil {
		t.Fatal(err)
	}
	segmentShown(t, ctx, segs, k)
	before := eval[span](t, ctx, `window.txnscope.state().view`)
	ms0 := viewMs(t, ctx)
	if ms0 <= 0 {
		t.Fatalf("the view before spans %v ms", ms0)
	}
	clickCell(t, ctx, to)
	segmentShown(t, ctx, segs, to)
	v := timeSpanKept(t, ctx, to, ms0, before.To-before.From, 20*time.Second)
	w1 := v.To - v.From
	if base := float64(segs[to].BaseOffset); v.From > base || v.To <= base || v.From < base-0.1*w1-1 {
		t.Errorf("the view %.2f–%.2f is not at segment %d's first offset %.0f", v.From, v.To, to, base)
	}
	// The hint is spent: the URL keeps the view in offsets only.
	if err := chromedp.Do(ctx, pollFresh(`!new URLSearchParams(location.search).has("time_span")`, 10*time.Second)); err != nil {
		t.Errorf("the URL still has time_span: %v", err)
	}
}

// TestUISegmentPanKeepsTimeSpan: on the time axis, panning past
// a segment's last offset opens the next segment's page showing as many
// milliseconds as the view before, not as many offsets: segment 3 is
// written 7 times slower than its neighbours (7 ms between batches, the
// others 1 ms), so the same time holds a seventh of the offsets there. The
// view is at the next segment's start; panning back past the first offset
// of segment 4 opens segment 3 the same way, at its end.
func TestUISegmentPanKeepsTimeSpan(t *testing.T) {
	path := testtool.Need(t, "chromium")
	_, segs, _, page := segmentedLogSteps(t, []int64{1, 1, 1, 7, 1, 1})
	ctx := startChromium(t, path)
	// panOut opens segment k on the time axis with the view [from, to),
	// presses key until the page leaves it, and returns the view's offsets
	// and milliseconds before the press that left: the view the step into
	// the neighbour measured.
	panOut := func(k int, from, to int64, key string) (span, float64) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s?segment=%d&axis=time&from=%d&to=%d", page, segs[k].BaseOffset, from, to))); err != nil {
			t.Fatal(err)
		}
		segmentShown(t, ctx, segs, k)
		if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`))); err != nil {
			t.Fatal(err)
		}
		for press := 0; press < 40; press++ {
			v, ms := eval[span](t, ctx, `window.txnscope.state().view`), viewMs(t, ctx)
			if err := chromedp.Do(ctx, chromedp.KeyEvent(key)); err != nil {
				t.Fatal(err)
			}
			if eval[bool](t, ctx, `(() => { const e = document.querySelector('[data-testid="timeline"]'); return !e || e.dataset.leaving !== undefined || new URLSearchParams(location.search).get("segment") !== "`+fmt.Sprint(segs[k].BaseOffset)+`"; })()`) {
				return v, ms
			}
		}
		t.Fatalf("40 presses of %q did not leave segment %d (view %v)", key, k, eval[any](t, ctx, `window.txnscope.state().view`))
		return span{}, 0
	}
	// kept waits for segment k's page to apply the time span and checks
	// that it shows ms0 milliseconds, a seventh of the offsets or fewer
	// than w0 (at most a third), on the time axis, with the segment's
	// boundary at offset edge in view.
	kept := func(k int, ms0, w0 float64, edge int64) span {
		t.Helper()
		segmentShown(t, ctx, segs, k)
		// The hint is applied just after the stream is done, which
		// segmentShown waited for.
		v := timeSpanKept(t, ctx, k, ms0, w0, 5*time.Second)
		if e := float64(edge); v.From > e || v.To < e {
			t.Errorf("the view %.2f–%.2f of segment %d does not show its boundary at %.0f", v.From, v.To, k, e)
		}
		if err := chromedp.Do(ctx, pollFresh(`(() => { const q = new URLSearchParams(location.search); return !q.has("time_span") && !q.has("time_anchor"); })()`, 10*time.Second)); err != nil {
			t.Errorf("the URL still has the time span hint: %v", err)
		}
		return v
	}

	// Right from the end of segment 2 into the start of segment 3.
	v0, ms0 := panOut(2, segs[2].NextOffset-90, segs[2].NextOffset-10, kb.ArrowRight)
	if ms0 <= 0 {
		t.Fatalf("the view before spans %v ms", ms0)
	}
	v := kept(3, ms0, v0.To-v0.From, segs[3].BaseOffset)
	if base := float64(segs[3].BaseOffset); v.From < base-0.1*(v.To-v.From)-1 {
		t.Errorf("the view %.2f–%.2f is not at segment 3's first offset %.0f", v.From, v.To, base)
	}

	// Left from the start of segment 4 into the end of segment 3.
	v0, ms0 = panOut(4, segs[4].BaseOffset+10, segs[4].BaseOffset+90, kb.ArrowLeft)
	v = kept(3, ms0, v0.To-v0.From, segs[3].NextOffset)
	if next := float64(segs[3].NextOffset); v.To > next+0.1*(v.To-v.From)+1 {
		t.Errorf("the view %.2f–%.2f is not at segment 3's end %.0f", v.From, v.To, next)
	}
}

// TestUIWholeStripCellZooms: on the page of a partition loaded
// whole, a click on a strip cell zooms the timeline to that segment in
// place: no new page (a variable set on the window before the click is
// still there) and no second stream of the log, the view at the segment's
// first offset as many offsets wide as before, the URL's from and to
// following it. A view wider than the segment shrinks to it; on the time
// axis the view keeps its milliseconds (segment 3 is written 7 times
// slower, so a seventh of the offsets). The cell's link is still the
// plain ?from=&to= for a new tab or a page without script.
func TestUIWholeStripCellZooms(t *testing.T) {
	path := testtool.Need(t, "chromium")
	logDir := t.TempDir()
	st, err := gen.WriteLog(logDir, gen.LogOptions{SegmentBytes: 256 << 10, TotalBytes: 6 * 256 << 10, Seed: 11, TimeSteps: []int64{1, 1, 1, 7, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	ld, _, ov := openSegmented(t, st.Dir)
	segs := ov.Segments
	if len(segs) < 6 {
		t.Fatalf("generated %d segments, want 6", len(segs))
	}
	s := startServe(t, loads(logDir), func(o *server.Options) { o.SummaryCacheDir = t.TempDir() })
	full := ld.Partitions[0].Log
	page := s.url("/sources/load1/partitions/" + full.Topic + "/" + fmt.Sprint(full.Partition))
	ctx := startChromium(t, path)
	view := func() span { return eval[span](t, ctx, `window.txnscope.state().view`) }
	// open shows the whole partition with the view [from, to) and marks
	// the window, so that a navigation shows.
	open := func(q string, from, to int64) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s?from=%d&to=%d%s", page, from, to, q)), waitDone(1)); err != nil {
			t.Fatal(err)
		}
		if w := eval[string](t, ctx, `document.querySelector('[data-testid="segment-strip"]').dataset.windowed`); w != "false" {
			t.Fatalf("the partition is not loaded whole: strip data-windowed=%q", w)
		}
		eval[bool](t, ctx, `(() => { window.keptPage = 1; return true; })()`)
	}
	// zoomed clicks the cell of segment k and waits for the view to move
	// to its start, on this page.
	zoomed := func(k int) span {
		t.Helper()
		gen := eval[int](t, ctx, `window.txnscope.state().gen`)
		clickCell(t, ctx, k)
		if err := chromedp.Do(ctx, pollFresh(fmt.Sprintf(`(() => { const v = window.txnscope.state().view; return v.from <= %d && v.to > %d; })()`, segs[k].BaseOffset, segs[k].BaseOffset), 10*time.Second)); err != nil {
			t.Fatalf("the click did not move the view to segment %d's first offset %d: %v (view %v)", k, segs[k].BaseOffset, err, view())
		}
		if !eval[bool](t, ctx, `window.keptPage === 1`) {
			t.Fatalf("the click on segment %d's cell loaded a new page", k)
		}
		if g := eval[int](t, ctx, `window.txnscope.state().gen`); g != gen {
			t.Errorf("the click on segment %d's cell started a stream: generation %d, %d before", k, g, gen)
		}
		return view()
	}

	// Offsets: 80 wide, into segment 4.
	k, to := 1, 4
	open("", segs[k].BaseOffset+30, segs[k].BaseOffset+110)
	if h, want := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('[data-testid="segment-cell"]:nth-child(%d)').getAttribute("href")`, to+1)),
		fmt.Sprintf("?from=%d&to=%d", segs[to].BaseOffset, segs[to].NextOffset); h != want {
		t.Errorf("cell %d links to %q, want %q", to, h, want)
	}
	w0 := 80.0
	v := zoomed(to)
	base := float64(segs[to].BaseOffset)
	if w1 := v.To - v.From; w1 < w0-0.01 || w1 > w0+0.01 || v.From < base-0.1*w0 {
		t.Errorf("the cell zoomed to %.1f–%.1f, want %.0f offsets from segment %d's first offset %.0f", v.From, v.To, w0, to, base)
	}
	// The URL follows, as for any other view change (history.replaceState).
	if err := chromedp.Do(ctx, pollFresh(fmt.Sprintf(`(() => { const q = new URLSearchParams(location.search); return q.get("from") === "%d" && q.get("to") === "%d"; })()`, int64(math.Floor(v.From)), int64(math.Ceil(v.To))), 10*time.Second)); err != nil {
		t.Errorf("the URL %q does not follow the view %.1f–%.1f: %v", eval[string](t, ctx, `location.search`), v.From, v.To, err)
	}

	// A view wider than the segment: the segment and its margins.
	eval[bool](t, ctx, `(() => { window.txnscope.setView(0, 1e9); return true; })()`)
	k = 2
	v = zoomed(k)
	n := float64(segs[k].NextOffset - segs[k].BaseOffset)
	if v.To < float64(segs[k].NextOffset) || v.To-v.From > n*1.1+4 {
		t.Errorf("from the whole log, the cell of segment %d (%.0f offsets) zoomed to %.1f–%.1f, not to the segment", k, n, v.From, v.To)
	}

	// Time: into segment 3, written 7 times slower.
	k, to = 1, 3
	open("&axis=time", segs[k].BaseOffset+30, segs[k].BaseOffset+110)
	ms0 := viewMs(t, ctx)
	if ms0 <= 0 {
		t.Fatalf("the view before spans %v ms", ms0)
	}
	v = zoomed(to)
	ms1 := viewMs(t, ctx)
	if ms1 < ms0*0.99 || ms1 > ms0*1.01 {
		t.Errorf("the cell zoomed to segment %d spanning %.2f ms, the view before spanned %.2f ms", to, ms1, ms0)
	}
	t.Logf("time axis, segment %d: %.3f ms over %.2f offsets (before: %.3f ms over %.0f)", to, ms1, v.To-v.From, ms0, w0)
	if w1 := v.To - v.From; w1 > w0/3 {
		t.Errorf("segment %d is written 7 times slower, yet the view holds %.1f offsets, the view before %.0f", to, w1, w0)
	}
	if ax := eval[string](t, ctx, `window.txnscope.state().axis`); ax != "time" {
		t.Errorf("after the click the timeline is on the %s axis", ax)
	}
}
