package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestWebClientVariant: the timeline's rules selector takes the clients
// that depart from Kafka's rule: a deep link with variant=kafka-go draws
// the aborted batch at 2-4 of the interleaved demo as delivered, and its
// detail gives kafka-go's reason; the page links to the clients page,
// which draws one row per client over the same offsets; so does the
// diagnosis panel's line on the clients that deliver aborted records.
func TestWebClientVariant(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	u := timelineURL(srv, s) + "?sel=2&variant=kafka-go"
	if err := chromedp.Do(ctx, chromedp.Navigate(u), waitDone(1), chromedp.WaitVisible(chromedp.CSS(`[data-testid="detail-reason"]`))); err != nil {
		t.Fatal(err)
	}
	variant, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="variant"]`)))
	if variant != "kafka-go" {
		t.Errorf("rules selector %q, want kafka-go", variant)
	}
	if d, _ := attr(ctx, `[data-testid="batch-2"]`, "data-decision"); d != "delivered" {
		t.Errorf("offsets 2-4 under kafka-go are %q, want delivered", d)
	}
	reason, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="detail-reason"]`)))
	if err != nil || !strings.Contains(reason, "kafka-go delivers this aborted record") {
		t.Errorf("detail reason %q (%v)", reason, err)
	}
	href, _ := attr(ctx, `[data-testid="clients-link"]`, "href")
	// The diagnosis panel names the clients that deliver the aborted
	// records, and its link leads to the same clients page.
	line, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="diag-clients"]`)))
	if err != nil || !strings.Contains(strings.Join(strings.Fields(line), " "), interleavedClients) {
		t.Errorf("diagnosis panel's clients line %q (%v), want %q", line, err, interleavedClients)
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="diag-clients"]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "TestWebClientVariant-diagnosis")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="diag-clients-link"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="clients-table"]`))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, ctx, `location.pathname`); got != href {
		t.Errorf("the panel's link leads to %s, want the clients page %s", got, href)
	}
	rows := eval[int](t, ctx, `document.querySelectorAll('[data-testid^="clients-row-"]').length`)
	deps := eval[int](t, ctx, `document.querySelectorAll('[data-testid="clients-row-kafka-go"] td[data-departure="aborted_delivered"]').length`)
	if rows != 6 || deps != 5 {
		t.Errorf("clients page: %d rows, %d aborted_delivered cells for kafka-go; want 6 and 5", rows, deps)
	}
	screenshot(t, ctx, "TestWebClientVariant-clients")
}
