package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// crowdIdempotentBase is the first idempotent producer id of the crowded
// partitions: 19 digits, as kfake and a long-running cluster hand them
// out, all sharing their first 12 digits ("807045053224…"), so a label cut
// to fit its column reads the same for every one of them.
const crowdIdempotentBase = 8070450532240000000

// writeCrowdedDir writes topic-0 as a real log dir (v2 batches encoded with
// kmsg): idem idempotent producers writing one batch each, interleaved
// with txns transactional producers (ids txnBase+k) each writing one
// transaction of two batches and a marker (every third aborted).
func writeCrowdedDir(t *testing.T, topic string, idem, txns int, txnBase int64) (string, []int64, []int64) {
	t.Helper()
	var bs []testfixture.Batch
	off := int64(0)
	add := func(b testfixture.Batch) {
		b.Base, b.TS = off, 1_796_000_000_000+off
		if b.Ctrl >= 0 {
			b.N = 1
		}
		bs = append(bs, b)
		off += int64(b.N)
	}
	var idemIDs, txnIDs []int64
	for i := range idem {
		idemIDs = append(idemIDs, crowdIdempotentBase+int64(i)*7919)
	}
	for k := range txns {
		txnIDs = append(txnIDs, txnBase+int64(k))
	}
	for step := range max(idem, txns) {
		if step < idem {
			add(testfixture.Batch{PID: idemIDs[step], Ctrl: -1, N: 2})
		}
		if step < txns {
			p := txnIDs[step]
			add(testfixture.Batch{PID: p, Txn: true, Ctrl: -1, N: 3})
			add(testfixture.Batch{PID: p, Txn: true, Ctrl: -1, N: 2})
			ctrl := 1
			if step%3 == 2 {
				ctrl = 0
			}
			add(testfixture.Batch{PID: p, Txn: true, Ctrl: ctrl})
		}
	}
	return testfixture.WriteShapeDir(t, topic, 0, off, bs, 0, nil), idemIDs, txnIDs
}

// laneRows reads the page's lane rows: test id, the label's lines, the
// tooltip, and whether the label's first line fits without being cut.
type laneRow struct {
	ID, Label, Epochs, Note, Title string
	Fits                           bool
}

const laneRowsJS = `Array.from(document.querySelectorAll('.labels .lane')).map((e) => { const s = e.querySelector("strong");
  return { ID: e.dataset.testid, Label: s.textContent, Epochs: e.querySelector(".epochs").textContent, Note: e.querySelector(".note").textContent,
    Title: e.title, Fits: s.scrollWidth <= s.clientWidth + 1 }; })`

