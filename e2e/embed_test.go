package e2e

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/server"
)

// hostPage is another site's page that frames the embed route and records
// the message the timeline posts when it has drawn.
const hostPage = `<!DOCTYPE html><html><head><title>host</title></head><body>
<h1 style="font:16px sans-serif">A page on another origin</h1>
<iframe id="f" src="%s" style="width:1100px;height:400px;border:2px solid #888"></iframe>
<script>
addEventListener("message", (e) => {
  if (e.data && e.data.type === "txnscope:rendered") {
    document.body.dataset.rendered = e.origin;
    document.body.dataset.lanes = e.data.lanes;
    document.body.dataset.decisions = e.data.decisions;
  }
});
</script></body></html>`

// embedServers are a host page's server and a txnscope server (the demos)
// that lets it frame the pages when allowHost.
func embedServers(t *testing.T, allowHost bool) (host, main *httptest.Server) {
	t.Helper()
	host = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, hostPage, html.EscapeString(r.URL.Query().Get("src")))
	}))
	t.Cleanup(host.Close)
	cat := newCatalog(t, func(o *server.Options) {
		if allowHost {
			o.AllowedOrigins = []string{host.URL}
		}
	})
	main = httptest.NewServer(cat.srv.Handler())
	t.Cleanup(main.Close)
	return host, main
}

// TestEmbedRoute checks the embed page without a browser: no site chrome,
// and the frame-ancestors policy on it and on the other pages.
func TestEmbedRoute(t *testing.T) {
	host, main := embedServers(t, true)
	resp, body := get(t, main.URL+"/embed/interleaved/demo-interleaved/0?step=3&autoplay=1")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("embed: %s", resp.Status)
	}
	for _, bad := range []string{`class="top"`, `data-testid="summary"`, `data-testid="diagnosis"`} {
		if strings.Contains(body, bad) {
			t.Errorf("embed page holds %s", bad)
		}
	}
	for _, want := range []string{`data-testid="timeline"`, `data-testid="lane-7"`, `class="embed"`} {
		if !strings.Contains(body, want) {
			t.Errorf("embed page lacks %s", want)
		}
	}
	want := "frame-ancestors 'self' " + host.URL
	for _, p := range []string{"/", "/sources/interleaved/partitions/demo-interleaved/0", "/embed/interleaved/demo-interleaved/0"} {
		if resp, _ := get(t, main.URL+p); !strings.HasSuffix(resp.Header.Get("Content-Security-Policy"), "; "+want) {
			t.Errorf("%s: CSP %q, want %q", p, resp.Header.Get("Content-Security-Policy"), want)
		}
	}
	if resp, _ := get(t, main.URL+"/embed/interleaved/nope/0"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown partition: %s", resp.Status)
	}
	_, plain := embedServers(t, false)
	if resp, _ := get(t, plain.URL+"/embed/interleaved/demo-interleaved/0"); !strings.HasSuffix(resp.Header.Get("Content-Security-Policy"), "; frame-ancestors 'self'") {
		t.Errorf("default CSP %q", resp.Header.Get("Content-Security-Policy"))
	}
}

