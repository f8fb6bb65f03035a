package e2e

import (
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/internal/testtool"
)

// TestWedgedChromiumIsReplaced: when the shared Chromium stops answering
// (here stopped with SIGSTOP), the next test's tab is not waited for the
// whole session's 5 minutes: the browser is replaced and the tab opens in
// the new one, which then serves the tests after it.
func TestWedgedChromiumIsReplaced(t *testing.T) {
	path := testtool.Need(t, "chromium")
	first := sharedChromium(t, path)
	p := chromedp.FromContext(first).Browser.Process()
	if p == nil {
		t.Fatal("the shared browser has no process")
	}
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The stopped process is killed with the browser it was (restartShared);
	// resumed if the test fails first, so that it can be.
	defer p.Signal(syscall.SIGCONT)
	defer func(d time.Duration) { tabTimeout = d }(tabTimeout)
	tabTimeout = 3 * time.Second
	start := time.Now()
	ctx := startChromium(t, path)
	two, err := chromedp.Run(ctx, chromedp.Evaluate[int]("1 + 1"))
	if err != nil {
		t.Fatal(err)
	}
	if two != 2 {
		t.Errorf("evaluated %d", two)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("a tab after %v", d)
	}
	if now := sharedChromium(t, path); now == first {
		t.Error("the stopped browser is still the shared one")
	}
}
