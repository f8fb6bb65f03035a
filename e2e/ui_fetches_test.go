package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/testfixture"
	loaderinput "github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

// TestUICaptureFetches records a real consumer (watch --record against a
// kfake broker with a committed and an open transaction), serves the
// capture, and checks that the fetches route lists its Fetch responses and
// that the timeline draws each as a bar from its fetch offset over the
// batches it returned, whose hover names the broker's LSO/HWM and the
// aborted-transactions list that response carried.
func TestUICaptureFetches(t *testing.T) {
	addr, _ := testfixture.WatchCluster(t)
	file := filepath.Join(t.TempDir(), "live.raw")
	if out, err := runWatchArgs(t, "--bootstrap", addr, "--topic", "w", "--partition", "0", "--once", "--record", file); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ld, err := loaderinput.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	cat := newCatalog(t, opened("cap", file, ld))
	var s *source
	for _, c := range cat.list() {
		if l := c.get(); c.id == "cap" && len(l.Fetches) > 0 && l.Fetches[0].Isolation == txnindex.ReadCommitted {
			s = c
		}
	}
	if s == nil {
		t.Fatalf("no read_committed consumer with fetches in the capture (%d sources)", len(cat.list()))
	}
	l := s.get()
	ctx, _, _ := browser(t, false)
	srv := httptest.NewServer(cat.srv.Handler())
	t.Cleanup(srv.Close)

	// The route: one entry per captured response, as the capture has it.
	res, err := http.Get(fmt.Sprintf("%s/api/v1/sources/%s/partitions/%s/%d/fetches", srv.URL, s.id, s.topic, s.partition))
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Fetches []api.FetchJSON }
	err = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || len(body.Fetches) != len(l.Fetches) {
		t.Fatalf("fetches: %d %v, %d entries for %d captured", res.StatusCode, err, len(body.Fetches), len(l.Fetches))
	}
	for i, f := range body.Fetches {
		cf := l.Fetches[i]
		if f.Offset != cf.Offset || f.LastStableOffset != cf.Response.LastStableOffset || f.HighWatermark != cf.Response.HighWatermark ||
			f.Batches != len(cf.Response.Batches) || (f.Aborted == nil) != (cf.Response.AbortedTransactions == nil) {
			t.Errorf("fetch %d: %+v, captured %+v", i, f, cf)
		}
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1),
		chromedp.Poll[chromedp.Void](`window.txnscope.fetches() > 0`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatal(err)
	}
	// Each bar starts at its fetch offset and ends with the last batch
	// returned (a tick for an empty response).
	var withBatches = -1
	for i, f := range body.Fetches {
		sel := fmt.Sprintf(`[data-testid="fetch-%d"]`, i)
		box := eval[struct{ X, W float64 }](t, ctx, `(() => { const r = document.querySelector('`+sel+`').getBoundingClientRect(); return {x: r.left, w: r.width}; })()`)
		if f.Offset < 0 {
			continue
		}
		x0 := eval[float64](t, ctx, fmt.Sprintf(`window.txnscope.xAt(%d)`, f.Offset))
		if math.Abs(box.X-x0) > 1.5 {
			t.Errorf("%s at x %.1f, want %.1f (offset %d)", sel, box.X, x0, f.Offset)
		}
		if f.Batches > 0 {
			withBatches = i
			x1 := eval[float64](t, ctx, fmt.Sprintf(`window.txnscope.xAt(%d)`, *f.LastOffset+1))
			if math.Abs(box.X+box.W-x1) > 1.5 {
				t.Errorf("%s ends at x %.1f, want %.1f (after offset %d)", sel, box.X+box.W, x1, *f.LastOffset)
			}
		}
	}
	if withBatches < 0 {
		t.Fatalf("no captured fetch returned batches: %+v", body.Fetches)
	}
	// Hover shows what the broker said in that response.
	f := body.Fetches[withBatches]
	sel := fmt.Sprintf(`[data-testid="fetch-%d"]`, withBatches)
	c := eval[struct{ X, Y float64 }](t, ctx, `(() => { const r = document.querySelector('`+sel+`').getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`)
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, c.X, c.Y), chromedp.WaitVisible(chromedp.CSS(`[data-testid="fetch-tip"]`))); err != nil {
		t.Fatal(err)
	}
	tip := text(t, ctx, `[data-testid="fetch-tip"]`)
	for _, want := range []string{
		fmt.Sprintf("at offset %d", f.Offset),
		fmt.Sprintf("fetch %d at offset", withBatches+1),
		fmt.Sprintf("offsets %d–%d in %s, ", *f.FirstBatch, *f.LastOffset, txnindex.Plural(f.Batches, "batch", "batches")),
		fmt.Sprintf("LSO %d · HWM %d", f.LastStableOffset, f.HighWatermark),
		"aborted transactions: ",
	} {
		if !strings.Contains(tip, want) {
			t.Errorf("fetch tip %q lacks %q", tip, want)
		}
	}
	ab := text(t, ctx, `[data-testid="fetch-tip-aborted"]`)
	switch {
	case f.Aborted == nil && !strings.Contains(ab, "null"):
		t.Errorf("null list shown as %q", ab)
	case f.Aborted != nil && len(f.Aborted) == 0 && !strings.Contains(ab, "empty"):
		t.Errorf("empty list shown as %q", ab)
	}
	for _, a := range f.Aborted {
		if w := fmt.Sprintf("producer %d from %d", a.ProducerID, a.FirstOffset); !strings.Contains(ab, w) {
			t.Errorf("aborted list %q lacks %q", ab, w)
		}
	}
	// A click pins the tip: it stays when the pointer leaves.
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(c.X, c.Y), chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, c.X, c.Y+200), chromedp.Sleep(100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if hidden := eval[bool](t, ctx, `document.querySelector('[data-testid="fetch-tip"]').hidden`); hidden {
		t.Error("fetch tip hidden after a click and the pointer leaving")
	}
	// The banner above the timeline says what the broker said, as the
	// panel does: not "LSO equals the high watermark" of the batches alone.
	if last := body.Fetches[len(body.Fetches)-1]; last.LastStableOffset < last.HighWatermark {
		want := fmt.Sprintf("The broker reported LSO %d below its high watermark %d", last.LastStableOffset, last.HighWatermark)
		if got := text(t, ctx, `[data-testid="pinned"]`); !strings.Contains(got, want) {
			t.Errorf("banner %q, want %q", got, want)
		}
	}
	screenshot(t, ctx, "TestUICaptureFetches")
}
