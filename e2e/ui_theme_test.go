package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// prefersScheme emulates the system's colour scheme, "light" or "dark", as
// a person's operating system setting would set it.
func prefersScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// pageErrors collects what the page throws or logs as an error, from now
// on; the returned function reads them.
func pageErrors(ctx context.Context) func() []string {
	var mu sync.Mutex
	var errs []string
	chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			errs = append(errs, msg)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				errs = append(errs, "console.error: "+strings.Join(parts, " "))
			}
		}
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), errs...)
	}
}

// tempScreenshot captures the viewport into the system's temp directory
// (txnscope-ui/<name>.png), not into the repository, and returns the path.
func tempScreenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	dir := filepath.Join(os.TempDir(), "txnscope-ui")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
	return p
}

// contrastJS defines, in the page, the WCAG 2 contrast of what a person
// sees: window.__contrast.text(selectors) checks the text of every visible
// element the selectors match against the background it is drawn on
// (translucent backgrounds composited up to the first opaque one), and
// .vars(pairs) checks theme colours (app.css's custom properties) against
// each other. Each returns the pairs below their minimum.
const contrastJS = `window.__contrast = (() => {
  const parse = (s) => { const m = s.match(/rgba?\(([^)]*)\)/); if (!m) return null; const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return p.length > 3 ? p : [p[0], p[1], p[2], 1]; };
  const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
  const lum = (p) => 0.2126 * lin(p[0]) + 0.7152 * lin(p[1]) + 0.0722 * lin(p[2]);
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const over = (top, under) => { const a = top[3]; return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat(1); };
  function background(el) {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = parse(getComputedStyle(document.documentElement).backgroundColor) || [255, 255, 255, 1];
    if (bg[3] < 1) bg = over(bg, [255, 255, 255, 1]);
    for (let i = layers.length - 1; i >= 0; i--) bg = layers[i][3] >= 1 ? layers[i] : over(layers[i], bg);
    return bg;
  }
  function color(v) { const d = document.createElement("div"); d.style.color = "var(" + v + ")"; document.body.appendChild(d); const c = parse(getComputedStyle(d).color); d.remove(); return c; }
  function ownText(el) { let s = ""; for (const n of el.childNodes) if (n.nodeType === 3) s += n.textContent; return s.trim(); }
  return {
    text(selectors, min) {
      const bad = [], seen = [];
      for (const sel of selectors) {
        const els = [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length && ownText(e) && getComputedStyle(e).visibility !== "hidden");
        if (!els.length) { bad.push(sel + ": nothing visible"); continue; }
        for (const e of els.slice(0, 5)) {
          const fg = parse(getComputedStyle(e).color), bg = background(e), r = ratio(over(fg, bg), bg);
          seen.push(sel);
          if (r < min) bad.push(sel + " «" + ownText(e).slice(0, 30) + "»: " + getComputedStyle(e).color + " on rgb(" + bg.slice(0, 3).join(",") + ") is " + r.toFixed(2) + ":1");
        }
      }
      return bad;
    },
    // all checks the text of every visible element of the page with text
    // of its own, except disabled controls (WCAG exempts inactive ones).
    all(min) {
      const bad = [];
      for (const e of document.body.querySelectorAll("*")) {
        if (!ownText(e) || !e.getClientRects().length || e.closest("[hidden], script, style, option, :disabled") || getComputedStyle(e).visibility === "hidden") continue;
        const fg = parse(getComputedStyle(e).color), bg = background(e), r = ratio(over(fg, bg), bg);
        if (r < min) bad.push((e.dataset.testid || e.tagName.toLowerCase() + "." + e.className) + " «" + ownText(e).slice(0, 30) + "»: " + getComputedStyle(e).color + " on rgb(" + bg.slice(0, 3).join(",") + ") is " + r.toFixed(2) + ":1");
      }
      return bad;
    },
    vars(pairs, min) {
      const bad = [];
      for (const [a, b] of pairs) {
        const ca = color(a), cb = color(b);
        const r = ratio(ca, cb[3] < 1 ? over(cb, color("--bg")) : cb);
        if (r < min) bad.push(a + " on " + b + ": " + r.toFixed(2) + ":1");
      }
      return bad;
    },
    color,
    // unset lists the theme's custom properties (declared on :root in any
    // rule) that do not resolve on the page: a typo, or a property that
    // refers to itself, is invalid and silently falls back.
    unset() {
      const names = new Set(), walk = (rules) => { for (const r of rules) { if (r.cssRules) walk(r.cssRules); if (r.style && /:root/.test(r.selectorText || "")) for (const p of r.style) if (p.startsWith("--")) names.add(p); } };
      for (const sh of document.styleSheets) { try { walk(sh.cssRules); } catch (e) { /* another origin's sheet */ } }
      const cs = getComputedStyle(document.documentElement);
      return names.size ? [...names].filter((n) => !cs.getPropertyValue(n).trim()) : ["no custom property found"];
    },
  };
})(); true`

