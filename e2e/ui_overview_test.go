package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/txnscope/txnscope/present"
)

// overviewPixels classifies the canvas pixels of pixel columns xs: per
// column, per lane row, how many pixels of the row's batch band (14 px
// under the row's top, lane height − 20 px tall, as timeline-overview.js
// stacks them) are of each kind. A hatched or dotted kind is recognised
// anywhere between its colour and its pattern's (white lines over aborted
// and before, black dots over pending), so the patterns count as the kind
// they cover; the lane stripes and the washes above the LSO and HWM are
// the background.
const overviewPixels = `((xs) => {
  const c = document.querySelector('[data-testid="canvas"]'), dpr = window.devicePixelRatio || 1, g = c.getContext("2d");
  const rows = document.querySelectorAll('.labels .lane').length, lh = c.height / dpr / rows, h = lh - 20;
  const kinds = [["delivered", [0, 158, 115]], ["aborted", [213, 94, 0], [255, 255, 255], 0.9], ["pending", [181, 125, 0], [0, 0, 0], 0.6],
    ["commit", [0, 114, 178]], ["abort", [196, 88, 158]], ["control", [0, 130, 155]], ["before", [122, 122, 122], [255, 255, 255], 0.65],
    ["background", [255, 255, 255]], ["background", [250, 250, 250]], ["background", [253, 248, 237]], ["background", [248, 243, 233]],
    ["background", [242, 242, 242]], ["background", [238, 238, 238]], ["gap", [140, 140, 140]]];
  const dist = (p, k) => {
    const a = k[1];
    if (!k[2]) return Math.hypot(p[0] - a[0], p[1] - a[1], p[2] - a[2]);
    const d = [k[2][0] - a[0], k[2][1] - a[1], k[2][2] - a[2]], dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    const t = Math.max(0, Math.min(k[3], ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1] + (p[2] - a[2]) * d[2]) / dd));
    return Math.hypot(p[0] - a[0] - t * d[0], p[1] - a[1] - t * d[1], p[2] - a[2] - t * d[2]);
  };
  return xs.map((x) => {
    const out = [];
    for (let r = 0; r < rows; r++) {
      const y0 = Math.ceil((r * lh + 14) * dpr), y1 = Math.floor((r * lh + 14 + h) * dpr);
      const d = g.getImageData(Math.floor(x * dpr), y0, 1, y1 - y0).data, o = {};
      for (let i = 0; i < d.length; i += 4) {
        const p = [d[i], d[i + 1], d[i + 2]];
        let best = null, bd = Infinity;
        for (const k of kinds) { const v = dist(p, k); if (v < bd) { bd = v; best = k[0]; } }
        o[best] = (o[best] || 0) + 1;
      }
      out.push(o);
    }
    return out;
  });
})(%s)`

// ndjsonKind is the overview's kind of a decision line.
func ndjsonKind(decision string, control *string) string {
	switch decision {
	case "control":
		switch {
		case control != nil && *control == "COMMIT":
			return "commit"
		case control != nil && *control == "ABORT":
			return "abort"
		}
		return "control"
	case "before_position":
		return "before"
	}
	return decision
}

