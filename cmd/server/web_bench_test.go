package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// BenchmarkWebTimeline1M measures the timeline in chromium on the generated
// 1M-batch demo: first paint of the visible window from navigation (cold:
// the first request builds the log; warm: a reload), the full stream, the
// draw time of pan and zoom frames (p95), and the JS heap. It prints the
// figures and asserts none of them. Run it with
//
//	go test -run '^$' -bench WebTimeline1M -benchtime 1x ./cmd/server
func BenchmarkWebTimeline1M(b *testing.B) {
	ctx, srv, cat := browser(b, true)
	s := cat.find("big", "demo-big", 0)
	type metrics struct {
		FirstPaintMs, StreamDoneMs, FrameP95 float64
		Frames                               int
		Heap                                 float64
	}
	for b.Loop() {
		for _, run := range []string{"cold", "warm"} {
			t0 := time.Now()
			if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
				b.Fatal(err)
			}
			wall := time.Since(t0)
			m := eval[metrics](b, ctx, `window.txnscope.metrics()`)
			b.Logf("%s: first paint of the window %.0f ms after navigation start, stream done %.0f ms after the socket opened (%v wall), heap %.1f MB",
				run, m.FirstPaintMs, m.StreamDoneMs, wall.Round(time.Millisecond), m.Heap/1e6)
			b.ReportMetric(m.FirstPaintMs, run+"-first-paint-ms")
			b.ReportMetric(m.StreamDoneMs, run+"-stream-ms")
		}
		screenshot(b, ctx, "BenchmarkWebTimeline1M-overview")
		// 120 frames each of pan and zoom, driven through the page's own
		// handlers, one per animation frame.
		for _, op := range []struct{ name, js string }{
			{"pan", `window.txnscope.pan(37)`},
			{"zoom", `window.txnscope.zoom(i % 40 < 20 ? 0.8 : 1.25)`},
			{"zoomed-in-pan", `window.txnscope.pan(-23)`},
		} {
			if op.name == "zoomed-in-pan" {
				eval[any](b, ctx, `window.txnscope.setView(500000, 500600)`)
			}
			js := `(async () => { window.txnscope.resetFrames();
				const iv = []; let last = performance.now();
				for (let i = 0; i < 120; i++) { ` + op.js + `; await new Promise(r => requestAnimationFrame(r)); const n = performance.now(); iv.push(n - last); last = n; }
				await new Promise(r => requestAnimationFrame(r));
				iv.sort((a, b) => a - b);
				const m = window.txnscope.metrics();
				return { drawP95: m.frameP95, frameP95: iv[Math.floor(iv.length * 0.95)], heap: m.heap }; })()`
			r, err := chromedp.Run(ctx, chromedp.Evaluate[struct{ DrawP95, FrameP95, Heap float64 }](js, chromedp.EvalAwaitPromise))
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: draw p95 %.1f ms, frame interval p95 %.1f ms, heap %.1f MB", op.name, r.DrawP95, r.FrameP95, r.Heap/1e6)
			b.ReportMetric(r.DrawP95, op.name+"-draw-p95-ms")
			b.ReportMetric(r.FrameP95, op.name+"-frame-p95-ms")
		}
		screenshot(b, ctx, "BenchmarkWebTimeline1M-zoomed")
		// A compacted gap, drawn across every lane.
		if g := s.get().Gaps; len(g) > 0 {
			eval[any](b, ctx, fmt.Sprintf(`window.txnscope.setView(%d, %d)`, g[0].From-25, g[0].To+25))
			if err := chromedp.Do(ctx, chromedp.Sleep(200*time.Millisecond)); err != nil {
				b.Fatal(err)
			}
			screenshot(b, ctx, "BenchmarkWebTimeline1M-gap")
		}
	}
}