// decisionKinds are the colours the timeline draws decisions in (app.css
// --delivered …; the canvas reads them, timeline-draw.js readTheme).
var decisionKinds = []string{"delivered", "aborted", "commit", "abort", "control", "pending", "before", "gap"}

// TestUIThemeContrast opens a partition's page with the system's colour
// scheme light, then dark, and checks what a person sees in each: the text
// at 4.5:1 against its background, every decision colour at 3:1 against
// the page and the lane stripes it is drawn on, the text drawn on decision
// colours at 4.5:1, and the canvas drawn in the theme's colours (its
// pixels). The header's toggle then overrides the system, and the choice
// survives a reload. The embed and the static export follow the scheme too.
func TestUIThemeContrast(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	errs := pageErrors(ctx)
	s := cat.find("interleaved", "demo-interleaved", 0)
	textSelectors := []string{".top .brand", ".top .tag", `[data-testid="nav-lessons"]`, `[data-testid="theme-toggle"]`,
		".summary h1", ".summary dt", ".summary dd", ".pinned a", ".lane strong", ".lane .note", ".band", ".lane-head",
		".axis .tick", ".marker span", ".legend li", ".status", ".diagnosis h2", ".diagnosis p",
		".lesson-entry a", ".embed-box summary"}
	var pairs [][2]string
	for _, k := range decisionKinds {
		for _, bg := range []string{"--bg", "--lane-a", "--lane-b", "--panel", "--mini-bg"} {
			pairs = append(pairs, [2]string{"--" + k, bg})
		}
	}
	var onPairs [][2]string
	for _, k := range decisionKinds[:7] {
		onPairs = append(onPairs, [2]string{"--on-" + k, "--" + k})
	}
	onPairs = append(onPairs, [2]string{"--on-pin", "--pin"}, [2]string{"--fg", "--plate"}, [2]string{"--tooltip-fg", "--tooltip-bg"})

	for _, scheme := range []string{"light", "dark"} {
		if err := chromedp.Do(ctx, prefersScheme(scheme), chromedp.Navigate(timelineURL(srv, s)), waitDone(1), js(contrastJS)); err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		if got := eval[string](t, ctx, `getComputedStyle(document.documentElement).colorScheme`); got != scheme {
			t.Errorf("%s: the page's color-scheme is %q", scheme, got)
		}
		if bad := eval[[]string](t, ctx, `__contrast.unset()`); len(bad) > 0 {
			t.Errorf("%s theme: custom properties that do not resolve: %q", scheme, bad)
		}
		if bad := eval[[]string](t, ctx, fmt.Sprintf(`__contrast.text(%s, 4.5)`, jsonList(textSelectors))); len(bad) > 0 {
			t.Errorf("%s theme: text below 4.5:1:\n%s", scheme, strings.Join(bad, "\n"))
		}
		if bad := eval[[]string](t, ctx, fmt.Sprintf(`__contrast.vars(%s, 3)`, jsonPairs(pairs))); len(bad) > 0 {
			t.Errorf("%s theme: decision colours below 3:1:\n%s", scheme, strings.Join(bad, "\n"))
		}
		if bad := eval[[]string](t, ctx, fmt.Sprintf(`__contrast.vars(%s, 4.5)`, jsonPairs(onPairs))); len(bad) > 0 {
			t.Errorf("%s theme: text on colours below 4.5:1:\n%s", scheme, strings.Join(bad, "\n"))
		}
		checkCanvasTheme(t, ctx, scheme)
		tempScreenshot(t, ctx, "TestUIThemeContrast-"+scheme)
		// Every text on the partition page, its lesson, the index and the
		// lessons list.
		for i, page := range []string{timelineURL(srv, s), lessonURL(srv.URL, s) + "?step=4", srv.URL + "/", srv.URL + "/lessons"} {
			if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("body")), chromedp.Sleep(300*time.Millisecond), js(contrastJS)); err != nil {
				t.Fatal(err)
			}
			if bad := eval[[]string](t, ctx, `__contrast.all(4.5)`); len(bad) > 0 {
				t.Errorf("%s theme, %s: text below 4.5:1:\n%s", scheme, page, strings.Join(bad, "\n"))
			}
			tempScreenshot(t, ctx, fmt.Sprintf("TestUIThemeContrast-page%d-%s", i, scheme))
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}

	// The toggle overrides the system (dark, from the loop) and is
	// remembered: a reload keeps the light theme.
	if got := text(t, ctx, `[data-testid="theme-toggle"]`); got != "Light theme" {
		t.Errorf("toggle in the dark theme reads %q, want Light theme", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="theme-toggle"]`)),
		pollFresh(`getComputedStyle(document.documentElement).colorScheme === "light"`, 5*time.Second)); err != nil {
		t.Fatalf("toggle to light: %v", err)
	}
	checkCanvasTheme(t, ctx, "light")
	if err := chromedp.Do(ctx, chromedp.Reload(), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, `getComputedStyle(document.documentElement).colorScheme + " " + localStorage.getItem("txnscope-theme")`); got != "light light" {
		t.Errorf("after a reload: color-scheme and stored choice %q, want light light", got)
	}
	if got := text(t, ctx, `[data-testid="theme-toggle"]`); got != "Dark theme" {
		t.Errorf("toggle in the light theme reads %q, want Dark theme", got)
	}
	checkCanvasTheme(t, ctx, "light")
	// Choosing the system's own theme (dark) forgets the choice: the page
	// follows the system again.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="theme-toggle"]`)),
		pollFresh(`getComputedStyle(document.documentElement).colorScheme === "dark"`, 5*time.Second)); err != nil {
		t.Fatalf("toggle back to dark: %v", err)
	}
	if got := eval[string](t, ctx, `String(localStorage.getItem("txnscope-theme")) + " " + (document.documentElement.dataset.theme || "system")`); got != "null system" {
		t.Errorf("after choosing the system's theme: stored choice and data-theme %q, want null system", got)
	}
	checkCanvasTheme(t, ctx, "dark")

	// The embed has no header: it follows the system.
	if err := chromedp.Do(ctx, prefersScheme("dark"), chromedp.Navigate(srv.URL+"/embed/interleaved/demo-interleaved/0"), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	checkCanvasTheme(t, ctx, "dark")
	tempScreenshot(t, ctx, "TestUIThemeContrast-embed-dark")

	// The static export, from file://, in both.
	out := exportDemo(t, "interleaved")
	for _, scheme := range []string{"dark", "light"} {
		if err := chromedp.Do(ctx, prefersScheme(scheme), chromedp.Navigate("file://"+out), waitDone(1)); err != nil {
			t.Fatal(err)
		}
		checkCanvasTheme(t, ctx, scheme)
		if n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="theme-toggle"]:not([hidden])').length`); n != 1 {
			t.Errorf("export (%s): %d theme toggles shown, want 1", scheme, n)
		}
		tempScreenshot(t, ctx, "TestUIThemeContrast-export-"+scheme)
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("errors on the pages:\n%s", strings.Join(e, "\n"))
	}
	_ = chromedp.Do(ctx, prefersScheme("light"))
}

