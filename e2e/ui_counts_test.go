package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/txnscope/txnscope/txnindex"
)

// TestUIViewCounts: under the minimap the page shows the true record
// counts of the offsets in view, equal to the engine's counts of that range
// for the chosen isolation, and they follow the view and the switch.
func TestUIViewCounts(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	l := s.get()
	shown := func(iso string) (txnindex.Counts, map[string]int64) {
		t.Helper()
		if err := chromedp.Do(ctx, pollFresh(fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid="view-counts"]'); return !e.hidden && e.dataset.isolation === %q && e.dataset.from !== ""; })()`, iso), 10*time.Second)); err != nil {
			t.Fatalf("counts for %s never shown: %v", iso, err)
		}
		got := eval[map[string]any](t, ctx, `(() => { const e = document.querySelector('[data-testid="view-counts"]'), o = { from: +e.dataset.from, to: +e.dataset.to };
			e.querySelectorAll('[data-kind]').forEach((b) => { o[b.dataset.kind] = +b.textContent.replace(/[^0-9]/g, ""); }); return o; })()`)
		m := map[string]int64{}
		for k, v := range got {
			m[k] = int64(v.(float64))
		}
		isoV, _ := txnindex.ParseIsolation(iso)
		want := txnindex.NewCounts(m["from"], m["to"])
		for d := range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: isoV}) {
			want.Add(&d)
		}
		return want, m
	}
	check := func(iso string) txnindex.Counts {
		t.Helper()
		want, m := shown(iso)
		for k, w := range map[string]int64{"records": want.Records(), "delivered": want.Delivered, "aborted": want.Aborted, "control": want.ControlMarkers, "pending": want.Pending} {
			if g, ok := m[k]; (ok || w != 0 || k == "delivered") && g != w {
				t.Errorf("%s, offsets %d-%d: the page shows %s %d, the engine counts %d (page: %v)", iso, m["from"], m["to"], k, g, w, m)
			}
		}
		return want
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	whole := check("read_committed")
	if whole.From != l.LogStartOffset || whole.To != l.LogEndOffset-1 || whole.Aborted == 0 || whole.ControlMarkers == 0 {
		t.Errorf("the whole view counted %+v, want offsets %d-%d with aborted records and markers", whole, l.LogStartOffset, l.LogEndOffset-1)
	}
	screenshot(t, ctx, "TestUIViewCounts")
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`[data-testid="isolation"]`), "read_uncommitted"),
		js(`document.querySelector('[data-testid="isolation"]').dispatchEvent(new Event("change"))`)); err != nil {
		t.Fatal(err)
	}
	if ru := check("read_uncommitted"); ru.Aborted != 0 || ru.Delivered != whole.Delivered+whole.Aborted {
		t.Errorf("read_uncommitted counts %+v: the aborted records should be delivered", ru)
	}

	// A narrower view counts only its offsets.
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)+"?from=2&to=6"), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if part := check("read_committed"); part.From != 2 || part.To > 6 || part.Records() >= whole.Records() {
		t.Errorf("view 2-6 counted %+v", part)
	}
}

// TestUIKeyboardJumps: with the timeline focused, a and A open the next and
// previous aborted batch, l centres the view on the LSO, and ? (or its
// button) shows the keyboard help, which Escape closes.
func TestUIKeyboardJumps(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	l := s.get()
	var aborted []int64 // first offsets of the aborted batches
	for d := range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
		if d.Verdict == txnindex.Aborted {
			aborted = append(aborted, d.From)
		}
	}
	if len(aborted) < 2 {
		t.Fatalf("the demo has %d aborted batches, want 2", len(aborted))
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)+"?from=0&to=4"), waitDone(1),
		js(`document.querySelector('[data-testid="timeline"]').focus()`)); err != nil {
		t.Fatal(err)
	}
	centre := eval[float64](t, ctx, `(() => { const v = window.txnscope.state().view; return (v.from + v.to) / 2; })()`)
	var next int64 = -1
	for _, a := range aborted {
		if float64(a) > centre {
			next = a
			break
		}
	}
	key := func(k string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
	}
	selected := func(want int64) {
		t.Helper()
		if err := chromedp.Do(ctx, pollFresh(fmt.Sprintf(`window.txnscope.state().selected === %d && !document.querySelector('[data-testid="detail"]').hidden && document.querySelector('[data-testid="detail"] h2').textContent.startsWith("batch %d")`, want, want), 5*time.Second)); err != nil {
			t.Fatalf("batch %d not selected: %v (state %v)", want, err, eval[map[string]any](t, ctx, `window.txnscope.state()`))
		}
		v := eval[map[string]any](t, ctx, `window.txnscope.state().view`)
		if f, to := v["from"].(float64), v["to"].(float64); float64(want) < f || float64(want) > to {
			t.Errorf("batch %d selected outside the view %v-%v", want, f, to)
		}
	}
	key("a")
	selected(next)
	key("A")
	var prev int64 = -1
	for _, a := range aborted {
		if a < next {
			prev = a
		}
	}
	if prev < 0 {
		t.Fatalf("no aborted batch before %d in %v", next, aborted)
	}
	selected(prev)

	key(kb.Escape)
	if eval[bool](t, ctx, `!document.querySelector('[data-testid="detail"]').hidden`) {
		t.Error("Escape did not close the detail")
	}

	// l on the stuck-LSO demo, whose LSO is inside the log.
	stuck := cat.find("stuck-lso", "demo-stuck-lso", 0)
	lso := stuck.get().LastStableOffset
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, stuck)+"?from=8&to=12"), waitDone(1),
		js(`document.querySelector('[data-testid="timeline"]').focus()`)); err != nil {
		t.Fatal(err)
	}
	key("l")
	if err := chromedp.Do(ctx, pollFresh(fmt.Sprintf(`(() => { const v = window.txnscope.state().view; return Math.abs((v.from + v.to) / 2 - %d) < 0.5; })()`, lso), 5*time.Second)); err != nil {
		t.Errorf("l did not centre the view on the LSO %d: %v", lso, eval[map[string]any](t, ctx, `window.txnscope.state().view`))
	}

	visible := func() bool { return eval[bool](t, ctx, `!document.querySelector('[data-testid="shortcuts"]').hidden`) }
	key("?")
	if !visible() {
		t.Fatal("? did not show the keyboard help")
	}
	if h := text(t, ctx, `[data-testid="shortcuts"]`); !strings.Contains(h, "aborted batch") || !strings.Contains(h, "LSO") {
		t.Errorf("keyboard help: %q", h)
	}
	screenshot(t, ctx, "TestUIKeyboardJumps")
	key(kb.Escape)
	if visible() {
		t.Error("Escape did not close the keyboard help")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="shortcuts-button"]`))); err != nil {
		t.Fatal(err)
	}
	if !visible() {
		t.Error("the ? button did not show the keyboard help")
	}
}
