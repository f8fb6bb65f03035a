package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// TestDiagnosisPanel opens the stuck-LSO demo: the panel names the pinning
// transaction, its abort command copies, the discard range moves the view,
// and the transaction is highlighted on the timeline. The interleaved demo
// is clear.
func TestDiagnosisPanel(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	// Let the page write (and the test read) the clipboard.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: srv.URL})
		if err != nil {
			t.Logf("grant %s: %v (the textarea fallback is checked instead)", name, err)
		}
	}
	s := cat.find("stuck-lso", "demo-stuck-lso", 0)
	u := timelineURL(srv, s) + "?bootstrap=kafka-1:9092"
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(`[data-testid="diagnosis"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if st, _ := attr(ctx, `[data-testid="diagnosis"]`, "data-state"); st != "stuck" {
		t.Errorf("diagnosis state %q, want stuck", st)
	}
	l := s.get()
	for sel, want := range map[string]string{
		`[data-testid="diag-lso"]`:         fmt.Sprint(l.LastStableOffset),
		`[data-testid="diag-hwm"]`:         fmt.Sprint(l.HighWatermark),
		`[data-testid="diag-lag-offsets"]`: fmt.Sprintf("%d offsets", l.HighWatermark-l.LastStableOffset),
		`[data-testid="discard-count"]`:    "3 records",
		`[data-testid="pinned-state"]`:     "late, hanging not confirmed",
	} {
		if got := strings.TrimSpace(text(t, ctx, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	pin := eval[map[string]string](t, ctx, `Object.assign({}, document.querySelector('[data-testid="pinned-by"]').dataset)`)
	if pin["producer"] != "6" || pin["firstOffset"] != "3" || pin["state"] != "late" {
		t.Errorf("pinned-by %v, want producer 6 at offset 3, late", pin)
	}
	if who := text(t, ctx, `[data-testid="pinned-by"]`); !strings.Contains(who, "producer 6") || !strings.Contains(who, "offset 3") || !strings.Contains(who, "KIP-664") {
		t.Errorf("pinned-by text %q", who)
	}
	if ms, _ := attr(ctx, `[data-testid="diag-lag-time"]`, "data-ms"); ms == "" || ms == "0" {
		t.Errorf("lag in time %q", ms)
	}
	const cmd = "kafka-transactions.sh --bootstrap-server kafka-1:9092 abort --topic demo-stuck-lso --partition 0 --start-offset 3"
	if got := text(t, ctx, `[data-testid="abort-command"]`); got != cmd {
		t.Errorf("abort command %q, want %q", got, cmd)
	}
	if got := text(t, ctx, `[data-testid="print-command"]`); !strings.HasPrefix(got, "kcat -C -b kafka-1:9092 -t demo-stuck-lso -p 0 -o 3 -c 3") {
		t.Errorf("print command %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="open-transactions"] tbody tr[data-state="late"]').length`); n != len(l.Open) {
		t.Errorf("%d open transactions listed as late, want %d", n, len(l.Open))
	}

	// The pinning transaction is highlighted on the timeline, over its batches.
	hl := eval[struct {
		Producer, First, Last int64
		Shown                 bool
		Lane                  int
	}](t, ctx, `window.txnscope.pinned()`)
	if !hl.Shown || hl.Producer != 6 || hl.First != 3 || hl.Last != 5 || hl.Lane < 1 {
		t.Errorf("highlight %+v", hl)
	}
	box := eval[struct{ X, Y, W, H float64 }](t, ctx, `(() => { const e = document.querySelector('[data-testid="pinned-highlight"]'); if (!e || e.hidden) return {}; const r = e.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; })()`)
	p := eval[struct{ X, Y float64 }](t, ctx, `window.txnscope.pointOf(4)`)
	if box.W <= 0 || p.X < box.X || p.X > box.X+box.W || p.Y < box.Y || p.Y > box.Y+box.H {
		t.Errorf("highlight box %+v does not cover offset 4 at %+v", box, p)
	}

	// Copy: the clipboard holds the command, or the fallback says "copied".
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="copy-abort-command"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="copy-abort-command"]').parentElement.querySelector('.copied').textContent === "copied"`,
			chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("copy: %v", err)
	}
	copies := eval[[]struct{ Text, How string }](t, ctx, `window.txnscopeDiagnosis.copies()`)
	if len(copies) != 1 || copies[0].Text != cmd {
		t.Errorf("copied %+v, want the abort command", copies)
	}
	if copies[0].How == "clipboard" {
		clip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Logf("readText: %v", err)
		} else if clip != cmd {
			t.Errorf("clipboard %q, want %q", clip, cmd)
		}
	}
	t.Logf("copied via %s", copies[0].How)

	// The discard range moves the view there without leaving the page.
	if got := text(t, ctx, `[data-testid="discard-range-3-5"]`); got != "3–5" {
		t.Errorf("discard range label %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="discard-range-3-5"]`)), chromedp.Sleep(150*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	v := eval[struct{ View struct{ From, To float64 } }](t, ctx, `window.txnscope.state()`).View
	if v.From > 3 || v.To < 6 || v.To-v.From > 12 {
		t.Errorf("after the range link the view is %+v, want around 3-5", v)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "/partitions/demo-stuck-lso/0") {
		t.Errorf("the range link left the page: %s", loc)
	}
	// Back to the whole log for the picture.
	chromedp.Do(ctx, js(`window.txnscope.setView(-1, 13)`), chromedp.Sleep(150*time.Millisecond))
	screenshot(t, ctx, "TestDiagnosisPanel")

	// A partition whose LSO nothing pins is "clear".
	c := cat.find("interleaved", "demo-interleaved", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, c)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="diagnosis-clear"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if st, _ := attr(ctx, `[data-testid="diagnosis"]`, "data-state"); st != "clear" {
		t.Errorf("interleaved: diagnosis state %q, want clear", st)
	}
	if v := strings.TrimSpace(text(t, ctx, `[data-testid="diagnosis-verdict"]`)); v != "clear" {
		t.Errorf("interleaved verdict %q", v)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="pinned-highlight"], [data-testid="copy-abort-command"]').length`); n != 0 || eval[bool](t, ctx, `window.txnscope.pinned() !== null`) {
		t.Errorf("interleaved: a highlight or abort command is shown though nothing pins the LSO")
	}
	screenshot(t, ctx, "TestDiagnosisPanelClear")
}

