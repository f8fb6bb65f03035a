package e2e

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestUITimeAxis opens the stuck-LSO demo on the time axis: its last batch
// is written 20 minutes after the others, so on the time axis the first six
// batches crowd the left edge and the tick labels are UTC times; switching
// to the offset axis spreads them evenly again.
func TestUITimeAxis(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("stuck-lso", "demo-stuck-lso", 0)
	l := s.get()
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)+"?axis=time"), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if sw, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="axis-switch"]`))); sw != "time" {
		t.Fatalf("axis-switch %q after ?axis=time, want time", sw)
	}
	xs := make([]float64, len(l.Batches))
	for i, b := range l.Batches {
		xs[i] = eval[float64](t, ctx, fmt.Sprintf(`window.txnscope.xAt(%d)`, b.BaseOffset))
	}
	// x is linear in the batches' max timestamps (the axis holds the
	// latest time so far; this demo's clock only moves forward).
	first, last := l.Batches[0], l.Batches[len(l.Batches)-1]
	dt, dx := float64(last.MaxTimestamp-first.MaxTimestamp), xs[len(xs)-1]-xs[0]
	if dx < 300 {
		t.Fatalf("first to last batch spans %.1f px on the time axis", dx)
	}
	for i, b := range l.Batches {
		want := xs[0] + float64(b.MaxTimestamp-first.MaxTimestamp)/dt*dx
		if math.Abs(xs[i]-want) > 1.5 {
			t.Errorf("batch at %d (ts %d): x %.1f, want %.1f", b.BaseOffset, b.MaxTimestamp, xs[i], want)
		}
	}
	// The LSO marker (a DOM element) stands where its batch's time is.
	lsoX := eval[float64](t, ctx, `document.querySelector('[data-testid="lso"]').getBoundingClientRect().left`)
	if want := eval[float64](t, ctx, fmt.Sprintf(`window.txnscope.xAt(%d)`, l.LastStableOffset)); math.Abs(lsoX-want) > 3 {
		t.Errorf("LSO marker at x %.1f, want %.1f (offset %d on the time axis)", lsoX, want, l.LastStableOffset)
	}
	// Tick labels are UTC times and stand at their time's x.
	type tick struct {
		Text string
		Time float64
		X    float64
	}
	ticks := eval[[]tick](t, ctx, `Array.from(document.querySelectorAll('[data-testid="time-tick"]')).map((e) => ({text: e.textContent, time: +e.dataset.time, x: e.getBoundingClientRect().left}))`)
	if len(ticks) < 2 {
		t.Fatalf("time ticks %+v", ticks)
	}
	checkTicksApart(t, ctx, "stuck-lso")
	if !strings.HasSuffix(ticks[0].Text, " UTC") {
		t.Errorf("first tick %q, want a date and time in UTC", ticks[0].Text)
	}
	for _, tk := range ticks {
		utc := time.UnixMilli(int64(tk.Time)).UTC()
		if !strings.Contains(tk.Text, utc.Format("15:04")) {
			t.Errorf("tick %q for %s", tk.Text, utc)
		}
		if tk.Time >= float64(first.MaxTimestamp) && tk.Time <= float64(last.MaxTimestamp) {
			want := xs[0] + (tk.Time-float64(first.MaxTimestamp))/dt*dx
			if math.Abs(tk.X-want) > 2 {
				t.Errorf("tick %q at x %.1f, want %.1f", tk.Text, tk.X, want)
			}
		}
	}
	screenshot(t, ctx, "TestUITimeAxis")

	// Zoom in (in time, around the centre) and pan: the view changes and
	// the deep link keeps the axis.
	v0 := eval[struct{ View struct{ From, To float64 } }](t, ctx, `window.txnscope.state()`).View
	for range 6 {
		if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`)), chromedp.KeyEvent("+")); err != nil {
			t.Fatal(err)
		}
	}
	chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))
	v1 := eval[struct{ View struct{ From, To float64 } }](t, ctx, `window.txnscope.state()`).View
	if v1.To-v1.From >= v0.To-v0.From {
		t.Errorf("+ on the time axis: view %v -> %v", v0, v1)
	}
	chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight), chromedp.Sleep(300*time.Millisecond))
	if v2 := eval[struct{ View struct{ From, To float64 } }](t, ctx, `window.txnscope.state()`).View; v2.From <= v1.From {
		t.Errorf("ArrowRight on the time axis: view %v -> %v", v1, v2)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(loc, "axis=time") {
		t.Errorf("URL %q lost axis=time", loc)
	}

	// The offset axis: evenly spaced by offset again, offset ticks.
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`[data-testid="axis-switch"]`), "offset"), js(`document.querySelector('[data-testid="axis-switch"]').dispatchEvent(new Event("change"))`), chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`)), chromedp.KeyEvent("0"), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	a := eval[float64](t, ctx, fmt.Sprintf(`window.txnscope.xAt(%d)`, first.BaseOffset))
	z := eval[float64](t, ctx, fmt.Sprintf(`window.txnscope.xAt(%d)`, last.BaseOffset))
	mid := l.Batches[len(l.Batches)/2]
	m := eval[float64](t, ctx, fmt.Sprintf(`window.txnscope.xAt(%d)`, mid.BaseOffset))
	if want := a + float64(mid.BaseOffset-first.BaseOffset)/float64(last.BaseOffset-first.BaseOffset)*(z-a); math.Abs(m-want) > 1.5 {
		t.Errorf("offset axis: batch %d at x %.1f, want %.1f", mid.BaseOffset, m, want)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="time-tick"]').length`); n != 0 {
		t.Errorf("offset axis still shows %d time ticks", n)
	}
	loc, _ = chromedp.Run(ctx, chromedp.Location())
	if strings.Contains(loc, "axis=") {
		t.Errorf("URL %q keeps axis on the offset axis", loc)
	}
	screenshot(t, ctx, "TestUITimeAxis-offset")
}

