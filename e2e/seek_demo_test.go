package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/web"
)

// TestSeekDemoAppliesItsSeek: the seek demo's scenario ends with `seek 7`,
// a consumer seeking into the middle of an aborted transaction. Its page,
// its lesson and its embed play that consumer: the URL and the "consume
// from" field say 7, offsets below it are before the position, and the
// lesson's consumer reads from offset 7. An empty position is still the
// log start.
func TestSeekDemoAppliesItsSeek(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	errs := pageErrors(ctx)
	s := cat.find("seek", "demo-seek", 0)
	if len(s.seeks) != 1 || s.seeks[0] != 7 {
		t.Fatalf("the seek demo's seeks are %v, want [7]", s.seeks)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if u := eval[string](t, ctx, `location.search`); !strings.Contains(u, "position=7") {
		t.Errorf("the page's URL %q does not say position 7", u)
	}
	if pos, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="position"]`))); pos != "7" {
		t.Errorf("consume from %q, want 7", pos)
	}
	if d, _ := attr(ctx, `[data-testid="batch-0"]`, "data-decision"); d != "before_position" {
		t.Errorf("offsets 0-2 are %q, want before the position", d)
	}
	tempScreenshot(t, ctx, "TestSeekDemoAppliesItsSeek-page")

	// The lesson: its consumer reads from offset 7.
	if err := chromedp.Do(ctx, chromedp.Navigate(lessonURL(srv.URL, s)), waitStep(0)); err != nil {
		t.Fatal(err)
	}
	got := eval[lessonShows](t, ctx, lessonShowsJS)
	if got.Position != "7" || !strings.Contains(got.Text, "from offset 7") {
		t.Errorf("the lesson's consumer: position %q, text %q", got.Position, got.Text)
	}
	tempScreenshot(t, ctx, "TestSeekDemoAppliesItsSeek-lesson")

	// The embed, with and without the lesson panel.
	for _, q := range []string{"", "?step=1"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+web.EmbedPath(s.id, s.topic, s.partition)+q), waitDone(1)); err != nil {
			t.Fatal(err)
		}
		if pos, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-testid="position"]`))); pos != "7" {
			t.Errorf("embed%s: consume from %q, want 7", q, pos)
		}
	}
	// An empty position is the log start, as the field's placeholder says.
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)+"?position="), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if d, _ := attr(ctx, `[data-testid="batch-0"]`, "data-decision"); d != "delivered" {
		t.Errorf("from the log start, offsets 0-2 are %q", d)
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("errors on the pages:\n%s", strings.Join(e, "\n"))
	}
}