// TestPartitionListByLag: the index lists every demo in the demos'
// section, largest LSO lag first (loaded data has its own ranking above,
// TestIndexPageScale).
func TestPartitionListByLag(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="demo-list"]`))); err != nil {
		t.Fatal(err)
	}
	rows := eval[[]struct{ ID, Lag, State, Text string }](t, ctx,
		`Array.from(document.querySelectorAll('[data-testid="demo-list"] [data-testid^="partition-row-"]')).map((r) => ({id: r.dataset.testid, lag: r.dataset.lag || "", state: r.dataset.state || "", text: r.textContent}))`)
	if len(rows) != len(cat.list()) {
		t.Fatalf("%d rows, want %d", len(rows), len(cat.list()))
	}
	if rows[0].ID != "partition-row-stuck-lso-demo-stuck-lso-0" || rows[0].State != "late" || !strings.Contains(rows[0].Text, "producer 6") {
		t.Errorf("first row %+v, want stuck-lso pinned by producer 6 (late)", rows[0])
	}
	prev := int64(1 << 62)
	for _, r := range rows {
		n, err := strconv.ParseInt(r.Lag, 10, 64)
		if err != nil {
			t.Errorf("%s: data-lag %q", r.ID, r.Lag)
			continue
		}
		if n > prev {
			t.Errorf("%s: lag %d after %d: not sorted by lag", r.ID, n, prev)
		}
		prev = n
		s := cat.list()[0]
		for _, c := range cat.list() {
			if r.ID == fmt.Sprintf("partition-row-%s-%s-%d", c.id, c.topic, c.partition) {
				s = c
			}
		}
		if l := s.get(); n != l.HighWatermark-l.LastStableOffset {
			t.Errorf("%s: lag %d, want %d", r.ID, n, l.HighWatermark-l.LastStableOffset)
		}
	}
	screenshot(t, ctx, "TestPartitionListByLag")
}

// TestDiagnosisPanelFollowsPosition: setting the consumer position on the
// timeline page swaps in the diagnosis panel for that position without a
// reload, and its lag split is the API's for the same position.
func TestDiagnosisPanelFollowsPosition(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("stuck-lso", "demo-stuck-lso", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="diagnosis"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="lag-split"]').length`); n != 0 {
		t.Fatalf("a lag split is shown without a position")
	}
	eval[bool](t, ctx, `window.__marker = "same page"; true`)
	for i, pos := range []int64{0, 7} {
		if err := chromedp.Do(ctx,
			js(fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid="position"]'); e.value = "%d"; e.dispatchEvent(new Event("change", {bubbles: true})); })()`, pos)),
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`window.txnscopeDiagnosis.refreshes() === %d && document.querySelector('[data-testid="diagnosis"]').dataset.position === "%d"`, i+1, pos),
				chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("position %d: the panel did not follow: %v", pos, err)
		}
		var api struct {
			Lag struct {
				ToDeliver      int64 `json:"records_to_deliver"`
				BehindOpenTxns int64 `json:"records_behind_open_transactions"`
				Offsets        int64 `json:"offsets"`
			} `json:"lag"`
		}
		getJSONInto(t, fmt.Sprintf("%s/api/v1/sources/%s/partitions/%s/%d/diagnosis?position=%d", srv.URL, s.id, s.topic, s.partition, pos), &api)
		split := text(t, ctx, `[data-testid="lag-split"]`)
		for _, want := range []string{
			fmt.Sprintf("From position %d ", pos),
			fmt.Sprintf(": %d offsets", api.Lag.Offsets),
			fmt.Sprintf("%d records still to deliver", api.Lag.ToDeliver),
			fmt.Sprintf("%d waiting behind open transactions", api.Lag.BehindOpenTxns),
		} {
			if !strings.Contains(split, want) {
				t.Errorf("position %d: lag split %q lacks %q", pos, split, want)
			}
		}
	}
	if eval[string](t, ctx, `window.__marker || ""`) != "same page" {
		t.Errorf("the page reloaded")
	}
	// The copy button still works on the swapped-in panel.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="copy-abort-command"]`)),
		chromedp.Poll[chromedp.Void](`window.txnscopeDiagnosis.copies().length === 1`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Errorf("copy on the refreshed panel: %v", err)
	}
	chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="lag-split"]`)))
	screenshot(t, ctx, "TestDiagnosisPanelFollowsPosition")
}
