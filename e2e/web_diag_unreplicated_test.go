package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
)

// TestDiagnosisPanelUnreplicated loads a log dir whose high-watermark
// checkpoint (7) lags the log end (10): producer 8's COMMIT at 7 is not
// yet replicated, so its transaction from 4 holds the LSO. The panel names
// it as the holder, and "To end it" says in words what does (the high
// watermark passing the marker: the followers catching up), with the
// command that shows the replicas, and offers no abort and no discards.
func TestDiagnosisPanelUnreplicated(t *testing.T) {
	recent := time.Now().Add(-time.Minute).UnixMilli()
	dir := testfixture.WriteShapeDir(t, "orders", 0, 7, []testfixture.Batch{
		{Base: 0, PID: -1, Ctrl: -1, N: 4, TS: recent},
		{Base: 4, PID: 8, Epoch: 1, Txn: true, Ctrl: -1, N: 2, TS: recent},
		{Base: 6, PID: -1, Ctrl: -1, N: 1, TS: recent},
		{Base: 7, PID: 8, Epoch: 1, Txn: true, Ctrl: 1, TS: recent, Coord: 2},
		{Base: 8, PID: -1, Ctrl: -1, N: 2, TS: recent},
	}, 0, nil)
	ld, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("load1", dir, ld))
	s := cat.find("load1", "orders", 0)
	if s == nil {
		t.Fatal("orders-0 not loaded")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="ends-when"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{
		`[data-testid="diagnosis-verdict"]`: "STUCK",
		`[data-testid="pinned-state"]`:      "decided, marker not replicated",
		`[data-testid="diag-lso"]`:          "4",
		`[data-testid="diag-hwm"]`:          "7",
	} {
		if got := strings.TrimSpace(text(t, ctx, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := text(t, ctx, `[data-testid="ends-when"]`); !strings.HasPrefix(got, "nothing to abort: the COMMIT marker is written") ||
		!strings.Contains(got, "high watermark passes the marker at 7") || !strings.Contains(got, "in-sync followers") {
		t.Errorf("ends when: %q", got)
	}
	if got := text(t, ctx, `[data-testid="check-command"]`); !strings.Contains(got, "kafka-topics.sh --bootstrap-server \"$BOOTSTRAP\" --describe --topic orders") {
		t.Errorf("check command: %q", got)
	}
	// No abort command, nothing discarded: the transaction is decided.
	n := eval[int](t, ctx, `document.querySelectorAll('[data-testid="pinned-by"] [data-testid="abort-command"], [data-testid="pinned-by"] [data-testid="discards"], [data-testid="pinned-by"] [data-testid="print-command"]').length`)
	if n != 0 {
		t.Errorf("%d abort, discard or print elements in the pinned box", n)
	}
	if got := text(t, ctx, `[data-testid="pinned"]`); !strings.Contains(got, "held by the transaction of producer 8 from offset 4, decided (COMMIT marker at offset 7)") {
		t.Errorf("banner: %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diagnosis"]`))); err != nil {
		t.Fatal(err)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelUnreplicated")
	screenshot(t, ctx, "TestDiagnosisPanelUnreplicated")

	// The index names the state in the partition page's words, not as
	// its identifier (decided_unreplicated).
	row := `[data-testid="partition-row-load1-orders-0"]`
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="row-state"]`))); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(text(t, ctx, row+` [data-testid="row-state"]`)); got != "decided, marker not replicated" {
		t.Errorf("index row state %q, want the page's words", got)
	}
	if st, _ := attr(ctx, row, "data-state"); st != "decided_unreplicated" {
		t.Errorf("index row data-state %q", st)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelUnreplicated index")
}
