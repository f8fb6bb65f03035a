package e2e

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// browser starts headless chromium (skipping when it is missing, unless
// CI=true) and a test server (server.New) over the demo catalog, the
// 1M-batch demo with big, changed by set, on the screenshots' clock.
func browser(t testing.TB, big bool, set ...func(*server.Options)) (context.Context, *httptest.Server, *catalog) {
	t.Helper()
	path := testtool.Need(t, "chromium")
	cat := newCatalog(t, append([]func(*server.Options){func(o *server.Options) { o.Big, o.Now = big, screenshotClock }}, set...)...)
	srv := httptest.NewServer(cat.srv.Handler())
	t.Cleanup(srv.Close)
	return startChromium(t, path), srv, cat
}

// screenshotClock is the server's clock in the browser tests: a page that
// ages a partition by the server's clock ("ages at … (the server's
// clock)", "last write 336d 12h ago") then looks the same on every run, and
// docs/screenshots changes only when the pages do.
func screenshotClock() time.Time { return time.Date(2026, 12, 3, 21, 10, 0, 0, time.UTC) }

// waitDone waits until the page's stream of generation gen has finished.
func waitDone(gen int) chromedp.Action[chromedp.Void] {
	return pollFresh(fmt.Sprintf(`(() => { const s = window.txnscope && window.txnscope.state(); return s && s.painted && s.gen >= %d; })()`, gen),
		20*time.Second)
}

// pollFresh polls expr until it is true, like chromedp.Poll, but survives
// a navigation that has just finished: chromedp may then still evaluate in
// the old page's execution context, which Chromium has destroyed
// ("Cannot find context with specified id"), and the poll is retried in
// the new page instead of failing the test.
func pollFresh(expr string, timeout time.Duration) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var err error
		for try := 0; try < 4; try++ {
			_, err = chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(timeout))(ctx, t)
			// A poll that starts while a click's navigation is under way
			// loses its execution context; poll again on the new page.
			if err == nil || !strings.Contains(err.Error(), "Cannot find context with specified id") && !strings.Contains(err.Error(), "Inspected target navigated or closed") {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		return chromedp.Void{}, err
	}
}

func timelineURL(srv *httptest.Server, s *source) string {
	return fmt.Sprintf("%s/sources/%s/partitions/%s/%d", srv.URL, s.id, s.topic, s.partition)
}

