package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/internal/testtool"
)

// BenchmarkWebTimeline1M measures the timeline in chromium (headless,
// software rendering) on the generated 1M-batch demo: first paint of the
// visible window from navigation (cold: the first request builds the log;
// warm: a reload), the full stream, frames under steady wheel input (pan,
// zoom, zoomed-in pan) after the stream is done and during a stream, and
// the JS heap. It prints the figures and asserts none of them. Run it with
//
//	go test -run '^$' -bench WebTimeline1M -benchtime 1x ./e2e
//
// A frame is the interval between two requestAnimationFrame callbacks of a
// probe that runs the whole time input is dispatched: it includes the
// page's own draw, style, layout, paint and the compositor, as a person
// would see it. Input goes through CDP Input.dispatchMouseEvent (the
// page's real wheel handler) every 16 ms, whether or not the page keeps up.
func BenchmarkWebTimeline1M(b *testing.B) {
	ctx, srv, cat := browser(b, true)
	s := cat.find("big", "demo-big", 0)
	type metrics struct {
		FirstPaintMs, StreamDoneMs float64
		Heap                       float64
		HTMLMs                     float64
		Marks                      map[string]float64
	}
	// A browser that has rendered one page already (the index, which does
	// not build the 1M demo): the first navigation of a fresh chromium
	// spends about a second starting its renderer and compiling, which is
	// not the server's cold start.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		b.Fatal(err)
	}
	// The index gives a partition's numbers (data-lso) only once it is
	// built (web.BuiltCatalog).
	if got := eval[string](b, ctx, `(() => { const r = document.querySelector('[data-testid="partition-row-big-demo-big-0"]'); return !r ? "missing" : r.hasAttribute("data-lso") ? "built" : "not built"; })()`); got != "not built" {
		b.Fatalf("the index's row of the 1M demo: %s, want not built", got)
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
			b.Logf("%s: html received at %.0f ms; milestones (ms from navigation start) %v", run, m.HTMLMs, m.Marks)
			b.ReportMetric(m.FirstPaintMs, run+"-first-paint-ms")
			b.ReportMetric(m.StreamDoneMs, run+"-stream-ms")
		}
		screenshot(b, ctx, "BenchmarkWebTimeline1M-overview")
		box := frameOps(b, ctx, "")
		screenshot(b, ctx, "BenchmarkWebTimeline1M-zoomed")
		// Pan while a stream runs: switch isolation (a new generation of
		// 1M decisions) and pan until it is done.
		eval[any](b, ctx, `window.txnscope.setView(600000, 620000)`)
		eval[any](b, ctx, `(() => { const e = document.querySelector('[data-testid="isolation"]'); e.value = "read_uncommitted"; e.dispatchEvent(new Event("change")); })()`)
		r := wheelFrames(b, ctx, box.X+box.W/2, box.Y+40, 2000, func(int) float64 { return 29 }, func(int) float64 { return 0.01 },
			func() bool { return eval[bool](b, ctx, `window.txnscope.state().done`) })
		b.Logf("pan during the stream: frame p50 %.1f / p95 %.1f / max %.1f ms over %d frames; frames that drew p95 %.1f ms over %d; draw p95 %.1f ms", r.P50, r.P95, r.Max, r.Frames, r.DrawnP95, r.DrawnFrames, r.DrawP95)
		b.ReportMetric(r.P95, "pan-streaming-frame-p95-ms")
		if err := chromedp.Do(ctx, waitDone(2)); err != nil {
			b.Fatal(err)
		}
		heap := eval[float64](b, ctx, `(() => { return performance.memory.usedJSHeapSize; })()`)
		b.Logf("JS heap after two 1M-decision streams: %.1f MB", heap/1e6)
		b.ReportMetric(heap/1e6, "heap-MB")
		// A compacted gap, drawn across every lane.
		if g := s.get().Gaps; len(g) > 0 {
			eval[any](b, ctx, fmt.Sprintf(`window.txnscope.setView(%d, %d)`, g[0].From-25, g[0].To+25))
			if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
				b.Fatal(err)
			}
			screenshot(b, ctx, "BenchmarkWebTimeline1M-gap")
		}
		// The same input in a second chromium whose frames are not held
		// to vsync: there a rAF interval is the time to produce a frame.
		uctx := unthrottled(b)
		if err := chromedp.Do(uctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
			b.Fatal(err)
		}
		frameOps(b, uctx, "unthrottled-")
	}
}

