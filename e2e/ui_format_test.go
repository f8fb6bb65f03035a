package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/txnindex"
)

// TestUIFormatMatchesGo runs the browser's formats (static/js/format.js)
// and the server's (txnindex.Count, Plural, DurationMs) over the same
// inputs, the unit boundaries and a few thousand random ones: a page must
// never write a number or a duration another way than the CLI and the
// server's pages do.
func TestUIFormatMatchesGo(t *testing.T) {
	ctx, srv, _ := browser(t, false)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatal(err)
	}
	ms := []int64{-5, 0, 1, 999, 1000, 1499, 1500, 59_499, 59_500, 60_000, 1_205_000, 3_599_499, 3_599_500, 3_600_000,
		172_799_499, 172_799_500, 172_800_000, 339*86_400_000 + 3_600_000, 29_008_509_248, 1204 * 86_400_000}
	counts := []int64{0, 1, -1, 2, 999, 1000, -1000, 1_234_567, 2_147_483_648}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		ms = append(ms, r.Int64N(int64(1)<<uint(r.IntN(42))))
	}
	for range 500 {
		counts = append(counts, r.Int64N(int64(1)<<uint(r.IntN(50)))-int64(1)<<uint(r.IntN(20)))
	}
	msJSON, _ := json.Marshal(ms)
	countJSON, _ := json.Marshal(counts)
	got := eval[struct{ Durations, Counts, Plurals []string }](t, ctx, fmt.Sprintf(`(() => {
	  const F = window.txnscopeFormat;
	  return { durations: %s.map(F.duration), counts: %s.map(F.count), plurals: %[2]s.map((n) => F.plural(n, "partition", "partitions")) };
	})()`, msJSON, countJSON))
	if len(got.Durations) != len(ms) || len(got.Counts) != len(counts) || len(got.Plurals) != len(counts) {
		t.Fatalf("the page answered %d durations and %d counts for %d and %d", len(got.Durations), len(got.Counts), len(ms), len(counts))
	}
	bad := 0
	for i, m := range ms {
		if want := txnindex.DurationMs(m); got.Durations[i] != want && bad < 10 {
			bad++
			t.Errorf("duration of %d ms: the page writes %q, Go %q", m, got.Durations[i], want)
		}
	}
	for i, n := range counts {
		if want := txnindex.Count(n); got.Counts[i] != want && bad < 10 {
			bad++
			t.Errorf("count %d: the page writes %q, Go %q", n, got.Counts[i], want)
		}
		if want := txnindex.Plural(n, "partition", "partitions"); got.Plurals[i] != want && bad < 10 {
			bad++
			t.Errorf("plural %d: the page writes %q, Go %q", n, got.Plurals[i], want)
		}
	}
}
