package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
)

// TestDiagnosisPanelGroupKinds: the panel of a log dir with groups of
// every kind, as a person sees it: a row per group with its kind in
// words, a line per kind with how many are held up, and the share groups
// against the LSO by their isolation level.
func TestDiagnosisPanelGroupKinds(t *testing.T) {
	dir := testfixture.WriteGroupsLogDir(t, true)
	ld, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("load1", dir, ld))
	s := cat.find("load1", "orders", 0)
	if s == nil {
		t.Fatal("orders-0 not loaded")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="group-kind-share"]`)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{
		`[data-testid="group-kind-of-new-app"]`:      "consumer group (KIP-848)",
		`[data-testid="group-kind-of-kstreams-app"]`: "streams group (KIP-1071)",
		`[data-testid="group-kind-of-orders-app"]`:   "classic group",
	} {
		if got := strings.TrimSpace(text(t, ctx, sel)); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := text(t, ctx, `[data-testid="group-kind-share"]`); !strings.Contains(got, "2 share groups (KIP-932) (share-rc, share-ru)") {
		t.Errorf("share line %q", got)
	}
	held := eval[map[string]string](t, ctx, `Object.assign({}, document.querySelector('[data-testid="share-group-share-rc"]').dataset)`)
	if held["isolation"] != "read_committed" || held["held"] != "true" || held["start"] != "3" {
		t.Errorf("share-rc row %v, want read_committed, held, start 3", held)
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="group-kind-share"]`))); err != nil {
		t.Fatal(err)
	}
	noRawIdentifiers(t, ctx, "TestDiagnosisPanelGroupKinds")
	screenshot(t, ctx, "TestDiagnosisPanelGroupKinds")
}