// frameStats: P50/P95/Max over every rAF interval of the probe; Drawn*
// over the intervals whose frame ran the page's draw (the frames the input
// changed); DrawP95 over the page's draw function alone.
type frameStats struct {
	P50, P95, Max, DrawP95, Heap float64
	DrawnP50, DrawnP95, DrawnMax float64
	Frames, DrawnFrames          int
}

// frameOps runs pan, zoom and zoomed-in pan on a loaded 1M timeline and
// reports each as prefix+name; it returns the canvas box.
func frameOps(b *testing.B, ctx context.Context, prefix string) (box struct{ X, Y, W float64 }) {
	b.Helper()
	box = eval[struct{ X, Y, W float64 }](b, ctx, `(() => { const r = document.querySelector('[data-testid="canvas"]').getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width}; })()`)
	for _, op := range []struct {
		name   string
		setup  string
		dx, dy func(i int) float64
	}{
		{"pan", "", func(int) float64 { return 37 }, func(int) float64 { return 0.01 }},
		// 1.0015^±150: zoom by 1.25 / 0.8, in for 20 events, out for 20.
		{"zoom", "", func(int) float64 { return 0.01 }, func(i int) float64 {
			if i%40 < 20 {
				return -150
			}
			return 150
		}},
		{"zoomed-in-pan", `window.txnscope.setView(500000, 500600)`, func(int) float64 { return -23 }, func(int) float64 { return 0.01 }},
	} {
		if op.setup != "" {
			eval[any](b, ctx, op.setup)
		}
		r := wheelFrames(b, ctx, box.X+box.W/2, box.Y+40, 120, op.dx, op.dy, nil)
		if op.setup != "" {
			eval[any](b, ctx, op.setup)
		}
		tr := traceFrames(b, ctx, func() { wheel(b, ctx, box.X+box.W/2, box.Y+40, 120, op.dx, op.dy) })
		b.Logf("%s%s traced: main-thread time per frame p50 %.1f / p95 %.1f / max %.1f ms over %d frames; mean ms per frame %v", prefix, op.name, tr.P50, tr.P95, tr.Max, tr.Frames, fmtParts(tr.Parts))
		b.ReportMetric(tr.P95, prefix+op.name+"-main-thread-p95-ms")
		b.Logf("%s%s: frame p50 %.1f / p95 %.1f / max %.1f ms over %d frames; frames that drew p50 %.1f / p95 %.1f / max %.1f ms over %d; draw p95 %.1f ms; heap %.1f MB",
			prefix, op.name, r.P50, r.P95, r.Max, r.Frames, r.DrawnP50, r.DrawnP95, r.DrawnMax, r.DrawnFrames, r.DrawP95, r.Heap/1e6)
		b.ReportMetric(r.P95, prefix+op.name+"-frame-p95-ms")
		b.ReportMetric(r.DrawnP95, prefix+op.name+"-drawn-frame-p95-ms")
		b.ReportMetric(r.DrawP95, prefix+op.name+"-draw-p95-ms")
	}
	return box
}

// unthrottled starts a second headless chromium with the options of
// browser (web_test.go) plus --disable-gpu-vsync and
// --disable-frame-rate-limit: frames are produced as soon as the previous
// one is done, so a requestAnimationFrame interval measures the cost of a
// frame (input, rAF callbacks, style, layout, paint, raster, composite)
// instead of rounding it up to the next 16.7 ms vsync.
func unthrottled(b *testing.B) context.Context {
	b.Helper()
	return startChromium(b, testtool.Need(b, "chromium"),
		chromedp.Flag("disable-gpu-vsync", true), chromedp.Flag("disable-frame-rate-limit", true))
}

// wheelFrames dispatches n wheel events at (x, y), one every 16 ms (or
// until stop reports true), while a requestAnimationFrame probe in the page
// records frame intervals.
func wheelFrames(b *testing.B, ctx context.Context, x, y float64, n int, dx, dy func(int) float64, stop func() bool) frameStats {
	b.Helper()
	eval[any](b, ctx, `window.txnscope.probeFrames(true)`)
	tick := time.NewTicker(16 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		<-tick.C
		if stop != nil && i%8 == 0 && stop() {
			break
		}
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			// CDP drops zero fields and wants deltaX on a wheel event.
			_, err := cdp.Call(ctx, tg, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseWheel, X: x, Y: y, DeltaX: dx(i), DeltaY: dy(i)})
			return err
		}))
		if err != nil {
			b.Fatal(err)
		}
	}
	return eval[frameStats](b, ctx, `window.txnscope.probeFrames(false)`)
}

