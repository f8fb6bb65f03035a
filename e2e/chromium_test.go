package e2e

// The Chromium the browser tests drive: one shared process, a tab of its
// own per test, replaced when it stops answering.

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// startChromium returns a fresh tab of headless chromium at path with the
// options every browser test shares, plus extra flags (the frame
// benchmark's unthrottled browser).
//
// The tests of this process share one Chromium process, and each gets a
// tab in a browser context of its own (Target.createBrowserContext, what an
// incognito window is): cookies, local storage and the HTTP cache are the
// test's own, as in a browser of its own, and the context is disposed of
// with the tab when the test ends. Starting a Chromium per test cost about
// half a second of both cores each, some fifty times per `go test` of this
// package. Benchmarks, and callers with extra flags, still get a process of
// their own: a benchmark's cold start is part of what it measures.
func startChromium(t testing.TB, path string, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	for try := 0; ; try++ {
		var parent context.Context
		if _, bench := t.(*testing.B); bench || len(extra) > 0 {
			actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromiumOptions(path, t.TempDir(), extra...)...)
			t.Cleanup(cancelA)
			parent = actx
		} else {
			parent = sharedChromium(t, path)
		}
		var ctx context.Context
		var cancelC context.CancelFunc
		// A browser context of its own needs a running browser: the shared
		// one. A fresh allocator's context (a benchmark's) has none yet, and
		// chromedp panics on WithNewBrowserContext there.
		if c := chromedp.FromContext(parent); c != nil && c.Browser != nil {
			ctx, cancelC = chromedp.NewContext(parent, chromedp.WithNewBrowserContext())
		} else {
			ctx, cancelC = chromedp.NewContext(parent)
		}
		// A hang guard for the whole browser session, not a time bound: it
		// must outlast the polls inside it (TestIndexPageScale waits up to a
		// minute for a ranking) on a loaded machine; at 60 s,
		// TestIndexPageScale ran out of it at load 26 after its poll succeeded.
		ctx, cancelT := context.WithTimeout(ctx, 5*time.Minute)
		t.Cleanup(func() { cancelT(); cancelC() })
		// Opening the tab is bounded on its own: a shared Chromium that
		// stops answering would make this test and every later one wait
		// out their 5 minutes; it is replaced, once, by a fresh one.
		done := make(chan error, 1)
		go func() { done <- setupTab(ctx, parent) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(tabTimeout):
			cancelT()
			cancelC()
			err = fmt.Errorf("no tab after %v", tabTimeout)
			if try == 0 && restartShared(parent) {
				t.Logf("the shared Chromium opened no tab in %v: started another", tabTimeout)
				continue
			}
		}
		if err != nil {
			t.Fatalf("start chromium: %v", err)
		}
		return ctx
	}
}

// tabTimeout bounds opening a tab, far above what it takes (well under a
// second) on a loaded machine.
var tabTimeout = 90 * time.Second // a variable for TestWedgedChromiumIsReplaced

// setupTab opens ctx's tab, of the browser parent, and sets it up.
func setupTab(ctx, parent context.Context) error {
	// chromedp enables the Network domain, which copies every websocket
	// frame to the test over the DevTools pipe; the stream does not need
	// that, and the 1M-batch benchmark would measure it.
	return chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Disable, cdp.Empty{}); err != nil {
			return err
		}
		// A tab of the shared browser opens in a new window, whose frame
		// (no tab strip or toolbar) is 56 px shorter than the first
		// window's, which --window-size sized: its viewport was 56 px
		// taller. The window is resized so that its viewport is the first
		// window's, and the pages are laid out, and screenshots taken, as
		// in a browser of their own.
		if want := sharedViewport(parent); want != nil {
			w, err := cdp.Call(ctx, t, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{})
			if err != nil {
				return err
			}
			got, err := chromedp.Evaluate[[2]int64](viewportJS)(ctx, t)
			if err != nil {
				return err
			}
			if got != *want {
				if _, err := cdp.Call(ctx, t, cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{WindowID: w.WindowID,
					Bounds: &cdpbrowser.Bounds{Width: w.Bounds.Width + want[0] - got[0], Height: w.Bounds.Height + want[1] - got[1], WindowState: cdpbrowser.WindowStateNormal}}); err != nil {
					return err
				}
			}
		}
		// No scrollbars: a full-page screenshot grows the viewport to the
		// page, the vertical scrollbar goes and the plot and minimap widen
		// by its width; whether they were redrawn before the capture was a
		// race, and docs/screenshots changed from run to run.
		_, err := cdp.Call(ctx, t, emulation.SetScrollbarsHidden, emulation.SetScrollbarsHiddenParams{Hidden: true})
		return err
	}))
}

// restartShared stops the shared browser if parent is still it, for the
// next sharedChromium to start another; false if parent is not the shared
// browser (a benchmark's own).
func restartShared(parent context.Context) bool {
	shared.Lock()
	defer shared.Unlock()
	if shared.browser == nil || shared.browser != parent {
		return false
	}
	shared.stop()
	shared.browser = nil
	return true
}

// chromiumOptions are the flags of every test browser.
func chromiumOptions(path, userDataDir string, extra ...chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	return append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("enable-precise-memory-info", true),
		chromedp.UserDataDir(userDataDir),
		chromedp.WindowSize(1400, 900),
	}, extra...)
}

// shared is the Chromium process the tests of this process share: its
// first tab's context (the browser lives as long as it), and how to stop it
// (TestMain, after the last test).
var shared struct {
	sync.Mutex
	browser  context.Context
	viewport [2]int64 // of the first tab, whose window --window-size sized
	stop     func()
}

// viewportJS is a tab's viewport: width and height in CSS pixels.
const viewportJS = `[window.innerWidth, window.innerHeight]`

// sharedViewport returns the viewport of the shared browser's first tab
// when ctx is that browser's, or nil.
func sharedViewport(ctx context.Context) *[2]int64 {
	shared.Lock()
	defer shared.Unlock()
	if shared.browser == nil || ctx != shared.browser {
		return nil
	}
	v := shared.viewport
	return &v
}

// sharedChromium returns the shared browser's context, starting Chromium
// at path on the first call, and again if the previous one has gone (a
// crashed browser fails the test that crashed it, not every later one).
func sharedChromium(t testing.TB, path string) context.Context {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.browser != nil {
		if shared.browser.Err() == nil {
			return shared.browser
		}
		shared.stop()
		shared.browser = nil
	}
	dir, err := os.MkdirTemp("", "txnscope-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromiumOptions(path, dir)...)
	bctx, cancelB := chromedp.NewContext(actx)
	stop := func() { cancelB(); cancelA(); os.RemoveAll(dir) }
	// The first Run starts the process; the first tab stays on about:blank.
	viewport, err := chromedp.Run(bctx, chromedp.Evaluate[[2]int64](viewportJS))
	if err != nil {
		stop()
		t.Fatalf("start chromium: %v", err)
	}
	shared.browser, shared.viewport, shared.stop = bctx, viewport, stop
	return bctx
}

// stopSharedChromium stops the shared browser, if one was started.
func stopSharedChromium() {
	shared.Lock()
	defer shared.Unlock()
	if shared.browser != nil {
		shared.stop()
		shared.browser = nil
	}
}