// TestUITimeAxisEqualAndBackwardTimes: batches whose max timestamps repeat
// or go backwards (1000, 1000, 500, 3000 ms) stay drawn, in offset order, on
// the time axis, and a zoom (here the deep link's fractional view) pulls
// them apart.
func TestUITimeAxisEqualAndBackwardTimes(t *testing.T) {
	w := gen.NewWriter("clock")
	p := w.Partition()
	times := []int64{1000, 1000, 500, 3000}
	for range times {
		w.Data(-1, 1, false)
	}
	for i, d := range times {
		p.Batches[i].BaseTimestamp, p.Batches[i].MaxTimestamp = gen.Start+d, gen.Start+d
	}
	ctx, srv, cat := browser(t, false, generated("clock", "repeated and backward timestamps", p))
	s := cat.find("clock", "clock", 0)

	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)+"?axis=time"), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	for i := range times {
		if n := eval[int](t, ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid="batch-list"] [data-testid="batch-%d"]').length`, i)); n != 1 {
			t.Errorf("batch %d: %d entries in the batch list", i, n)
		}
	}
	x := func(off float64) float64 { return eval[float64](t, ctx, fmt.Sprintf(`window.txnscope.xAt(%v)`, off)) }
	// On the whole log the first three share a time: within a pixel or two,
	// and the one at 3000 ms far to the right.
	if x(1)-x(0) > 2 || x(2)-x(1) > 2 || x(2) < x(1) || x(3)-x(2) < 300 {
		t.Errorf("whole log: x %.1f %.1f %.1f %.1f", x(0), x(1), x(2), x(3))
	}
	screenshot(t, ctx, "TestUITimeAxisEqualAndBackwardTimes")

	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)+"?axis=time&from=0&to=2.0001"), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		p := eval[struct{ X, Y float64 }](t, ctx, fmt.Sprintf(`window.txnscope.pointOf(%d)`, i))
		got := eval[map[string]any](t, ctx, fmt.Sprintf(`window.txnscope.batchAt(%v, %v)`, p.X, p.Y))
		if got == nil || got["from"] != float64(i) {
			t.Errorf("zoomed: batch under batch %d's point %v is %v", i, p, got)
		}
		if i > 0 && x(float64(i))-x(float64(i-1)) < 20 {
			t.Errorf("zoomed: batches %d and %d %.1f px apart", i-1, i, x(float64(i))-x(float64(i-1)))
		}
	}
	screenshot(t, ctx, "TestUITimeAxisEqualAndBackwardTimes-zoomed")
}