// TestUILaneFolding: on a real partition with 300 idempotent producers and
// 3 transactional ones (19-digit ids sharing their first 12 digits), the
// idempotent producers share one "non-transactional" row, each
// transactional producer has its own, labelled with a suffix that tells
// it apart; "each non-transactional" unfolds them up to the cap of rows,
// and the producers filter gives a producer its row.
func TestUILaneFolding(t *testing.T) {
	dir, idemIDs, txnIDs := writeCrowdedDir(t, "crowd", 300, 3, 8070450532249000001)
	ld, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("crowd", dir, ld))
	s := cat.find("crowd", "crowd", 0)
	l := s.get()
	if len(l.Producers) != 303 {
		t.Fatalf("%d producers, want 303", len(l.Producers))
	}
	rows := func() []laneRow { return eval[[]laneRow](t, ctx, laneRowsJS) }
	ids := func(rs []laneRow) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	resp, err := http.Get(timelineURL(srv, s))
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	got := rows()
	want := []string{"lane-none"}
	for _, id := range txnIDs {
		want = append(want, "lane-"+strconv.FormatInt(id, 10))
	}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("rows %v, want %v", ids(got), want)
	}
	// The rows the server rendered are the rows the script lays out from
	// the stream's meta (txnindex's rule, in both).
	served := regexp.MustCompile(`class="lane" data-testid="([^"]+)"`).FindAllStringSubmatch(string(html), -1)
	var servedIDs []string
	for _, m := range served {
		servedIDs = append(servedIDs, m[1])
	}
	if !slices.Equal(servedIDs, want) {
		t.Errorf("the server rendered rows %v, the script %v", servedIDs, want)
	}
	for _, r := range got {
		if !strings.Contains(string(html), ">"+r.Label+"<") || !strings.Contains(string(html), ">"+r.Epochs+"<") || !strings.Contains(string(html), ">"+r.Note+"<") {
			t.Errorf("row %s reads %q / %q / %q after the script, not as the server rendered it", r.ID, r.Label, r.Epochs, r.Note)
		}
	}
	if r := got[0]; r.Label != "non-transactional" || r.Epochs != "300 idempotent producers" || r.Note != "300 batches" {
		t.Errorf("non-transactional row %+v", r)
	}
	// Every label can be told apart, and shows whole.
	seen := map[string]bool{}
	for i, r := range got[1:] {
		id := strconv.FormatInt(txnIDs[i], 10)
		if seen[r.Label] || !strings.HasPrefix(r.Label, "producer 8070…") || !strings.HasSuffix(id, strings.TrimPrefix(r.Label, "producer 8070…")) || !r.Fits || !strings.Contains(r.Title, id) {
			t.Errorf("row %s: label %q (fits %v), title %q: want a distinct suffix of %s, shown whole, the whole id in the title", r.ID, r.Label, r.Fits, r.Title, id)
		}
		seen[r.Label] = true
	}
	// Every row holds drawn batches, and a batch is found on its row.
	if lp := rowPixels(t, ctx); len(lp) != 4 || slices.Contains(lp, 0) {
		t.Errorf("batch pixels per row: %v", lp)
	}
	tx := l.Txns[len(l.Txns)-1]
	hit := eval[map[string]any](t, ctx, fmt.Sprintf(`(() => { const p = window.txnscope.pointOf(%d); return p ? window.txnscope.batchAt(p.x, p.y) : {}; })()`, tx.FirstOffset))
	if lane, _ := hit["lane"].(float64); int(lane) != laneOf(l, tx.ProducerID) {
		t.Errorf("the batch at %d is found on lane %v, want producer %d's lane %d (%v)", tx.FirstOffset, hit["lane"], tx.ProducerID, laneOf(l, tx.ProducerID), hit)
	}
	screenshot(t, ctx, "TestUILaneFolding")

	// Unfolded: the transactional producers, then idempotent ones up to
	// the cap of 12 rows; the other 291 stay in the non-transactional row.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lane-expand"]`)), pollFresh(`document.querySelectorAll('.labels .lane').length > 4`, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	got = rows()
	if len(got) != 1+present.LaneCap || got[0].ID != "lane-none" || got[0].Epochs != "291 idempotent producers" {
		t.Errorf("unfolded: %d rows %v, first %+v", len(got), ids(got), got[0])
	}
	for _, id := range idemIDs[:present.LaneCap-3] {
		if !slices.Contains(ids(got), "lane-"+strconv.FormatInt(id, 10)) {
			t.Errorf("unfolded: no row for idempotent producer %d: %v", id, ids(got))
		}
	}
	if lp := rowPixels(t, ctx); slices.Contains(lp, 0) {
		t.Errorf("unfolded, batch pixels per row: %v", lp)
	}
	screenshot(t, ctx, "TestUILaneFolding-expanded")

	// Filtered (folded again): the one idempotent producer whose id holds
	// the text, the others folded, the transactional ones in "3 more".
	pick := idemIDs[250]
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lane-expand"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="lane-filter"]`), strconv.FormatInt(pick, 10)[10:]),
		pollFresh(`!!document.querySelector('[data-testid="lane-more"]')`, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	got = rows()
	if want := []string{"lane-none", "lane-" + strconv.FormatInt(pick, 10), "lane-more"}; !slices.Equal(ids(got), want) {
		t.Errorf("filtered by %s: rows %v, want %v", strconv.FormatInt(pick, 10)[10:], ids(got), want)
	} else if got[0].Epochs != "299 idempotent producers" || got[2].Label != "3 more producers" {
		t.Errorf("filtered: %+v", got)
	}
	if !strings.Contains(eval[string](t, ctx, `location.search`), "producers=") {
		t.Errorf("the filter is not in the URL")
	}

}