// traceStats is the main-thread cost of the frames in a CDP trace: for each
// FireAnimationFrame (the rAF callbacks: the page's draw) of the page's
// renderer main thread, the time its top-level tasks were busy from there
// to the next one: the rAF callbacks, style, layout, paint, commit and the
// input events handled before the next frame. Without the probe every rAF
// is the page's draw, so that is one frame per input. Raster and
// compositing run on other threads and are not in it.
type traceStats struct {
	P50, P95, Max float64
	Frames        int
	Parts         map[string]float64 // mean ms per frame of each kind of event (they nest: Paint in Commit's task, FunctionCall in rAF)
}

// traceFrames runs input under a devtools.timeline trace (without the rAF
// probe, so that every frame is one the input caused) and returns the
// per-frame main-thread time.
func traceFrames(b *testing.B, ctx context.Context, input func()) traceStats {
	b.Helper()
	var data <-chan jsonv2.Value
	var complete <-chan jsonv2.Value
	var cancels []func()
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var c1, c2 func()
		data, c1 = tg.Subscribe(tracing.DataCollected.Method)
		complete, c2 = tg.Subscribe(tracing.TracingComplete.Method)
		cancels = append(cancels, c1, c2)
		_, err := cdp.Call(ctx, tg, tracing.Start, tracing.StartParams{TransferMode: tracing.StartTransferModeReportEvents,
			TraceConfig: &tracing.TraceConfig{IncludedCategories: []string{"toplevel", "devtools.timeline", "disabled-by-default-devtools.timeline"}}})
		return err
	}))
	if err != nil {
		b.Fatalf("Tracing.start: %v", err)
	}
	input()
	err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, tracing.End, cdp.Empty{})
		return err
	}))
	if err != nil {
		b.Fatalf("Tracing.end: %v", err)
	}
	type event struct {
		Name, Ph string
		Ts, Dur  float64
		Pid, Tid int
		Args     struct{ Name string }
	}
	var events []event
	timeout := time.After(30 * time.Second)
collect:
	for {
		select {
		case v := <-data:
			var d struct{ Value []event }
			if err := json.Unmarshal(v, &d); err != nil {
				b.Fatalf("trace data: %v", err)
			}
			events = append(events, d.Value...)
		case <-complete:
			// dataCollected events that arrived first may still be queued.
			for {
				select {
				case v := <-data:
					var d struct{ Value []event }
					if err := json.Unmarshal(v, &d); err != nil {
						b.Fatalf("trace data: %v", err)
					}
					events = append(events, d.Value...)
				default:
					break collect
				}
			}
		case <-timeout:
			b.Fatal("no Tracing.tracingComplete")
		}
	}
	// The renderer main thread of the page: a CrRendererMain with the
	// most requestAnimationFrame callbacks.
	type thread struct{ pid, tid int }
	mains := map[thread]bool{}
	for _, e := range events {
		if e.Ph == "M" && e.Name == "thread_name" && e.Args.Name == "CrRendererMain" {
			mains[thread{e.Pid, e.Tid}] = true
		}
	}
	count := map[thread]int{}
	for _, e := range events {
		if t := (thread{e.Pid, e.Tid}); mains[t] && e.Name == "FireAnimationFrame" {
			count[t]++
		}
	}
	var main thread
	for t, n := range count {
		if n > count[main] {
			main = t
		}
	}
	var frames, tasks []event
	parts := map[string]float64{}
	for _, e := range events {
		if (thread{e.Pid, e.Tid}) != main || e.Ph != "X" {
			continue
		}
		switch e.Name {
		case "FireAnimationFrame", "EventDispatch", "HitTest", "UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit", "UpdateLayer", "MinorGC", "MajorGC", "TimerFire", "FunctionCall":
			parts[e.Name] += e.Dur / 1000
		}
		switch e.Name {
		case "FireAnimationFrame":
			frames = append(frames, e)
		case "RunTask", "ThreadControllerImpl::RunTask":
			tasks = append(tasks, e)
		}
	}
	sort.Slice(frames, func(i, j int) bool { return frames[i].Ts < frames[j].Ts })
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Ts < tasks[j].Ts })
	// Tasks nest (a RunTask inside a RunTask); count the outermost only.
	var top []event
	end := -1.0
	for _, t := range tasks {
		if t.Ts >= end {
			top = append(top, t)
			end = t.Ts + t.Dur
		}
	}
	var cost []float64
	for i := 0; i+1 < len(frames); i++ {
		from, to := frames[i].Ts, frames[i+1].Ts
		busy := 0.0
		for _, t := range top {
			if t.Ts+t.Dur <= from || t.Ts >= to {
				continue
			}
			busy += min(t.Ts+t.Dur, to) - max(t.Ts, from)
		}
		// A frame without a task around it (trace without RunTask): its
		// own duration.
		if busy == 0 {
			busy = frames[i].Dur
		}
		cost = append(cost, busy/1000)
	}
	sort.Float64s(cost)
	q := func(p float64) float64 {
		if len(cost) == 0 {
			return 0
		}
		return cost[min(len(cost)-1, int(float64(len(cost))*p))]
	}
	for k := range parts {
		parts[k] /= float64(max(len(cost), 1))
	}
	return traceStats{P50: q(0.5), P95: q(0.95), Max: q(1), Frames: len(cost), Parts: parts}
}

