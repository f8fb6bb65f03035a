package cli

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestWebClientVariant: the timeline's rules selector takes the clients
// that depart from Kafka's rule: a deep link with variant=kafka-go draws
// the aborted batch at 2-4 of the interleaved demo as delivered, and its
// detail gives kafka-go's reason; the page links to the clients page,
// which draws one row per client over the same offsets.
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
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+href), chromedp.WaitVisible(chromedp.CSS(`[data-testid="clients-table"]`))); err != nil {
		t.Fatal(err)
	}
	rows := eval[int](t, ctx, `document.querySelectorAll('[data-testid^="clients-row-"]').length`)
	deps := eval[int](t, ctx, `document.querySelectorAll('[data-testid="clients-row-kafka-go"] td[data-departure="aborted_delivered"]').length`)
	if rows != 6 || deps != 5 {
		t.Errorf("clients page: %d rows, %d aborted_delivered cells for kafka-go; want 6 and 5", rows, deps)
	}
	screenshot(t, ctx, "TestWebClientVariant-clients")
}