// TestUILaneCap: with 15 transactional producers the page shows 12 rows
// and "3 more producers", the filter gives one of the three its row, and
// one producer past the cap is "1 more producer", as the server rendered.
func TestUILaneCap(t *testing.T) {
	dir2, _, capIDs := writeCrowdedDir(t, "many", 0, 15, 9000)
	ld2, err := input.Open(dir2)
	if err != nil {
		t.Fatal(err)
	}
	// One past the cap is still "1 more producer", as the server rendered.
	dir3, _, _ := writeCrowdedDir(t, "thirteen", 0, present.LaneCap+1, 7000)
	ld3, err := input.Open(dir3)
	if err != nil {
		t.Fatal(err)
	}
	ctx, srv, cat := browser(t, false, opened("many", dir2, ld2), opened("thirteen", dir3, ld3))
	rows := func() []laneRow { return eval[[]laneRow](t, ctx, laneRowsJS) }
	ids := func(rs []laneRow) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	s2 := cat.find("many", "many", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s2)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	got := rows()
	if len(got) != present.LaneCap+1 || got[len(got)-1].ID != "lane-more" || got[len(got)-1].Label != "3 more producers" || got[0].ID != "lane-9000" {
		t.Errorf("15 transactional producers: rows %v (last %+v)", ids(got), got[len(got)-1])
	}
	if lp := rowPixels(t, ctx); len(lp) != present.LaneCap+1 || slices.Contains(lp, 0) {
		t.Errorf("15 transactional producers, batch pixels per row: %v", lp)
	}
	if eval[bool](t, ctx, `document.querySelector('[data-testid="lane-expand"]').getBoundingClientRect().width > 0`) {
		t.Errorf("no idempotent producer to unfold, yet the box is shown")
	}
	screenshot(t, ctx, "TestUILaneCap")
	last := strconv.FormatInt(capIDs[14], 10)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid="lane-filter"]`), last),
		pollFresh(fmt.Sprintf(`!!document.querySelector('[data-testid="lane-%s"]')`, last), 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got = rows(); !slices.Equal(ids(got), []string{"lane-" + last, "lane-more"}) || got[1].Label != "14 more producers" {
		t.Errorf("filtered by %s: rows %v", last, ids(got))
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, cat.find("thirteen", "thirteen", 0))), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	if got = rows(); len(got) != present.LaneCap+1 || got[present.LaneCap].ID != "lane-more" || got[present.LaneCap].Label != "1 more producer" {
		t.Errorf("%d producers: rows %v (last %+v)", present.LaneCap+1, ids(got), got[len(got)-1])
	}
}

// rowPixels is lanePixels once every row has batch pixels (a relayout
// redraws on the next animation frame), or after 5 s as they are.
func rowPixels(t *testing.T, ctx context.Context) []int {
	t.Helper()
	_ = chromedp.Do(ctx, pollFresh(fmt.Sprintf(`(%s).every((n) => n > 0)`, lanePixels), 5*time.Second))
	return eval[[]int](t, ctx, lanePixels)
}

// laneOf is the stream lane of producer pid in l.
func laneOf(l *txnindex.Log, pid txnindex.ProducerID) int {
	for _, ln := range present.Lanes(l) {
		if ln.Producer != nil && ln.Producer.ID == pid {
			return ln.Index
		}
	}
	return -1
}
