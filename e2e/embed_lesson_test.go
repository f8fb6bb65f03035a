package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/web"
)

// openEmbedStep opens the embed of s at ?step=n and waits until its
// timeline has drawn the log as of the step.
func openEmbedStep(t *testing.T, ctx context.Context, srvURL string, s *source, ls *web.Lesson, n int) {
	t.Helper()
	u := srvURL + web.EmbedPath(s.id, s.topic, s.partition) + fmt.Sprintf("?step=%d", n)
	if err := chromedp.Do(ctx, chromedp.Navigate(u), waitDone(1),
		pollFresh(`document.querySelector('[data-testid="timeline"]').dataset.asOf && window.txnscope.state().painted`, 10*time.Second),
		chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatalf("%s step %d: the timeline never drew the step: %v", s.id, n, err)
	}
	if end := eval[string](t, ctx, `document.querySelector('[data-testid="timeline"]').dataset.asOf`); end != fmt.Sprint(ls.Steps[n].Broker.LogEnd) {
		t.Errorf("%s step %d: the timeline draws the log to %s, the step's ends at %d", s.id, n, end, ls.Steps[n].Broker.LogEnd)
	}
}

// abortPixels counts the canvas pixels in the ABORT marker's colour
// (#C4589E, light theme) drawn over offset off.
func abortPixels(t *testing.T, ctx context.Context, off int64) int {
	t.Helper()
	return eval[int](t, ctx, fmt.Sprintf(`(() => {
  const c = document.querySelector('[data-testid="canvas"]'), r = c.getBoundingClientRect(), k = c.width / r.width;
  const x0 = Math.max(Math.floor((window.txnscope.xAt(%[1]d) - r.left) * k), 0), x1 = Math.min(Math.ceil((window.txnscope.xAt(%[1]d + 1) - r.left) * k), c.width);
  if (x1 <= x0) return 0;
  const d = c.getContext("2d").getImageData(x0, 0, x1 - x0, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] === 196 && d[i + 1] === 88 && d[i + 2] === 158) n++;
  return n;
})()`, off))
}

// remedyStep is the first step of ls that plays the remedy.
func remedyStep(t *testing.T, ls *web.Lesson) int {
	t.Helper()
	for _, st := range ls.Steps {
		if st.Remedy != "" {
			return st.N
		}
	}
	t.Fatal("the lesson plays no remedy")
	return -1
}

// TestEmbedLessonRemedy checks "the abort (as the admin command
// would write it) lands, the LSO moves" on the embed's timeline: at
// ?step=N, N the stuck-LSO lesson's remedy step, the timeline draws the
// remedy's ABORT marker (pink, in its producer's lane, listed as an ABORT
// marker), the LSO marker is the step's, and the step before has no
// marker there.
func TestEmbedLessonRemedy(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("stuck-lso", "demo-stuck-lso", 0)
	ls := lessonOf(t, cat, "stuck-lso", "demo-stuck-lso")
	r := remedyStep(t, ls)
	m := ls.Steps[r].Batch.From

	openEmbedStep(t, ctx, srv.URL, s, ls, r-1)
	if n := abortPixels(t, ctx, m); n != 0 {
		t.Errorf("step %d, before the remedy: %d ABORT pixels at offset %d", r-1, n, m)
	}

	openEmbedStep(t, ctx, srv.URL, s, ls, r)
	if err := chromedp.Do(ctx, pollFresh(fmt.Sprintf(`document.querySelector('[data-testid="batch-%d"]')?.dataset.control === "ABORT"`, m), 5*time.Second)); err != nil {
		t.Errorf("step %d: the remedy's marker at %d is not listed as an ABORT marker: %v", r, m, err)
	}
	if n := abortPixels(t, ctx, m); n == 0 {
		t.Errorf("step %d: no ABORT marker drawn at offset %d", r, m)
	}
	if d := eval[map[string]int](t, ctx, `window.txnscope.drawn()`); d["abort"] == 0 || d["pending"] != 0 {
		t.Errorf("step %d: the timeline draws %v; want the remedy's abort and nothing pending", r, d)
	}
	if lso := text(t, ctx, `[data-testid="lso"] span`); !strings.HasSuffix(lso, fmt.Sprintf(" %d", ls.Steps[r].Broker.LSO)) {
		t.Errorf("step %d: LSO marker %q, want %d", r, lso, ls.Steps[r].Broker.LSO)
	}
	if hl := eval[string](t, ctx, `document.querySelector('[data-testid="timeline"]').dataset.highlight`); hl != fmt.Sprintf("%d-%d", m, m) {
		t.Errorf("step %d: outlined %q, want the remedy's marker %d", r, hl, m)
	}
	screenshot(t, ctx, "TestEmbedLessonRemedy")
}

// detailShows is what the detail panel and the status line show.
type detailShows struct {
	Decision, Text, AsOf, Status string
}

const detailShowsJS = `(() => {
  const q = (s) => document.querySelector(s), r = q('[data-testid="detail-reason"]');
  return { decision: r ? r.dataset.decision : "", text: q('[data-testid="detail"]').innerText, asOf: q('[data-testid="detail"]').dataset.asOfStep || "",
    status: q('[data-testid="status"]').textContent };
})()`

// cellOf is the index of the lesson's batch holding offset off.
func cellOf(t *testing.T, ls *web.Lesson, off int64) int {
	t.Helper()
	for i, c := range ls.Cells {
		if c.From <= off && off <= c.To {
			return i
		}
	}
	t.Fatalf("no batch holds offset %d", off)
	return -1
}

