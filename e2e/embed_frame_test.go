package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestEmbedInHiddenContainer frames the embed inside a collapsed
// <details>, as a course page folds an example away: while hidden the
// frame has no size, and the timeline must wait without an error
// (getImageData of a 0-pixel minimap throws IndexSizeError); opened, it
// draws the timeline and the minimap.
func TestEmbedInHiddenContainer(t *testing.T) {
	ctx, _, cat := browser(t, false)
	routes := cat.srv.Handler()
	mux := http.NewServeMux()
	mux.HandleFunc("/course", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!DOCTYPE html><title>course</title><p>A course page.</p>
<details id="d"><summary id="s">Show the example</summary><iframe id="f" src="/embed/interleaved/demo-interleaved/0" style="width:1000px;height:520px;border:1px solid #888"></iframe></details>`)
	})
	mux.Handle("/", routes)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	errs := pageErrors(ctx)
	const frameDone = `(() => { const w = document.getElementById("f").contentWindow; return !!w && !!w.txnscope && !!w.txnscope.state() && w.txnscope.state().done; })()`
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/course"), pollFresh(frameDone, 15*time.Second), chromedp.Sleep(1200*time.Millisecond)); err != nil {
		t.Fatalf("the folded frame never loaded its stream: %v", err)
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("errors while folded:\n%s", strings.Join(e, "\n"))
	}
	// Opened: the plot and the minimap are drawn in the decision colours.
	const painted = `(() => {
	  const d = document.getElementById("f").contentDocument, cs = getComputedStyle(d.documentElement);
	  const hex = cs.getPropertyValue("--delivered").trim(), want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
	  const count = (c) => { if (!c.width || !c.height) return 0; const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0;
	    for (let i = 0; i < px.length; i += 4) if (px[i] === want[0] && px[i + 1] === want[1] && px[i + 2] === want[2]) n++; return n; };
	  return count(d.querySelector('[data-testid="canvas"]')) > 50 && count(d.querySelector('[data-testid="minimap"]')) > 50;
	})()`
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#s")), pollFresh(painted, 10*time.Second)); err != nil {
		t.Errorf("opened, the frame never drew its timeline and minimap: %v", err)
	}
	tempScreenshot(t, ctx, "TestEmbedInHiddenContainer")
	if e := errs(); len(e) > 0 {
		t.Errorf("errors on the page:\n%s", strings.Join(e, "\n"))
	}
}

// TestEmbedSnippetCopyResponsive: the partition page's embed snippet has a
// copy button that copies it, and the snippet, pasted into a narrow column
// (a phone's, 360 px) of a short window, fits it: no fixed 1200×820.
func TestEmbedSnippetCopyResponsive(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	errs := pageErrors(ctx)
	s := cat.find("interleaved", "demo-interleaved", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1),
		chromedp.Click(chromedp.CSS(`[data-testid="embed-button"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="embed-copy"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="embed-copy"]`)),
		pollFresh(`document.querySelector('[data-testid="embed-copied"]').textContent !== ""`, 5*time.Second)); err != nil {
		t.Fatalf("copy: %v", err)
	}
	snippet := eval[string](t, ctx, `document.querySelector('[data-testid="embed-snippet"]').value`)
	if got := text(t, ctx, `[data-testid="embed-copied"]`); got != "copied" {
		t.Errorf("after the copy button: %q", got)
	}
	if got := eval[[]string](t, ctx, `window.txnscopeDiagnosis.copies().map((c) => c.text)`); len(got) != 1 || got[0] != snippet {
		t.Errorf("copied %q, want the snippet %q", got, snippet)
	}
	tempScreenshot(t, ctx, "TestEmbedSnippetCopyResponsive-box")
	if strings.Contains(snippet, `width="1200"`) || strings.Contains(snippet, `height="820"`) {
		t.Errorf("the snippet has a fixed size: %s", snippet)
	}
	// Pasted into a 360 px column of a 640 px tall window.
	if err := chromedp.Do(ctx, viewport(800, 640), chromedp.Navigate(srv.URL+"/lessons")); err != nil {
		t.Fatal(err)
	}
	defer chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
		return err
	}))
	box := eval[[]float64](t, ctx, fmt.Sprintf(`(() => {
	  document.body.innerHTML = '<div id="col" style="width:360px;padding:0;margin:0"></div>';
	  document.getElementById("col").innerHTML = %q;
	  const r = document.querySelector("#col iframe").getBoundingClientRect();
	  return [r.width, r.height];
	})()`, snippet))
	if box[0] > 360 || box[0] < 300 || box[1] > 640*0.9+1 || box[1] < 300 {
		t.Errorf("in a 360 px column of a 640 px window the frame is %.0f×%.0f", box[0], box[1])
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("errors on the page:\n%s", strings.Join(e, "\n"))
	}
}