// wheel dispatches n wheel events at (x, y), one every 16 ms.
func wheel(b *testing.B, ctx context.Context, x, y float64, n int, dx, dy func(int) float64) {
	b.Helper()
	tick := time.NewTicker(16 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		<-tick.C
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseWheel, X: x, Y: y, DeltaX: dx(i), DeltaY: dy(i)})
			return err
		}))
		if err != nil {
			b.Fatal(err)
		}
	}
}

func fmtParts(p map[string]float64) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for _, k := range keys {
		out += fmt.Sprintf(" %s %.2f", k, p[k])
	}
	return out
}

// BenchmarkWebTimeline1MTimeAxis is the frame part of BenchmarkWebTimeline1M
// on the time axis (?axis=time), where x is linear in the batches' held max
// timestamps and the binned path finds each pixel column's batches from
// time: pan, zoom and zoomed-in pan in the unthrottled chromium (frame
// cost) and under a CDP trace (main-thread time), as frameOps does for the
// offset axis. The offset axis runs first, in its own unthrottled chromium
// (each browser context has startChromium's 60 s budget, which both axes'
// runs exceed on a loaded machine), as the baseline of the same run. The
// vsync-held browser loads the page once before, so that the first
// request's build of the 1M-batch log is not in the measured loads.
func BenchmarkWebTimeline1MTimeAxis(b *testing.B) {
	ctx, srv, cat := browser(b, true)
	s := cat.find("big", "demo-big", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)+"?axis=time"), waitDone(1)); err != nil {
		b.Fatal(err)
	}
	screenshot(b, ctx, "BenchmarkWebTimeline1MTimeAxis")
	for b.Loop() {
		for _, axis := range []string{"offset", "time"} {
			uctx := unthrottled(b)
			u := timelineURL(srv, s)
			if axis == "time" {
				u += "?axis=time"
			}
			t0 := time.Now()
			if err := chromedp.Do(uctx, chromedp.Navigate(u), waitDone(1)); err != nil {
				b.Fatal(err)
			}
			if ax := eval[string](b, uctx, `window.txnscope.state().axis`); ax != axis {
				b.Fatalf("axis %q at %s", ax, u)
			}
			m := eval[struct{ FirstPaintMs, StreamDoneMs float64 }](b, uctx, `window.txnscope.metrics()`)
			b.Logf("%s axis: first paint of the window %.0f ms after navigation start, stream done %.0f ms (%v wall)", axis, m.FirstPaintMs, m.StreamDoneMs, time.Since(t0).Round(time.Millisecond))
			b.ReportMetric(m.FirstPaintMs, axis+"-first-paint-ms")
			b.ReportMetric(m.StreamDoneMs, axis+"-stream-ms")
			frameOps(b, uctx, axis+"-unthrottled-")
		}
	}
}