// checkCanvasTheme reads the canvas's pixels: a delivered batch is drawn
// in the theme's --delivered and the lane around it in the theme's stripe,
// and the page's background is light or dark as the scheme says.
func checkCanvasTheme(t *testing.T, ctx context.Context, scheme string) {
	t.Helper()
	if err := chromedp.Do(ctx, js(contrastJS)); err != nil {
		t.Fatal(err)
	}
	probe := `(() => {
	  const li = document.querySelector('[data-testid^="batch-"][data-decision="delivered"]');
	  const off = Number(li.dataset.testid.slice(6)), p = window.txnscope.pointOf(off);
	  const c = document.querySelector('[data-testid="timeline"] canvas.main'), r = c.getBoundingClientRect(), k = c.width / r.width;
	  const px = (x, y) => Array.from(c.getContext("2d").getImageData(Math.round((x - r.left) * k), Math.round((y - r.top) * k), 1, 1).data);
	  const lh = window.txnscopeTimeline.laneH();
	  const rowTop = r.top + Math.floor((p.y - r.top) / lh) * lh;
	  return { cell: px(p.x, p.y - 10), lane: px(p.x, rowTop + 2), delivered: __contrast.color("--delivered"),
	    laneA: __contrast.color("--lane-a"), laneB: __contrast.color("--lane-b"),
	    page: __contrast.color("--bg"), body: (getComputedStyle(document.body).backgroundColor.match(/\d+/g) || []).map(Number) };
	})()`
	near := func(a, b []float64) bool {
		for i := 0; i < 3; i++ {
			if d := a[i] - b[i]; d > 4 || d < -4 {
				return false
			}
		}
		return true
	}
	// The canvas is redrawn on the frame after a theme change reaches the
	// page (a scheme emulated while the last page of a shared browser was
	// still drawing); a canvas that never takes the theme's colours fails.
	var got map[string][]float64
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got = eval[map[string][]float64](t, ctx, probe)
		if near(got["cell"], got["delivered"]) && (near(got["lane"], got["laneA"]) || near(got["lane"], got["laneB"])) || time.Now().After(deadline) {
			break
		}
	}
	if !near(got["cell"], got["delivered"]) {
		t.Errorf("%s: a delivered batch is drawn in %v, want the theme's %v", scheme, got["cell"], got["delivered"])
	}
	if !near(got["lane"], got["laneA"]) && !near(got["lane"], got["laneB"]) {
		t.Errorf("%s: the lane is drawn in %v, want the theme's %v or %v", scheme, got["lane"], got["laneA"], got["laneB"])
	}
	if dark := got["page"][0]+got["page"][1]+got["page"][2] < 3*128; dark != (scheme == "dark") {
		t.Errorf("%s scheme: the page's background is %v", scheme, got["page"])
	}
}

func jsonList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ",") + "]"
}

func jsonPairs(p [][2]string) string {
	q := make([]string, len(p))
	for i, x := range p {
		q[i] = fmt.Sprintf("[%q,%q]", x[0], x[1])
	}
	return "[" + strings.Join(q, ",") + "]"
}