// TestEmbedCrossOrigin frames the embed route from a page on a second
// loopback port: with --allowed-origin for that page it draws (the timeline
// posts a message to its parent); without, Chromium refuses to render it.
func TestEmbedCrossOrigin(t *testing.T) {
	ctx, _, _ := browser(t, false)
	for _, allowed := range []bool{true, false} {
		host, main := embedServers(t, allowed)
		src := main.URL + "/embed/interleaved/demo-interleaved/0"
		resp, _ := get(t, src)
		csp := resp.Header.Get("Content-Security-Policy")
		if allowed != strings.Contains(csp, host.URL) {
			t.Errorf("allowed=%v: CSP %q", allowed, csp)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(host.URL+"/?src="+src)); err != nil {
			t.Fatal(err)
		}
		if allowed {
			err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.body.dataset.rendered !== undefined`, chromedp.WithPollingTimeout(15*time.Second)))
			if err != nil {
				t.Fatalf("the framed timeline did not report drawing: %v", err)
			}
			got := eval[map[string]string](t, ctx, `({...document.body.dataset})`)
			if got["rendered"] != main.URL || got["lanes"] != "3" || got["decisions"] != "9" {
				t.Errorf("message from the frame: %v, want origin %s, 3 lanes, 9 decisions", got, main.URL)
			}
			chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))
			screenshot(t, ctx, "TestEmbedCrossOrigin")
			continue
		}
		chromedp.Do(ctx, chromedp.Sleep(2*time.Second))
		if r := eval[bool](t, ctx, `document.body.dataset.rendered !== undefined`); r {
			t.Error("without --allowed-origin the framed timeline still drew")
		}
		screenshot(t, ctx, "TestEmbedCrossOrigin-refused")
	}
}

// lessonHostPage frames the embed route and keeps every step message its
// frame posts, in order.
const lessonHostPage = `<!DOCTYPE html><html><head><title>host</title></head><body>
<h1 style="font:16px sans-serif">A course page on another origin</h1>
<iframe id="f" src="%s" style="width:1200px;height:820px;border:2px solid #888"></iframe>
<script>
window.steps = [];
addEventListener("message", (e) => {
  if (e.data && e.data.type === "txnscope:lesson-step") window.steps.push(Object.assign({ origin: e.origin }, e.data));
});
</script></body></html>`

// TestEmbedLessonStepAutoplay frames /embed/... from a second loopback
// port with ?step=N (the frame opens at step N, the timeline outlining its
// batch) and with ?autoplay=1 (the frame walks every step to the end by
// itself), as the frame reports to its host.
func TestEmbedLessonStepAutoplay(t *testing.T) {
	ctx, _, cat := browser(t, false)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, lessonHostPage, html.EscapeString(r.URL.Query().Get("src")))
	}))
	t.Cleanup(host.Close)
	main := httptest.NewServer(newCatalog(t, func(o *server.Options) { o.AllowedOrigins = []string{host.URL} }).srv.Handler())
	t.Cleanup(main.Close)
	ls := lessonOf(t, cat, "interleaved", "demo-interleaved")
	type stepMsg struct {
		Origin, Count, Decision, Highlight string
		Step, Steps                        int
	}
	steps := func() []stepMsg { return eval[[]stepMsg](t, ctx, `window.steps`) }

	const start = 4
	src := main.URL + fmt.Sprintf("/embed/interleaved/demo-interleaved/0?step=%d", start)
	if err := chromedp.Do(ctx, chromedp.Navigate(host.URL+"/?src="+url.QueryEscape(src)),
		chromedp.Poll[chromedp.Void](`window.steps.some((m) => m.highlight !== "")`, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Fatalf("the framed lesson reported no step with the timeline outlined: %v (%v)", err, steps())
	}
	got := steps()
	m := got[len(got)-1]
	b := ls.Steps[start].Batch
	if m.Origin != main.URL || m.Step != start || m.Count != fmt.Sprintf("step %d of %d", start, len(ls.Steps)-1) ||
		m.Decision != cellAt(ls, start-1, start) || m.Highlight != fmt.Sprintf("%d-%d", b.From, b.To) {
		t.Errorf("frame reports %+v, want step %d (%s), batch %d-%d outlined, from %s", m, start, cellAt(ls, start-1, start), b.From, b.To, main.URL)
	}
	for _, m := range got {
		if m.Step != start {
			t.Errorf("without autoplay the frame moved to step %d", m.Step)
		}
	}
	chromedp.Do(ctx, chromedp.Sleep(500*time.Millisecond)) // let the canvas draw the outline for the picture
	screenshot(t, ctx, "TestEmbedLessonStep")

	// Autoplay from step 1, quickly: every step in order to the last.
	src = main.URL + "/embed/interleaved/demo-interleaved/0?step=1&autoplay=1&interval=250"
	if err := chromedp.Do(ctx, chromedp.Navigate(host.URL+"/?src="+url.QueryEscape(src)),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`window.steps.some((m) => m.step === %d)`, len(ls.Steps)-1), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("autoplay never reached the last step: %v (%v)", err, steps())
	}
	var seen []int
	for _, m := range steps() {
		if len(seen) == 0 || seen[len(seen)-1] != m.Step {
			seen = append(seen, m.Step)
		}
	}
	for i, n := range seen {
		if n != i+1 {
			t.Fatalf("autoplay showed steps %v, want 1 to %d in order", seen, len(ls.Steps)-1)
		}
	}
	if len(seen) != len(ls.Steps)-1 {
		t.Errorf("autoplay showed steps %v", seen)
	}
	if r, _ := get(t, main.URL+"/embed/interleaved/demo-interleaved/0?autoplay=1&interval=5"); r.StatusCode != http.StatusBadRequest {
		t.Errorf("interval=5: %s", r.Status)
	}
}