func TestWebIndexListsDemos(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="source-list"]`))); err != nil {
		t.Fatal(err)
	}
	for _, s := range cat.list() {
		sel := fmt.Sprintf(`[data-testid="partition-link-%s-%s-%d"]`, s.id, s.topic, s.partition)
		href, err := attr(ctx, sel, "href")
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		if want := fmt.Sprintf("/sources/%s/partitions/%s/%d", s.id, s.topic, s.partition); href != want {
			t.Errorf("%s href %q, want %q", sel, href, want)
		}
	}
	screenshot(t, ctx, "TestWebIndexListsDemos")
}

// TestWebTimelineDemos opens each demo's timeline and checks its lanes and
// markers against the log.
func TestWebTimelineDemos(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	for _, s := range cat.list() {
		l := s.get()
		if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="timeline"]`)), waitDone(1)); err != nil {
			t.Fatalf("%s: %v", s.id, err)
		}
		// A row per transactional producer (every demo producer is), and
		// the non-transactional row only when there are batches to draw
		// in it (present.LaneRows).
		var lanes []string
		if present.Lanes(l)[0].Batches > 0 {
			lanes = append(lanes, "lane-none")
		}
		for _, p := range l.Producers {
			lanes = append(lanes, fmt.Sprintf("lane-%d", p.ID))
		}
		for _, id := range append(lanes, "lso", "hwm", "legend", "minimap", "log-start") {
			js := fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid="%s"]'); return !!e && !e.hidden && e.getBoundingClientRect().height > 0; })()`, id)
			if !eval[bool](t, ctx, js) {
				t.Errorf("%s: %s not shown", s.id, id)
			}
		}
		for _, p := range l.Producers {
			label := text(t, ctx, fmt.Sprintf(`[data-testid="lane-%d"]`, p.ID))
			if !strings.Contains(label, fmt.Sprintf("producer %d", p.ID)) || !strings.Contains(label, "epoch") || !strings.Contains(label, l.ProducerNames[p.ID]+" (producer") {
				t.Errorf("%s: lane-%d label %q", s.id, p.ID, label)
			}
		}
		if lso := text(t, ctx, `[data-testid="lso"]`); !strings.Contains(lso, fmt.Sprint(l.LastStableOffset)) {
			t.Errorf("%s: LSO marker %q, want %d", s.id, lso, l.LastStableOffset)
		}
		if hwm := text(t, ctx, `[data-testid="hwm"]`); !strings.Contains(hwm, fmt.Sprint(l.HighWatermark)) {
			t.Errorf("%s: HWM marker %q, want %d", s.id, hwm, l.HighWatermark)
		}
		// Every decision is in the accessible list.
		n := eval[int](t, ctx, `document.querySelectorAll('[data-testid^="batch-"][data-decision]').length`)
		// A scenario that seeks (the seek demo) plays its consumer from
		// its seek.
		from := int64(-1)
		if len(s.seeks) > 0 {
			from = s.seeks[0]
			if pos, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="position"]`))); pos != fmt.Sprint(from) {
				t.Errorf("%s: consume from %q, want the scenario's seek %d", s.id, pos, from)
			}
		}
		want := 0
		for range l.Decisions(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}) {
			want++
		}
		if n != want {
			t.Errorf("%s: %d decisions listed, want %d", s.id, n, want)
		}
		// Segment boundaries, control markers, and the open transaction flagged.
		if segs := eval[int](t, ctx, `document.querySelectorAll('.marker.segment').length`); segs != len(l.Segments)-1 {
			t.Errorf("%s: %d segment markers, want %d", s.id, segs, len(l.Segments)-1)
		}
		if open := eval[int](t, ctx, `document.querySelectorAll('[data-testid^="open-txn-"]').length`); open != len(l.Open) {
			t.Errorf("%s: %d open-transaction flags, want %d", s.id, open, len(l.Open))
		}
		markers := 0
		for i := range l.Batches {
			if l.Batches[i].IsEndTxnMarker() {
				markers++
			}
		}
		if got := eval[int](t, ctx, `document.querySelectorAll('[data-testid^="batch-"][data-control]').length`); got != markers {
			t.Errorf("%s: %d COMMIT/ABORT markers listed, want %d", s.id, got, markers)
		}
		screenshot(t, ctx, "TestWebTimelineDemos-"+s.id)
	}
}

// hoverOffset moves the real mouse over the batch holding off.
func hoverOffset(t *testing.T, ctx context.Context, off int64) (x, y float64) {
	t.Helper()
	p := eval[struct{ X, Y float64 }](t, ctx, fmt.Sprintf(`window.txnscope.pointOf(%d)`, off))
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, p.X, p.Y)); err != nil {
		t.Fatal(err)
	}
	return p.X, p.Y
}

func TestWebHoverAbortedShowsReason(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	// Offsets 2-4: producer 7's transaction, aborted by the marker at 11.
	x, y := hoverOffset(t, ctx, 3)
	err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="tooltip"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="tooltip"] .reason').textContent.startsWith("aborted:")`, chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	tip := text(t, ctx, `[data-testid="tooltip"]`)
	for _, want := range []string{"aborted", "producer 7", "aborted by marker at 11", "00000000000000000000.txnindex"} {
		if !strings.Contains(tip, want) {
			t.Errorf("tooltip %q lacks %q", tip, want)
		}
	}
	if b := eval[map[string]any](t, ctx, fmt.Sprintf(`window.txnscope.batchAt(%f, %f)`, x, y)); b["decision"] != "aborted" {
		t.Errorf("batchAt under the pointer: %v", b)
	}
	screenshot(t, ctx, "TestWebHoverAbortedShowsReason")

	// A click opens the detail panel from the batches API.
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y), chromedp.WaitVisible(chromedp.CSS(`[data-testid="detail-reason"]`))); err != nil {
		t.Fatal(err)
	}
	if d := text(t, ctx, `[data-testid="detail"]`); !strings.Contains(d, "batch 2–4") || !strings.Contains(d, "00000000000000000000.txnindex") {
		t.Errorf("detail panel: %q", d)
	}
	// The records are decoded from the demo's segment file.
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="detail-records"] tr').length`); n != 1+3 {
		t.Errorf("detail panel shows %d record rows, want 3 and a header", n-1)
	}
	screenshot(t, ctx, "TestWebDetailPanel")

	// "Consume from here" restarts the stream at the batch: offsets below
	// it become before_position, and the URL records the position.
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="consume-from-here"]`)), waitDone(2),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="batch-0"]').dataset.decision === "before_position"`, chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := attr(ctx, `[data-testid="batch-2"]`, "data-decision"); d != "aborted" {
		t.Errorf("the batch consumed from is %q, want aborted", d)
	}
	if pos, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="position"]`))); pos != "2" {
		t.Errorf("position control %q, want 2", pos)
	}
}

// TestWebZoomPan drives the keyboard, the wheel, a drag and the minimap,
// and checks that the URL follows the view.
func TestWebZoomPan(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	type view struct{ From, To float64 }
	cur := func() view { return eval[struct{ View view }](t, ctx, `window.txnscope.state()`).View }
	v0 := cur()
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`)), chromedp.KeyEvent("+"), chromedp.KeyEvent("+")); err != nil {
		t.Fatal(err)
	}
	v1 := cur()
	if v1.To-v1.From >= (v0.To-v0.From)*0.6 {
		t.Errorf("+ +: span %v -> %v, want it smaller", v0.To-v0.From, v1.To-v1.From)
	}
	chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight))
	if v2 := cur(); v2.From <= v1.From {
		t.Errorf("ArrowRight: from %v -> %v", v1.From, v2.From)
	}
	chromedp.Do(ctx, chromedp.KeyEvent("-"))
	// Wheel: zoom in around the pointer.
	box := eval[struct{ X, Y, W float64 }](t, ctx, `(() => { const r = document.querySelector('[data-testid="canvas"]').getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width}; })()`)
	before := cur()
	// CDP requires deltaX on a wheel event and drops zero fields.
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseWheel, X: box.X + box.W/2, Y: box.Y + 20, DeltaX: 0.01, DeltaY: -300})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	chromedp.Do(ctx, chromedp.Sleep(100*time.Millisecond))
	after := cur()
	if after.To-after.From >= before.To-before.From {
		t.Errorf("wheel: span %v -> %v", before.To-before.From, after.To-after.From)
	}
	// Drag right: the view moves left.
	chromedp.Do(ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, box.X+box.W/2, box.Y+20, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box.X+box.W/2+150, box.Y+20, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, box.X+box.W/2+150, box.Y+20, chromedp.ButtonLeft))
	if dragged := cur(); dragged.From >= after.From {
		t.Errorf("drag: from %v -> %v", after.From, dragged.From)
	}
	// The minimap recentres the view where it is clicked.
	mm := eval[struct{ X, Y, W float64 }](t, ctx, `(() => { const r = document.querySelector('[data-testid="minimap"]').getBoundingClientRect(); return {x: r.left, y: r.top + r.height/2, w: r.width}; })()`)
	chromedp.Do(ctx, chromedp.MouseClickXY(mm.X+mm.W*0.9, mm.Y))
	if m := cur(); (m.From+m.To)/2 < 12 {
		t.Errorf("minimap click at 90%%: view %v", m)
	}
	chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))
	m := cur()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(loc, fmt.Sprintf("from=%d", int64(math.Floor(m.From)))) || !strings.Contains(loc, fmt.Sprintf("to=%d", int64(math.Ceil(m.To)))) {
		t.Errorf("URL %q does not hold the view %v", loc, m)
	}
	screenshot(t, ctx, "TestWebZoomPan")
	chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="timeline"]`)), chromedp.KeyEvent("0"))
	if z := cur(); z.From > 0 || z.To < 17 {
		t.Errorf("0: view %v, want the whole log", z)
	}
}

func TestWebIsolationSwitch(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	before := eval[map[string]int](t, ctx, `window.txnscope.drawn()`)
	if d, err := attr(ctx, `[data-testid="batch-2"]`, "data-decision"); err != nil || d != "aborted" {
		t.Fatalf("read_committed: offset 2 is %q (%v), want aborted", d, err)
	}
	err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`[data-testid="isolation"]`), "read_uncommitted"),
		js(`document.querySelector('[data-testid="isolation"]').dispatchEvent(new Event("change"))`),
		waitDone(2),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="batch-2"]').dataset.decision === "delivered"`, chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	after := eval[map[string]int](t, ctx, `window.txnscope.drawn()`)
	if before["aborted"] == 0 || after["aborted"] != 0 || after["delivered"] <= before["delivered"] {
		t.Errorf("drawn before %v, after %v: want the aborted batches delivered", before, after)
	}
	chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "isolation=read_uncommitted") {
		t.Errorf("URL %q does not record the isolation", loc)
	}
	screenshot(t, ctx, "TestWebIsolationSwitch")
}