// columnTruth asks the server's decisions API for the offsets [a, b) and
// returns, per lane row (rowOf a producer id), the offsets of each kind in
// the range: what a pixel column of the overview stands for.
func columnTruth(t *testing.T, base string, a, b float64, rowOf func(int64) int) map[int]map[string]float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/decisions?from=%d&to=%d", base, int64(math.Floor(a)), int64(math.Ceil(b))))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[int]map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var d struct {
			From, To   float64
			Decision   string
			Control    *string
			ProducerID int64 `json:"producer_id"`
			BatchIndex int   `json:"batch_index"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("decisions line %q: %v", sc.Text(), err)
		}
		if d.BatchIndex < 0 {
			continue // a gap: drawn across the rows, not in them
		}
		ov := math.Min(d.To+1, b) - math.Max(d.From, a)
		if ov <= 0 {
			continue
		}
		r := rowOf(d.ProducerID)
		if out[r] == nil {
			out[r] = map[string]float64{}
		}
		out[r][ndjsonKind(d.Decision, d.Control)] += ov
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var overviewKinds = []string{"delivered", "aborted", "pending", "commit", "abort", "control", "before"}

// checkOverview compares pixel columns xs of the view on the page with the
// decisions of the offsets each stands for, row by row: each kind's share
// of the row's band within tol of its share of the row's offsets. It
// returns the offsets per kind the pixels imply (each row's shares times
// its offsets) and the offsets counted.
func checkOverview(t *testing.T, rangeOf func(int) [2]float64, px func([]int) [][]map[string]float64, base string, xs []int, rowOf func(int64) int, tol float64, pinned func(x, row int) bool) (map[string]float64, float64) {
	t.Helper()
	cols := px(xs)
	implied, total := map[string]float64{}, 0.0
	worst, worstAt := 0.0, ""
	for j, x := range xs {
		rg := rangeOf(x)
		truth := columnTruth(t, base, rg[0], rg[1], rowOf)
		for r, kinds := range truth {
			if pinned(x, r) {
				// The outline of the transaction that pins the LSO is drawn
				// over its batches, at least 2 px wide however few offsets
				// they hold: a marker meant to be seen, not their mix.
				continue
			}
			rowOff := 0.0
			for _, v := range kinds {
				rowOff += v
			}
			pix, band := cols[j][r], 0.0
			for k, v := range pix {
				if k != "background" && k != "gap" {
					band += v
				}
			}
			if band == 0 {
				t.Errorf("column %d (offsets %.0f-%.0f), row %d: %.0f offsets (%v) but nothing drawn (%v)", x, rg[0], rg[1], r, rowOff, kinds, pix)
				continue
			}
			total += rowOff
			for _, k := range overviewKinds {
				want, got := kinds[k]/rowOff, pix[k]/band
				implied[k] += got * rowOff
				if d := math.Abs(got - want); d > worst {
					worst, worstAt = d, fmt.Sprintf("column %d row %d %s: drawn %.3f, offsets %.3f (%v vs %v)", x, r, k, got, want, pix, kinds)
				}
				if d := math.Abs(got - want); d > tol {
					t.Errorf("column %d (offsets %.0f-%.0f), row %d: %s is %.2f of the drawn band, %.2f of the offsets (pixels %v, offsets %v)", x, rg[0], rg[1], r, k, got, want, pix, kinds)
				}
			}
		}
	}
	t.Logf("largest difference between a kind's share of a column's band and of its offsets: %.3f (%s)", worst, worstAt)
	return implied, total
}

// pinnedAt reports the pixel columns of a row that the pinning
// transaction's outline covers (timeline-draw.js drawPinned: a 3 px stroke
// around its batches, glow included).
func pinnedAt(t *testing.T, ctx context.Context, rowOf func(int64) int) func(x, row int) bool {
	p := eval[*struct {
		Producer int64
		Shown    bool
		X0, X1   float64
	}](t, ctx, `window.txnscope.pinned()`)
	if p == nil || !p.Shown {
		return func(int, int) bool { return false }
	}
	row := rowOf(p.Producer)
	return func(x, r int) bool { return r == row && float64(x) >= p.X0-6 && float64(x) <= p.X1+6 }
}

// TestUIOverviewProportional: zoomed out on the 1M-batch demo, a pixel
// column covering many batches shows their mix in proportion. Sampled
// columns' colours, row by row, match the server's decisions for the
// offsets each column stands for, and summed over the columns they match
// the records-in-view counts the page shows under the minimap. Before,
// every column took its "most important" kind: the producer lanes were
// solid aborted hatching at fit (2.7M records delivered, 0.24M aborted),
// and solid COMMIT blue at a 200k-offset view.
func TestUIOverviewProportional(t *testing.T) {
	ctx, srv, cat := browser(t, true)
	s := cat.find("big", "demo-big", 0)
	l := s.get()
	rowByPID := map[int64]int{}
	for _, ln := range present.Lanes(l) {
		pid := int64(-1)
		if ln.Producer != nil {
			pid = int64(ln.Producer.ID)
		}
		rowByPID[pid] = ln.Row
	}
	rowOf := func(pid int64) int { return rowByPID[pid] }
	base := fmt.Sprintf("%s/api/v1/sources/big/partitions/%s/%d", srv.URL, s.topic, s.partition)
	rangeOf := func(x int) [2]float64 {
		r := eval[[]float64](t, ctx, fmt.Sprintf(`window.txnscope.overviewRange(%d)`, x))
		return [2]float64{r[0], r[1]}
	}
	px := func(xs []int) [][]map[string]float64 {
		b, _ := json.Marshal(xs)
		return eval[[][]map[string]float64](t, ctx, fmt.Sprintf(overviewPixels, b))
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(timelineURL(srv, s)), pollFresh(`(() => { const s = window.txnscope && window.txnscope.state(); return s && s.painted && s.gen >= 1; })()`, 50*time.Second)); err != nil {
		t.Fatal(err)
	}
	// fit: the whole log, and the counts of the whole view.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="zoom-reset"]`)),
		pollFresh(fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid="view-counts"]'); return !e.hidden && +e.dataset.from === %d && window.txnscope.state().painted; })()`, l.LogStartOffset), 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the frame after the counts
	// Offsets are plain digits, as the header and the LSO marker write
	// them (the big demo's pass a million): the view's range and the
	// axis ticks; counts are separated.
	if text := eval[string](t, ctx, `document.querySelector('[data-testid="view-counts"]').textContent`); !strings.Contains(text, fmt.Sprintf("offsets %d–%d:", l.LogStartOffset, l.LogEndOffset-1)) {
		t.Errorf("view counts %q: want the offsets %d–%d in plain digits", text, l.LogStartOffset, l.LogEndOffset-1)
	}
	if ticks := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('[data-testid="offset-tick"]')).map((e) => e.textContent)`); len(ticks) < 2 || slices.ContainsFunc(ticks, func(s string) bool { _, err := strconv.ParseInt(s, 10, 64); return err != nil }) {
		t.Errorf("offset ticks %q: want plain digits", ticks)
	}
	shown := eval[map[string]float64](t, ctx, `(() => { const o = {}; document.querySelectorAll('[data-testid="view-counts"] [data-kind]').forEach((b) => { o[b.dataset.kind] = +b.textContent.replace(/[^0-9]/g, ""); }); return o; })()`)
	w := eval[int](t, ctx, `window.txnscope.state().width`)
	var xs []int
	for x := 6; x < w-6; x += (w - 12) / 40 {
		xs = append(xs, x)
	}
	implied, total := checkOverview(t, rangeOf, px, base, xs, rowOf, 0.07, pinnedAt(t, ctx, rowOf))
	screenshot(t, ctx, "TestUIOverviewProportional")
	// The columns are a sample of the whole log: the shares they draw are
	// those of the counts shown for it (records; the demo is not
	// compacted beyond a few gaps, so records and offsets agree).
	records := shown["records"]
	if records < 2_000_000 || shown["aborted"] == 0 || shown["delivered"] < 10*shown["aborted"] {
		t.Fatalf("counts shown at fit: %v", shown)
	}
	markers := implied["commit"] + implied["abort"] + implied["control"]
	for k, pair := range map[string][2]float64{
		"delivered": {implied["delivered"], shown["delivered"]},
		"aborted":   {implied["aborted"], shown["aborted"]},
		"control":   {markers, shown["control"]},
		"pending":   {implied["pending"], shown["pending"]},
	} {
		got, want := pair[0]/total, pair[1]/records
		t.Logf("%s: %.3f of the sampled columns' pixels, %.3f of the records the page shows", k, got, want)
		if math.Abs(got-want) > 0.03 {
			t.Errorf("%s: the picture draws %.3f of the sampled columns, the page counts %.3f of the records in view (%v)", k, got, want, shown)
		}
	}

	// A 200k-offset view among committed and aborted transactions: drawn
	// from the decisions in view (finer than the pyramid), still in
	// proportion, and no column of a producer lane is COMMIT blue alone.
	from := l.LogStartOffset + 1_000_000
	if err := chromedp.Do(ctx, js(fmt.Sprintf(`window.txnscope.setView(%d, %d)`, from, from+200_000)),
		pollFresh(fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid="view-counts"]'); return !e.hidden && +e.dataset.from === %d && window.txnscope.state().painted; })()`, from), 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	checkOverview(t, rangeOf, px, base, xs, rowOf, 0.1, pinnedAt(t, ctx, rowOf))
	for j, col := range px(xs) {
		for r, pix := range col {
			band := 0.0
			for k, v := range pix {
				if k != "background" && k != "gap" {
					band += v
				}
			}
			if band > 0 && pix["commit"]/band > 0.5 {
				t.Errorf("200k view, column %d row %d: %.0f%% COMMIT blue (%v)", xs[j], r, 100*pix["commit"]/band, pix)
			}
		}
	}
	screenshot(t, ctx, "TestUIOverviewProportional-200k")
}
