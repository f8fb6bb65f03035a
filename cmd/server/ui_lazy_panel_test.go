package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/txnindex"
)

// TestUILazyPanelRefresh (issue 19): the page of a lazy partition opened
// while its full load runs is drawn from the tail, its server-rendered
// diagnosis panel too: what aborting the open transaction discards counts
// only the records the tail read (genlogdir's t0-0 opened its transaction
// before the roll, so the tail has none of them). When the load lands, the
// stream switches to the whole log (TestLazyPageStreamRace) and says so
// ("loaded"), and the page fetches the panel again: chromium sees the
// whole log's count without a reload. Its lesson, which plays the
// partition from its first batch, is not played over the tail: until the
// load lands its page says why.
func TestUILazyPanelRefresh(t *testing.T) {
	path := testtool.Need(t, "chromium")
	srv, lz := lazyServer(t)
	ctx := startChromium(t, path)
	discards := func(l *txnindex.Log) string {
		t.Helper()
		d := l.Diagnose(txnindex.DiagnoseOptions{Position: -1})
		for _, x := range d.OpenTransactions {
			if x.PinsLSO {
				return txnindex.Plural(x.Discards.Records, "record", "records")
			}
		}
		t.Fatal("no open transaction pins the LSO")
		return ""
	}
	// Its lesson is not played over the tail: the page says why.
	lesson := srv.URL + "/lessons/load1/t0/0"
	if err := chromedp.Do(ctx, chromedp.Navigate(lesson), pollFresh(`!!document.querySelector('[data-testid="unavailable-why"]')`, 20*time.Second)); err != nil {
		t.Errorf("the lesson of a partition still loading: %v", err)
	} else if got := eval[string](t, ctx, `document.querySelector('[data-testid="unavailable-why"]').textContent`); !strings.Contains(got, "only its tail has been read yet") {
		t.Errorf("the lesson page says %q", got)
	}
	const count = `document.querySelector('[data-testid="diagnosis"] [data-testid="discard-count"]').textContent`
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/sources/load1/partitions/t0/0"), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	tail := discards(lz.get())
	if got := eval[string](t, ctx, count); got != tail {
		t.Fatalf("the panel drawn from the tail discards %q, the tail's diagnosis %q", got, tail)
	}
	lz.load() // the full load lands while the page is open
	full := discards(lz.get())
	if full == tail {
		t.Fatalf("the tail and the whole log discard the same %q: nothing to see change", full)
	}
	if err := chromedp.Do(ctx, waitDone(2), pollFresh(fmt.Sprintf(`%s === %q`, count, full), 20*time.Second)); err != nil {
		t.Errorf("the panel still says %q after the load landed, want %q: %v", eval[string](t, ctx, count), full, err)
	}
	if n := eval[float64](t, ctx, `window.txnscopeDiagnosis.loads()`); n != 1 {
		t.Errorf("%v loaded messages, want 1", n)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(lesson), pollFresh(`!!document.querySelector('[data-testid="lesson"]')`, 20*time.Second)); err != nil {
		t.Errorf("the lesson after the load: %v", err)
	}
}
