package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestUISearchAndKeys drives the partition page's search box and keys as
// a person would. In the interleaved demo, producer 7 (transactional id
// orders) aborts its transaction (offsets 2-4 and 7-8) and producer 8
// (payments) commits two. "7" is both an offset and a producer id, and
// both are offered; Enter takes the offset. A transactional id goes to
// its producer's first batch. The a key, past the last aborted batch,
// wraps to the first (A the other way). The keyboard help lists every key
// the timeline answers, and every key it lists is answered.
func TestUISearchAndKeys(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	errs := pageErrors(ctx)
	s := cat.find("interleaved", "demo-interleaved", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	results := func() []string {
		return eval[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="search-results"]:not([hidden]) li')].map((li) => li.textContent)`)
	}
	detail := func(want string) {
		t.Helper()
		if err := chromedp.Do(ctx, pollFresh(`(() => { const h = document.querySelector('[data-testid="detail"]:not([hidden]) h2'); return !!h && h.textContent.startsWith(`+"`"+want+"`"+`); })()`, 5*time.Second)); err != nil {
			t.Errorf("the detail panel never showed %q: %q", want, eval[string](t, ctx, `(document.querySelector('[data-testid="detail"] h2') || {}).textContent || ""`))
		}
	}

	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="search"]`), "7")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(results(), " | "); got != "offset 7 | producer 7, transactional id orders" {
		t.Errorf("results for 7: %q", got)
	}
	tempScreenshot(t, ctx, "TestUISearchAndKeys-results")
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="search"]`), kb.Enter)); err != nil {
		t.Fatal(err)
	}
	detail("batch 7–8")
	if sel := eval[int](t, ctx, `window.txnscope.state().selected`); sel != 7 {
		t.Errorf("selected %d after going to offset 7", sel)
	}
	if len(results()) != 0 {
		t.Errorf("the results stay open after Enter: %q", results())
	}

	// A transactional id, picked with the mouse.
	if err := chromedp.Do(ctx, js(`document.querySelector('[data-testid="search"]').value = ""`),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="search"]`), "PAY")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(results(), " | "); got != "transactional id payments (producer 8)" {
		t.Errorf("results for PAY: %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="search-result"]`))); err != nil {
		t.Fatal(err)
	}
	detail("batch 5–6")
	if got := text(t, ctx, `[data-testid="detail"]`); !strings.Contains(got, "producer id8") {
		t.Errorf("detail after going to payments: %q", got)
	}
	if err := chromedp.Do(ctx, js(`document.querySelector('[data-testid="search"]').value = ""`),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="search"]`), "nobody")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(results(), " | "); got != "no offset, producer id or transactional id matches" {
		t.Errorf("results for nobody: %q", got)
	}

	// / from the timeline focuses the search box.
	key := func(k string) {
		t.Helper()
		if err := chromedp.Do(ctx, js(`document.querySelector('[data-testid="timeline"]').focus()`), chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
	}
	key("/")
	if id := eval[string](t, ctx, `document.activeElement.dataset.testid || ""`); id != "search" {
		t.Errorf("/ focused %q, want the search box", id)
	}

	// a and A wrap around the aborted batches 2-4 and 7-8, from offset 7.
	if err := chromedp.Do(ctx, js(`document.querySelector('[data-testid="search"]').value = "7"`), chromedp.SendKeys(chromedp.CSS(`[data-testid="search"]`), kb.Enter)); err != nil {
		t.Fatal(err)
	}
	detail("batch 7–8")
	for _, step := range []struct {
		key    string
		want   int
		status string
	}{{"a", 2, "past the last aborted batch: back to the first"}, {"a", 7, ""}, {"A", 2, ""}, {"A", 7, "before the first aborted batch: on to the last"}} {
		key(step.key)
		if sel := eval[int](t, ctx, `window.txnscope.state().selected`); sel != step.want {
			t.Errorf("%s: selected %d, want %d", step.key, sel, step.want)
		}
		if step.status != "" {
			if got := text(t, ctx, `[data-testid="status"]`); got != step.status {
				t.Errorf("%s: status %q, want %q", step.key, got, step.status)
			}
		}
	}

	// The help lists every key the timeline answers, and answers every key
	// it lists (PgUp and PgDn only on one segment's page).
	key("?")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="shortcuts"]`))); err != nil {
		t.Fatal(err)
	}
	tempScreenshot(t, ctx, "TestUISearchAndKeys-help")
	got := eval[struct{ Listed, Unanswered, Unlisted []string }](t, ctx, `(() => {
	  const root = document.querySelector('[data-testid="timeline"]');
	  const kbds = [...document.querySelectorAll('[data-testid="shortcuts"] kbd')];
	  const listed = kbds.map((k) => k.dataset.key);
	  const answers = (key) => { const e = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }); root.focus(); root.dispatchEvent(e); return e.defaultPrevented; };
	  const unanswered = kbds.filter((k) => !("segmentOnly" in k.dataset) && !answers(k.dataset.key)).map((k) => k.dataset.key);
	  const candidates = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown", "Escape", "Enter", " ", "Tab", "Backspace", "Delete"];
	  for (let c = 33; c < 127; c++) candidates.push(String.fromCharCode(c));
	  const unlisted = candidates.filter((k) => !listed.includes(k) && answers(k));
	  return { listed, unanswered, unlisted };
	})()`)
	if len(got.Listed) < 10 || len(got.Unanswered) > 0 || len(got.Unlisted) > 0 {
		t.Errorf("keyboard help lists %q; listed but not answered %q; answered but not listed %q", got.Listed, got.Unanswered, got.Unlisted)
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("errors on the page:\n%s", strings.Join(e, "\n"))
	}
}
