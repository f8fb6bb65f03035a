package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// viewport emulates a w×h window (CSS pixels).
func viewport(w, h int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: w, Height: h, DeviceScaleFactor: 1})
		return err
	})
}

// TestLessonPageTimelineAsOf: the lesson page (not only the embed) draws
// the timeline as of each step, and on a 1280×720 window a person sees
// the step's batch on the timeline and the step controls without
// scrolling. Stepping forward redraws the timeline as of the next step.
func TestLessonPageTimelineAsOf(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	errs := pageErrors(ctx)
	s := cat.find("interleaved", "demo-interleaved", 0)
	ls := lessonOf(t, cat, "interleaved", "demo-interleaved")
	asOf := func(n int) {
		t.Helper()
		want := fmt.Sprint(ls.Steps[n].Broker.LogEnd)
		if err := chromedp.Do(ctx, waitStep(n), pollFresh(`document.querySelector('[data-testid="timeline"]').dataset.asOf === "`+want+`" && window.txnscope.state().painted`, 10*time.Second)); err != nil {
			t.Fatalf("step %d: the timeline never drew the log to %s: %v (as of %q)", n, want, err,
				eval[string](t, ctx, `document.querySelector('[data-testid="timeline"]').dataset.asOf || ""`))
		}
	}
	const n = 4
	if err := chromedp.Do(ctx, viewport(1280, 720), chromedp.Navigate(lessonURL(srv.URL, s)+fmt.Sprintf("?step=%d", n)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	defer chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
		return err
	}))
	asOf(n)
	b := ls.Steps[n].Batch
	// In the window without scrolling: the step's batch on the canvas, the
	// step count and the forward button.
	seen := eval[map[string]bool](t, ctx, fmt.Sprintf(`(() => {
	  const inView = (r) => r && r.width > 0 && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth;
	  const p = window.txnscope.pointOf(%d);
	  const box = (id) => { const e = document.querySelector('[data-testid="' + id + '"]'); return e && e.getBoundingClientRect(); };
	  return { batch: !!p && p.y > 0 && p.y < innerHeight && p.x > 0 && p.x < innerWidth, count: inView(box("lesson-count")), next: inView(box("lesson-next")),
	    legible: parseFloat(getComputedStyle(document.querySelector(".lane strong")).fontSize) >= 12 && document.querySelector('[data-testid="timeline"]').getBoundingClientRect().width >= 1000 };
	})()`, b.From))
	for what, ok := range seen {
		if !ok {
			t.Errorf("on 1280×720, %s is not in view (or too small): %v", what, seen)
		}
	}
	if got := text(t, ctx, `[data-testid="lesson-count"]`); got != fmt.Sprintf("step %d of %d", n, len(ls.Steps)-1) {
		t.Errorf("count %q", got)
	}
	tempScreenshot(t, ctx, "TestLessonPageTimelineAsOf")
	// Offsets written after the step are not drawn; the step's batch is.
	if got := eval[int](t, ctx, `document.querySelectorAll('[data-testid^="batch-"][data-decision]').length`); got == 0 {
		t.Errorf("no batch listed on the timeline at step %d", n)
	}
	if e := eval[bool](t, ctx, fmt.Sprintf(`!!document.querySelector('[data-testid="batch-%d"]')`, b.From)); !e {
		t.Errorf("step %d's batch %d-%d is not on the timeline", n, b.From, b.To)
	}
	if e := eval[bool](t, ctx, fmt.Sprintf(`!!document.querySelector('[data-testid="batch-%d"]')`, ls.Steps[len(ls.Steps)-1].Batch.From)); e {
		t.Errorf("the last step's batch is drawn at step %d", n)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-next"]`))); err != nil {
		t.Fatal(err)
	}
	asOf(n + 1)
	// The start counts no step.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-first"]`)), waitStep(0)); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, `[data-testid="lesson-count"]`); got != fmt.Sprintf("start, %d steps", len(ls.Steps)-1) {
		t.Errorf("count at the start %q", got)
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("errors on the page:\n%s", strings.Join(e, "\n"))
	}
}