// TestEmbedLessonDetailAsOf: clicking a batch on the embed's timeline at
// ?step=N opens its detail as of step N (the consumer's decision and cause
// of that moment, its transaction open until its marker is written), not
// the finished log's, and the status line says where the consumer is at
// that step; an open panel follows the learner to another step, and the
// remedy's marker, which only the lesson has, opens too.
func TestEmbedLessonDetailAsOf(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	type click struct {
		demo  string
		step  int // -1: the remedy step
		off   int64
		state string // the transaction's state shown
	}
	for _, c := range []click{
		// Producer 7's 2-4: aborted in the finished log, pending at
		// step 4 (its ABORT marker comes at 11).
		{"interleaved", 4, 3, "open"},
		// The hanging transaction's first batch: pending in the finished
		// log, aborted once the remedy's marker has landed.
		{"stuck-lso", -1, -1, "aborted"},
	} {
		s := cat.find(c.demo, "demo-"+c.demo, 0)
		ls := lessonOf(t, cat, c.demo, "demo-"+c.demo)
		n, off := c.step, c.off
		if n < 0 {
			n = remedyStep(t, ls)
			off = ls.Steps[n].Broker.Decided.First
		}
		i := cellOf(t, ls, off)
		want := cellAt(ls, i, n)
		openEmbedStep(t, ctx, srv.URL, s, ls, n)
		st := ls.Steps[n]
		status := text(t, ctx, `[data-testid="status"]`)
		wantStatus := fmt.Sprintf("step %d: the consumer has decided every offset below %d", n, st.Consumer.Position)
		if st.Consumer.Waiting {
			wantStatus = fmt.Sprintf("step %d: the consumer waits at the LSO, %d", n, st.Broker.LSO)
		}
		if !strings.HasSuffix(status, wantStatus) {
			t.Errorf("%s step %d: status %q, want it to end %q", c.demo, n, status, wantStatus)
		}
		var finished struct {
			Decision struct{ Decision string } `json:"decision"`
		}
		getJSONInto(t, fmt.Sprintf("%s/api/v1/sources/%s/partitions/%s/%d/batches/%d", srv.URL, s.id, s.topic, s.partition, off), &finished)
		if finished.Decision.Decision == want {
			t.Fatalf("%s offset %d: the finished log's decision %q is the step's: the case proves nothing", c.demo, off, want)
		}
		x, y := hoverOffset(t, ctx, off)
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y),
			pollFresh(fmt.Sprintf(`document.querySelector('[data-testid="detail-reason"]')?.dataset.decision === %q`, want), 5*time.Second)); err != nil {
			t.Errorf("%s step %d: the detail of offset %d shows %+v, want %s as of the step (the finished log: %s)", c.demo, n, off,
				eval[detailShows](t, ctx, detailShowsJS), want, finished.Decision.Decision)
			continue
		}
		got := eval[detailShows](t, ctx, detailShowsJS)
		d := ls.Steps[ls.Cells[i].Decided]
		reason := fmt.Sprintf("behind the LSO (%d) at this step", st.Broker.LSO)
		if want != "pending" {
			for _, x := range d.Consumer.Decided {
				if x.Batch == i {
					reason = x.Reason
				}
			}
		}
		if got.AsOf != fmt.Sprint(n) || !strings.Contains(got.Text, fmt.Sprintf("as of step %d", n)) || !strings.Contains(got.Text, reason) ||
			!strings.Contains(got.Text, "state\t"+c.state) {
			t.Errorf("%s step %d: the detail of %d reads %q; want as of step %d, %q, transaction %s", c.demo, n, off, got.Text, n, reason, c.state)
		}
		if strings.Contains(got.Text, "consume from here") {
			t.Errorf("%s step %d: the detail offers another consumer position in a lesson", c.demo, n)
		}
		if c.demo == "interleaved" {
			screenshot(t, ctx, "TestEmbedLessonDetailAsOf")
			continue
		}
		// The remedy's marker opens from the lesson's data.
		m := ls.Steps[n].Batch.From
		x, y = hoverOffset(t, ctx, m)
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y),
			pollFresh(fmt.Sprintf(`document.querySelector('[data-testid="detail"]').dataset.offset === "%d" && document.querySelector('[data-testid="detail-reason"]')?.dataset.decision === "control"`, m), 5*time.Second)); err != nil {
			t.Errorf("the remedy's marker at %d: detail %+v: %v", m, eval[detailShows](t, ctx, detailShowsJS), err)
		} else if got := eval[detailShows](t, ctx, detailShowsJS); !strings.Contains(got.Text, "ABORT marker") || !strings.Contains(got.Text, "state\taborted") {
			t.Errorf("the remedy's marker at %d: detail %q", m, got.Text)
		}
		screenshot(t, ctx, "TestEmbedLessonDetailAsOf-remedy")
		// Back one step, the panel open on the hanging batch follows.
		hoverOffset(t, ctx, off)
		chromedp.Do(ctx, chromedp.MouseClickXY(x, y))
		x, y = hoverOffset(t, ctx, off)
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y), pollFresh(fmt.Sprintf(`document.querySelector('[data-testid="detail"]').dataset.offset === "%d"`, ls.Cells[i].From), 5*time.Second),
			js(fmt.Sprintf(`window.txnscopeLesson.go(%d)`, n-1)),
			pollFresh(fmt.Sprintf(`document.querySelector('[data-testid="detail"]').dataset.asOfStep === "%d" && document.querySelector('[data-testid="detail-reason"]').dataset.decision === "pending"`, n-1), 5*time.Second)); err != nil {
			t.Errorf("back at step %d the detail shows %+v: %v", n-1, eval[detailShows](t, ctx, detailShowsJS), err)
		}
	}
}