func TestWebDeepLink(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	u := timelineURL(srv, s) + "?from=4&to=14&isolation=read_uncommitted&position=5&sel=9&variant=librdkafka"
	if err := chromedp.Do(ctx, chromedp.Navigate(u), waitDone(1), chromedp.WaitVisible(chromedp.CSS(`[data-testid="detail-reason"]`))); err != nil {
		t.Fatal(err)
	}
	st := eval[struct {
		View      struct{ From, To float64 }
		Isolation string
		Position  int64
		Selected  int64
	}](t, ctx, `window.txnscope.state()`)
	if st.View.From != 4 || st.View.To != 14 || st.Isolation != "read_uncommitted" || st.Position != 5 || st.Selected != 9 {
		t.Errorf("state %+v, want view 4-14, read_uncommitted, position 5, selected 9", st)
	}
	iso, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="isolation"]`)))
	pos, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="position"]`)))
	off, _ := attr(ctx, `[data-testid="detail"]`, "data-offset")
	variant, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="variant"]`)))
	if iso != "read_uncommitted" || pos != "5" || off != "9" || variant != "librdkafka" {
		t.Errorf("controls: isolation %q position %q detail %q variant %q", iso, pos, off, variant)
	}
	// Offsets below the position are drawn as before_position.
	if d, _ := attr(ctx, `[data-testid="batch-2"]`, "data-decision"); d != "before_position" {
		t.Errorf("offsets 2-4 below position 5 are %q, want before_position", d)
	}
	screenshot(t, ctx, "TestWebDeepLink")
}

// js evaluates expr for its effect.
func js(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](expr)(ctx, t)
		return err
	})
}

// eval evaluates expr into a T.
func eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var (
		v   string
		err error
	)
	// chromedp finds the node, then asks for its text by node id: a page
	// that re-renders in between (the live diagnosis panel is swapped on
	// every poll) has replaced it ("No node with given id found"), and the
	// query is asked again for the new node.
	for try := 0; try < 4; try++ {
		if v, err = chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel))); err == nil || !strings.Contains(err.Error(), "No node with given id") {
			break
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return v
}

func attr(ctx context.Context, sel, name string) (string, error) {
	v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	return v.Value, err
}