// TestUITimeAxisBinned: with far more batches than pixels the time axis
// bins them per pixel column as the offset axis does. On a log of 1-record
// batches written one second apart, time is linear in offsets, so the two
// axes must draw the same pixels: in the whole-log overview (the pyramid)
// and zoomed to a few thousand batches (per-column offsets from time). A
// time axis drawn batch by batch (3 px minimum width) or binned wrongly
// differs in most columns.
func TestUITimeAxisBinned(t *testing.T) {
	w := gen.NewWriter("uniform")
	p := w.Partition()
	r := rand.New(rand.NewPCG(1, 2))
	var inTxn [5]int
	for len(p.Batches) < 30_000 {
		pid := txnindex.ProducerID(1 + r.IntN(4))
		switch {
		case r.IntN(5) == 0:
			w.Data(-1, 1, false)
		case inTxn[pid] >= 3:
			if r.IntN(4) == 0 {
				w.Marker(pid, txnindex.ControlAbort)
			} else {
				w.Marker(pid, txnindex.ControlCommit)
			}
			inTxn[pid] = 0
		default:
			w.Data(pid, 1, true)
			inTxn[pid]++
		}
	}
	ctx, srv, cat := browser(t, false, generated("uniform", "30,000 batches one second apart", p))
	s := cat.find("uniform", "uniform", 0)

	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	// columns returns a hash of each device-pixel column of the canvas.
	columns := func() []int {
		return eval[[]int](t, ctx, `(() => { const c = document.querySelector('[data-testid="canvas"]'), w = c.width, h = c.height, d = c.getContext("2d").getImageData(0, 0, w, h).data, out = [];
			for (let x = 0; x < w; x++) { let s = 0; for (let y = 0; y < h; y++) { const i = (y * w + x) * 4; s = (s * 31 + d[i] * 65599 + d[i + 1] * 257 + d[i + 2]) | 0; } out.push(s); } return out; })()`)
	}
	setAxis := func(a string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`[data-testid="axis-switch"]`), a), js(`document.querySelector('[data-testid="axis-switch"]').dispatchEvent(new Event("change"))`), chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []struct {
		name     string
		from, to int
	}{{"whole log", -1, -1}, {"4,000 batches", 12_000, 16_000}} {
		setView := `window.txnscope.setView(` + fmt.Sprint(v.from, ",", v.to) + `)`
		if v.from < 0 {
			setView = `document.querySelector('[data-testid="zoom-reset"]').click()`
		}
		setAxis("offset")
		chromedp.Do(ctx, js(setView), chromedp.Sleep(300*time.Millisecond))
		off := columns()
		setAxis("time")
		chromedp.Do(ctx, js(setView), chromedp.Sleep(300*time.Millisecond))
		if ax := eval[string](t, ctx, `window.txnscope.state().axis`); ax != "time" {
			t.Fatalf("axis %q", ax)
		}
		tm := columns()
		checkTicksApart(t, ctx, v.name)
		if len(off) != len(tm) || len(off) < 500 {
			t.Fatalf("%s: %d and %d columns", v.name, len(off), len(tm))
		}
		diff := 0
		for i := range off {
			if off[i] != tm[i] {
				diff++
			}
		}
		// Antialiased edges at fractional x (the LSO wash, the pinned
		// transaction's outline) may differ by a shade in a few columns.
		if diff > len(off)/100 {
			t.Errorf("%s: %d of %d pixel columns differ between the offset and the time axis", v.name, diff, len(off))
		}
		t.Logf("%s: %d of %d columns differ", v.name, diff, len(off))
		if v.from >= 0 {
			screenshot(t, ctx, "TestUITimeAxisBinned")
		}
	}
	// Ticks as close as the axis puts them (120 px, the least it allows a
	// step) leave less room than the dated first label needs: narrow a
	// view until its ticks are 121 px apart with the same step.
	msPerPx := func() (float64, float64) {
		tk := eval[[]struct{ X, Time float64 }](t, ctx, `Array.from(document.querySelectorAll('[data-testid="time-tick"]')).map((e) => ({x: e.getBoundingClientRect().left, time: +e.dataset.time}))`)
		if len(tk) < 3 {
			return 0, 0
		}
		return (tk[2].Time - tk[1].Time) / (tk[2].X - tk[1].X), tk[2].X - tk[1].X // the second gap: the first may be left out
	}
	chromedp.Do(ctx, js(`window.txnscope.setView(10000, 16000)`), chromedp.Sleep(300*time.Millisecond))
	if m, _ := msPerPx(); m > 0 {
		// 10-minute ticks 121 px apart: 600,000/121 ms per px.
		span := 6000 * (600_000.0 / 121) / m
		chromedp.Do(ctx, js(fmt.Sprintf(`window.txnscope.setView(10000, %f)`, 10000+span)), chromedp.Sleep(300*time.Millisecond))
		if _, gap := msPerPx(); gap < 119 || gap > 123 {
			t.Errorf("ticks %.1f px apart, want about 121", gap)
		}
	}
	checkTicksApart(t, ctx, "ticks 121 px apart")
}

