package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/genlogdir"
	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// TestUILazyPanelRefresh: the page of a lazy partition opened
// while its full load runs is drawn from the tail, its server-rendered
// diagnosis panel too: what aborting the open transaction discards counts
// only the records the tail read (genlogdir's t0-0 opened its transaction
// before the roll, so the tail has none of them). When the load lands, the
// stream switches to the whole log (TestLazyPageStreamRace) and says so
// ("loaded"), and the page fetches the panel again: chromium sees the
// whole log's count without a reload. The summary above the timeline (its
// batches and transactions, the problems list saying that the timeline
// shows the tail) is fetched again too, and reads as a fresh page load's
// once the load has landed. Its lesson, which plays the
// partition from its first batch, is not played over the tail: until the
// load lands its page says why.
func TestUILazyPanelRefresh(t *testing.T) {
	path := testtool.Need(t, "chromium")
	srv, lz := lazyServer(t)
	ctx := startChromium(t, path)
	discards := func(l *txnindex.Log) string {
		t.Helper()
		d := present.Diagnose(l, diagnosis.Options{Position: -1})
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
	tailSummary := eval[string](t, ctx, summaryText)
	if !strings.Contains(tailSummary, "the timeline shows its tail") || !strings.Contains(tailSummary, fmt.Sprintf("summary-batches: %s\n", txnindex.Count(int64(len(lz.get().Batches))))) {
		t.Fatalf("the summary drawn from the tail does not say so, or counts other batches than the tail's %d: %q", len(lz.get().Batches), tailSummary)
	}
	// Its segments are those read of all, and the offsets below the tail,
	// not read, are no gap.
	if !strings.Contains(tailSummary, "summary-segments: 1 of 2 read\n") || !strings.Contains(tailSummary, "summary-gaps: 0") {
		t.Fatalf("the tail's summary counts segments and gaps as a whole log's: %q", tailSummary)
	}
	lz.land() // the full load lands while the page is open
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
	// The summary and its problems list, swapped in without a reload,
	// read as a page loaded now does.
	if err := chromedp.Do(ctx, pollFresh(`window.txnscopeDiagnosis.summaries() === 1`, 20*time.Second)); err != nil {
		t.Errorf("the summary was not fetched again after the load landed: %v", err)
	}
	swapped := eval[string](t, ctx, summaryText)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/sources/load1/partitions/t0/0"), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if fresh := eval[string](t, ctx, summaryText); swapped != fresh {
		t.Errorf("the summary after the load landed:\n%s\na page loaded now:\n%s", swapped, fresh)
	} else if swapped == tailSummary || strings.Contains(swapped, "the timeline shows its tail") {
		t.Errorf("the summary did not change when the load landed: %q", swapped)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(lesson), pollFresh(`!!document.querySelector('[data-testid="lesson"]')`, 20*time.Second)); err != nil {
		t.Errorf("the lesson after the load: %v", err)
	}
}

// summaryText is the text of the summary above the timeline: its heading
// and then a line per part with a data-testid (its numbers, the pinned
// sentence, the problems list), white space collapsed.
const summaryText = `(() => { const s = document.querySelector('[data-testid="summary"]'); if (!s) return "";
	return [s.querySelector("h1")].concat(Array.from(s.querySelectorAll("[data-testid]")))
		.map((e) => ((e.dataset.testid || "heading") + ": " + e.textContent).replace(/\s+/g, " ").trim()).join("\n"); })()`

// lazyPart is a partition of a lazy log directory whose full load is held
// until land: its page is drawn from the tail meanwhile, as a partition of
// many GiB is while it loads.
type lazyPart struct {
	*source
	release chan struct{}
	tail    *txnindex.Log
}

// lazyServer serves a log directory of genlogdir's shape (t0-0 stuck
// before the roll: its tail and its whole log differ), its partitions
// loaded lazily (server.Options.Loads), the full load of t0-0 held
// (server.Options.OpenFull) until the test calls land.
func lazyServer(t *testing.T) (*httptest.Server, *lazyPart) {
	t.Helper()
	dir := t.TempDir()
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: 2, Stuck: []string{"t0-0"}}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	cat := newCatalog(t, loads(dir), func(o *server.Options) {
		o.OpenFull = func(ctx context.Context, d *load.LogDir, e *logindex.Entry) (*input.Contents, error) {
			if e.Name == "t0-0" {
				<-release
			}
			return d.Open(ctx, e)
		}
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release) // the load ends, and the server with it
		}
	})
	srv := httptest.NewServer(cat.srv.Handler())
	t.Cleanup(srv.Close)
	lz := &lazyPart{source: cat.find("load1", "t0", 0), release: release}
	if lz.source == nil {
		t.Fatal("t0-0 not listed")
	}
	// The first request starts the full load and, once it has waited a
	// while for it, gets the tail.
	lz.tail = lz.get()
	return srv, lz
}

// land lets the full load run and waits until the server serves its log.
func (lz *lazyPart) land() {
	close(lz.release)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if l := lz.get(); l != nil && l != lz.tail {
			return
		}
	}
}
