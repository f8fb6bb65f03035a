package e2e

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// updateScreenshots asks the browser tests to rewrite the committed
// pictures in docs/screenshots (`make screenshots`), as
// TXNSCOPE_UPDATE_SCREENSHOTS=1 does. Without either they go to a
// directory under the system's temp dir, so that `go test` and `make test`
// leave a clean checkout clean: another machine's Chromium and fonts can
// change pixels, and a diff of dozens of PNGs after every run hid the ones
// that meant something.
var updateScreenshots = flag.Bool("update-screenshots", false, "rewrite docs/screenshots (else screenshots go to $TMPDIR/txnscope-screenshots)")

// committedScreenshots is where the pictures the docs show are kept.
var committedScreenshots = filepath.Join("..", "docs", "screenshots")

// screenshotDir is where screenshot writes: docs/screenshots when asked to
// update them, else $TMPDIR/txnscope-screenshots (one directory, rewritten
// by every run, so that a developer can still look at what the tests saw).
func screenshotDir() string {
	if *updateScreenshots || os.Getenv("TXNSCOPE_UPDATE_SCREENSHOTS") == "1" {
		return committedScreenshots
	}
	return filepath.Join(os.TempDir(), "txnscope-screenshots")
}

// screenshot writes <name>.png into screenshotDir. A picture that
// docs/screenshots does not hold yet fails the test: a new browser test's
// picture is committed (`make screenshots`) and shown in a doc
// (TestDocsShowEveryScreenshot), as every other test's is.
func screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(committedScreenshots, name+".png")); err != nil && screenshotDir() != committedScreenshots {
		t.Errorf("screenshot %s: docs/screenshots has no %s.png: run `make screenshots`, commit it and show it in docs/ui.md", name, name)
	}
	// A page that fits the window is captured as it is: the full-page
	// capture resizes the viewport, and Chromium's resize moves the
	// pointer state, which hid the hover tooltip from the picture of the
	// hover test.
	// The counts under the minimap follow the view after a debounce and a
	// request (data-pending, timeline-state.js): a picture taken before
	// they arrive shows the previous view's.
	if err := chromedp.Do(ctx, pollFresh(`!document.querySelector('[data-testid="view-counts"][data-pending]')`, 20*time.Second)); err != nil {
		t.Errorf("screenshot %s: the record counts of the view never arrived: %v", name, err)
	}
	shot := chromedp.FullScreenshot(100)
	if fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollHeight <= window.innerHeight && document.documentElement.scrollWidth <= window.innerWidth`)); err == nil && fits {
		shot = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	dir := screenshotDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Written beside and renamed into place: several go test processes on
	// one machine share the temp directory, and a reader never sees half a
	// picture.
	tmp, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	_, werr := tmp.Write(png)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, name+".png"))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		t.Fatal(werr)
	}
}