// TestUITimeAxisMinimap: on the time axis the minimap is laid out in time
// as the main view is. On the stuck-LSO demo (six batches, then one 20
// minutes later) the whole-log view's time ticks give the time at each x;
// the minimap spans the same times, so after a zoom the black viewport
// box drawn on it must stand where the times now visible (read from the
// zoomed view's ticks) fall. In offsets the box would sit between the
// sixth and seventh batch instead. A click on the minimap then centres
// the view on the time under the pointer.
func TestUITimeAxisMinimap(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("stuck-lso", "demo-stuck-lso", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)+"?axis=time"), waitDone(1),
		chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`)), chromedp.KeyEvent("0"), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	type rect struct{ Left, Width, Top, Height float64 }
	box := func(sel string) rect {
		return eval[rect](t, ctx, `(() => { const r = document.querySelector('`+sel+`').getBoundingClientRect(); return {left: r.left, width: r.width, top: r.top, height: r.height}; })()`)
	}
	// The boxes are read again at each use: the page's width can change
	// after load (a scrollbar appearing as the diagnosis fills in).
	miniBox := func() rect {
		m := box(`[data-testid="minimap"]`)
		m.Left, m.Width = m.Left+1, m.Width-2 // inside its 1 px border
		return m
	}
	// visible returns the times at the canvas's left and right edges, from
	// the time ticks (label time and client x) a person reads.
	visible := func() (float64, float64) {
		t.Helper()
		ticks := eval[[]struct{ Time, X float64 }](t, ctx, `Array.from(document.querySelectorAll('[data-testid="time-tick"]')).map((e) => ({time: +e.dataset.time, x: e.getBoundingClientRect().left}))`)
		if len(ticks) < 2 {
			t.Fatalf("time ticks %+v", ticks)
		}
		a, z := ticks[0], ticks[len(ticks)-1]
		canvas := box(`[data-testid="canvas"]`)
		per := (z.Time - a.Time) / (z.X - a.X)
		return a.Time + (canvas.Left-a.X)*per, a.Time + (canvas.Left+canvas.Width-a.X)*per
	}
	// viewport returns the client x of the left and right sides of the
	// black box drawn on the minimap (its pixels, half-way down).
	viewport := func() (float64, float64) {
		t.Helper()
		px := eval[[]int](t, ctx, `(() => { const c = document.querySelector('[data-testid="minimap"]'), y = c.height >> 1, d = c.getContext("2d").getImageData(0, y, c.width, 1).data, out = [];
			for (let x = 0; x < c.width; x++) if (d[4 * x] + d[4 * x + 1] + d[4 * x + 2] < 60) out.push(x); return out; })()`)
		if len(px) < 2 {
			t.Fatalf("no viewport box on the minimap (black pixels %v)", px)
		}
		dw, mini := eval[float64](t, ctx, `document.querySelector('[data-testid="minimap"]').width`), miniBox()
		at := func(p int) float64 { return mini.Left + (float64(p)+0.5)/dw*mini.Width }
		return at(px[0]), at(px[len(px)-1])
	}
	t0, t1 := visible()
	onMini := func(tm float64) float64 { mini := miniBox(); return mini.Left + (tm-t0)/(t1-t0)*mini.Width }

	for range 2 {
		if err := chromedp.Do(ctx, chromedp.KeyEvent("+")); err != nil {
			t.Fatal(err)
		}
	}
	chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))
	v0, v1 := visible()
	l, r := viewport()
	// The box's 2 px stroke is centred on its edges.
	if math.Abs(l-onMini(v0)) > 3 || math.Abs(r-onMini(v1)) > 3 {
		t.Errorf("zoomed to %s-%s: minimap box at x %.1f-%.1f, want %.1f-%.1f", time.UnixMilli(int64(v0)).UTC().Format("15:04:05"), time.UnixMilli(int64(v1)).UTC().Format("15:04:05"), l, r, onMini(v0), onMini(v1))
	}
	screenshot(t, ctx, "TestUITimeAxisMinimap")

	// A click a quarter of the way along the minimap centres the view on
	// the time there; the box follows.
	want, mini := t0+(t1-t0)/4, miniBox()
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(mini.Left+mini.Width/4, mini.Top+mini.Height/2), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	c0, c1 := visible()
	if got := (c0 + c1) / 2; math.Abs(got-want) > 2/mini.Width*(t1-t0) {
		t.Errorf("click at a quarter of the minimap: view centred on %s, want %s", time.UnixMilli(int64(got)).UTC().Format("15:04:05.000"), time.UnixMilli(int64(want)).UTC().Format("15:04:05.000"))
	}
	if l, r := viewport(); math.Abs((l+r)/2-(mini.Left+mini.Width/4)) > 3 {
		t.Errorf("after the click the minimap box is at x %.1f-%.1f, want it centred on %.1f", l, r, mini.Left+mini.Width/4)
	}
}

// TestUIMarkerLabelsDoNotOverlap: marker labels (log start, LSO, HWM,
// position, segment boundaries) close together are laid out so that no
// label covers another, each beside its own line and inside the plot. The
// stuck-LSO demo on the time axis puts the log start and the LSO within a
// pixel of each other (its first six batches take seconds of a 20-minute
// log); a 3,000-batch log with a segment every 60 batches, its LSO at
// offset 1 and the position at 2, zoomed out on the offset axis, crowds
// the first three and the segment names.
func TestUIMarkerLabelsDoNotOverlap(t *testing.T) {
	w := gen.NewWriter("crowded")
	p := w.Partition()
	w.Data(-1, 1, false)
	w.Data(7, 1, true) // never ends: the LSO stays at 1
	for i := 2; i < 3000; i++ {
		if i%60 == 0 {
			w.Roll()
		}
		w.Data(-1, 1, false)
	}
	ctx, srv, cat := browser(t, false, generated("crowded", "segments every 60 batches", p))
	crowded := cat.find("crowded", "crowded", 0)

	type label struct {
		ID                       string
		Left, Right, Top, Bottom float64
		Line                     float64 // the marker line's client x
	}
	for _, c := range []struct {
		name, url string
		need      []string
		min       int
	}{
		{"time", timelineURL(srv, cat.find("stuck-lso", "demo-stuck-lso", 0)) + "?axis=time", []string{"log-start", "lso", "hwm"}, 3},
		{"offset", timelineURL(srv, crowded) + "?position=2", []string{"log-start", "lso", "position-marker", "hwm"}, 20},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(c.url), waitDone(1),
			chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`)), chromedp.KeyEvent("0"), chromedp.Sleep(400*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		labels := eval[[]label](t, ctx, `Array.from(document.querySelectorAll('[data-testid="markers"] .marker')).filter((m) => !m.hidden).map((m) => [m, m.querySelector("span")])
			.filter(([m, s]) => s && getComputedStyle(s).visibility !== "hidden" && s.getBoundingClientRect().width > 0)
			.map(([m, s]) => { const r = s.getBoundingClientRect(); return {id: m.dataset.testid, left: r.left, right: r.right, top: r.top, bottom: r.bottom, line: m.getBoundingClientRect().left}; })`)
		plot := eval[struct{ Left, Right float64 }](t, ctx, `(() => { const r = document.querySelector('[data-testid="plot"]').getBoundingClientRect(); return {left: r.left, right: r.right}; })()`)
		seen := map[string]bool{}
		for _, l := range labels {
			seen[l.ID] = true
			if d := min(math.Abs(l.Left-l.Line), math.Abs(l.Right-l.Line)); d > 8 {
				t.Errorf("%s: label %s at x %.0f-%.0f is %.0f px from its line at %.0f", c.name, l.ID, l.Left, l.Right, d, l.Line)
			}
			if l.Left < plot.Left-1 || l.Right > plot.Right+1 {
				t.Errorf("%s: label %s at x %.0f-%.0f outside the plot %.0f-%.0f", c.name, l.ID, l.Left, l.Right, plot.Left, plot.Right)
			}
		}
		for _, id := range c.need {
			if !seen[id] {
				t.Errorf("%s: no visible %s label (labels %+v)", c.name, id, labels)
			}
		}
		if len(labels) < c.min {
			t.Errorf("%s: %d visible labels, want at least %d", c.name, len(labels), c.min)
		}
		for i, a := range labels {
			for _, b := range labels[i+1:] {
				if a.Left < b.Right && b.Left < a.Right && a.Top < b.Bottom && b.Top < a.Bottom {
					t.Errorf("%s: labels %s (%.0f-%.0f, %.0f-%.0f) and %s (%.0f-%.0f, %.0f-%.0f) overlap", c.name, a.ID, a.Left, a.Right, a.Top, a.Bottom, b.ID, b.Left, b.Right, b.Top, b.Bottom)
				}
			}
		}
		t.Logf("%s: %d labels checked", c.name, len(labels))
		screenshot(t, ctx, "TestUIMarkerLabelsDoNotOverlap-"+c.name)
	}
}

// checkTicksApart fails when a time tick's label runs into the next one's
// (the first tick carries the date and is about twice as wide).
func checkTicksApart(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	ticks := eval[[]struct {
		Text     string
		X, Right float64
	}](t, ctx, `Array.from(document.querySelectorAll('[data-testid="time-tick"]')).map((e) => ({text: e.textContent, x: e.getBoundingClientRect().left, right: e.getBoundingClientRect().right}))`)
	if len(ticks) < 2 {
		t.Errorf("%s: %d time ticks", where, len(ticks))
	}
	for i := 1; i < len(ticks); i++ {
		if ticks[i-1].Right > ticks[i].X {
			t.Errorf("%s: tick %q (to x %.1f) overlaps tick %q at x %.1f", where, ticks[i-1].Text, ticks[i-1].Right, ticks[i].Text, ticks[i].X)
		}
	}
}
