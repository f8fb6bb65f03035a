package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/web"
)

// lessonOf is the step list the server computes for a demo, to compare the
// page with.
func lessonOf(t *testing.T, cat *catalog, id, topic string) *web.Lesson {
	t.Helper()
	s := cat.find(id, topic, 0)
	if s == nil {
		t.Fatalf("no demo %s", id)
	}
	return web.NewLesson(s.id, s.get(), -1)
}

// cellAt is what the lesson says of batch i at step n: not written yet
// (""), pending, or its verdict.
func cellAt(ls *web.Lesson, i, n int) string {
	c := ls.Cells[i]
	switch {
	case c.Appended > n:
		return ""
	case c.Decided < 0 || c.Decided > n:
		return "pending"
	}
	return c.Verdict
}

// lessonShows is what the lesson panel shows a person.
type lessonShows struct {
	Step     int    `json:"step"`
	Count    string `json:"count"`
	Sentence string `json:"sentence"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	LSO      string `json:"lso"`
	Set      string `json:"set"`
	NewEntry string `json:"newEntry"`
	Strip    int    `json:"strip"`
	URL      string `json:"url"`
	Link     string `json:"link"`
	Position string `json:"position"`
	Text     string `json:"text"`
	Cells    []struct {
		Step     int    `json:"step"`
		Decision string `json:"decision"`
	} `json:"cells"`
	Decided []struct {
		Decision string `json:"decision"`
		Text     string `json:"text"`
	} `json:"decided"`
}

const lessonShowsJS = `(() => {
  const q = (id) => document.querySelector('[data-testid="' + id + '"]');
  const ne = q("txnindex-new");
  const shown = [...q("lesson-strip").children].filter((li) => !li.hidden && li.getBoundingClientRect().width > 0);
  return { step: +q("lesson").dataset.step, count: q("lesson-count").textContent, sentence: q("lesson-sentence").textContent,
    decision: q("consumer-decision").dataset.decision || "", reason: q("consumer-reason").textContent, lso: q("broker-lso").textContent,
    set: q("consumer-set").textContent, newEntry: ne ? ne.textContent : "", strip: shown.length,
    url: location.href, link: q("lesson-link").href, position: q("lesson").dataset.position, text: q("lesson").innerText,
    cells: shown.map((li) => ({ step: +li.dataset.step, decision: li.dataset.decision })),
    decided: [...q("consumer-decisions").querySelectorAll("li[data-decision]")].map((li) => ({ decision: li.dataset.decision, text: li.textContent })) };
})()`

func lessonURL(srv string, s *source) string {
	return srv + web.LessonPath(s.id, s.topic, s.partition)
}

// waitStep waits until the panel shows step n.
func waitStep(n int) chromedp.Action[chromedp.Void] {
	return pollFresh(fmt.Sprintf(`(() => { const e = document.querySelector('[data-testid="lesson"]'); return !!e && e.dataset.step === "%d"; })()`, n),
		10*time.Second)
}

// checkStep compares what the panel shows with step n of the step list.
func checkStep(t *testing.T, ctx context.Context, ls *web.Lesson, n int) lessonShows {
	t.Helper()
	if err := chromedp.Do(ctx, waitStep(n)); err != nil {
		t.Fatalf("step %d never shown: %v (showing %+v)", n, err, eval[lessonShows](t, ctx, lessonShowsJS))
	}
	got := eval[lessonShows](t, ctx, lessonShowsJS)
	st := ls.Steps[n]
	if got.Sentence != st.Sentence {
		t.Errorf("step %d sentence %q, want %q", n, got.Sentence, st.Sentence)
	}
	want := fmt.Sprintf("step %d of %d", n, len(ls.Steps)-1)
	if n == 0 {
		want = fmt.Sprintf("start, %d steps", len(ls.Steps)-1)
	}
	if got.Count != want {
		t.Errorf("step %d count %q, want %q", n, got.Count, want)
	}
	if n > 0 && got.Decision != cellAt(ls, n-1, n) {
		t.Errorf("step %d: the step's batch shown %q, want %q", n, got.Decision, cellAt(ls, n-1, n))
	}
	if got.Strip != n {
		t.Errorf("step %d: %d batches shown in the strip", n, got.Strip)
	}
	if !strings.HasSuffix(got.LSO, fmt.Sprint(st.Broker.LSO)) {
		t.Errorf("step %d LSO %q, want %d", n, got.LSO, st.Broker.LSO)
	}
	return got
}

// lessonBatches are the batches of l's lesson: the partition's, then the
// ABORT markers of the remedy, written here from the engine's diagnosis
// with scenario.AdminAbort (what kafka-transactions.sh abort makes the
// leader write), not taken from the lesson.
func lessonBatches(l *txnindex.Log) []txnindex.Batch {
	bs := slices.Clone(l.Batches)
	d := present.Diagnose(l, diagnosis.Options{Position: -1})
	// An operator acts on a hanging transaction, and on a late one no
	// coordinator evidence decided (the demos have none).
	if !d.Alert() {
		return bs
	}
	off, si := l.LogEndOffset, int32(len(l.Segments)-1)
	pos := l.Segments[si].Size
	for _, t := range d.OpenTransactions {
		if t.State == diagnosis.StateHanging || t.State == diagnosis.StateLate && t.HangingRule == "" {
			raw, b := scenario.AdminAbort(scenario.Abort{ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, CoordinatorEpoch: t.CoordinatorEpoch}, off, d.Now, si, pos)
			bs, off, pos = append(bs, b), off+1, pos+int64(len(raw))
		}
	}
	return bs
}

// engineAt is what the engine decides on the log as of step k: per batch
// index the decision of its last part, and the consumer's position.
func engineAt(l *txnindex.Log, bs []txnindex.Batch, k int) (*txnindex.Log, map[int]txnindex.Decision, int64) {
	p := testfixture.PrefixLog(l, bs, k)
	out := map[int]txnindex.Decision{}
	pos := max(l.LogStartOffset, 0)
	for d := range p.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
		if d.BatchIndex >= 0 {
			out[int(d.BatchIndex)] = d
			if d.FetchOffset >= 0 {
				pos = max(pos, d.To+1)
			}
		}
	}
	return p, out, pos
}

var citedMarker = regexp.MustCompile(`marker at (\d+)`)

var lessonDemos = []string{"compacted", "interleaved", "lost-txnindex", "seek", "spanning", "stuck-lso"}

// TestLessonStepCoherence: each step shows one moment. For
// every step of every demo's lesson, the consumer's position, the LSO, the
// state of every batch in the strip, the step's own batch and every
// decision listed equal what the engine decides on the log as of that step
// (txnindex.Build over the batches written so far, then Log.Decisions),
// and nothing on the panel cites a marker at or past that step's log end.
func TestLessonStepCoherence(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	for _, name := range lessonDemos {
		s := cat.find(name, "demo-"+name, 0)
		l := s.get()
		ls := web.NewLesson(s.id, l, -1)
		bs := lessonBatches(l)
		if len(ls.Steps) != len(bs)+1 {
			t.Fatalf("%s: %d steps for %d batches", name, len(ls.Steps), len(bs))
		}
		// From the log start (an empty position), as the engine here
		// plays it: the seek demo otherwise starts at its seek.
		if err := chromedp.Do(ctx, chromedp.Navigate(lessonURL(srv.URL, s)+"?position="), waitStep(0)); err != nil {
			t.Fatal(err)
		}
		for n := range ls.Steps {
			if err := chromedp.Do(ctx, js(fmt.Sprintf(`window.txnscopeLesson.go(%d)`, n)), waitStep(n)); err != nil {
				t.Fatalf("%s step %d: %v", name, n, err)
			}
			got := eval[lessonShows](t, ctx, lessonShowsJS)
			p, eng, pos := engineAt(l, bs, n)
			if got.Position != strconv.FormatInt(pos, 10) {
				t.Errorf("%s step %d: consumer at %s, the engine's at %d", name, n, got.Position, pos)
			}
			if !strings.HasSuffix(got.LSO, " "+strconv.FormatInt(p.LastStableOffset, 10)) && got.LSO != strconv.FormatInt(p.LastStableOffset, 10) {
				t.Errorf("%s step %d: LSO shown %q, the engine's %d", name, n, got.LSO, p.LastStableOffset)
			}
			if len(got.Cells) != n {
				t.Errorf("%s step %d: %d batches in the strip", name, n, len(got.Cells))
			}
			for _, c := range got.Cells {
				if d := eng[c.Step-1]; c.Decision != d.Verdict.String() {
					t.Errorf("%s step %d: batch %d shown %q, the engine decides %v", name, n, c.Step-1, c.Decision, d.Verdict)
				}
			}
			if n > 0 && got.Decision != eng[n-1].Verdict.String() {
				t.Errorf("%s step %d: the step's batch shown %q, the engine decides %v", name, n, got.Decision, eng[n-1].Verdict)
			}
			decided := ls.Steps[n].Consumer.Decided
			if len(got.Decided) != len(decided) {
				t.Fatalf("%s step %d: %d decisions listed, the lesson has %d", name, n, len(got.Decided), len(decided))
			}
			for i, sd := range decided {
				d := eng[sd.Batch]
				if got.Decided[i].Decision != d.Verdict.String() || !strings.Contains(got.Decided[i].Text, d.Reason()) {
					t.Errorf("%s step %d: listed %q %q, the engine: %v %q", name, n, got.Decided[i].Decision, got.Decided[i].Text, d.Verdict, d.Reason())
				}
			}
			for _, m := range citedMarker.FindAllStringSubmatch(got.Text, -1) {
				if off, _ := strconv.ParseInt(m[1], 10, 64); off >= p.LogEndOffset {
					t.Errorf("%s step %d cites a marker at %d; the log ends at %d", name, n, off, p.LogEndOffset)
				}
			}
		}
		if name == "interleaved" {
			chromedp.Do(ctx, js(`window.txnscopeLesson.go(4)`), waitStep(4))
			screenshot(t, ctx, "TestLessonStepCoherence-waiting")
		}
		if name == "stuck-lso" {
			screenshot(t, ctx, "TestLessonStepCoherence-remedy")
		}
	}
}

// TestLessonStepThrough walks the interleaved demo's lesson with the
// buttons and the keyboard from a shared link, checking each step's
// sentence, the LSO, the aborted set and the .txnindex entry the ABORT
// marker appends, and that the link to a step opens that step.
func TestLessonStepThrough(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	ls := lessonOf(t, cat, "interleaved", "demo-interleaved")
	abortStep := -1
	for _, st := range ls.Steps[1:] {
		if st.Batch.Kind == "ABORT marker" && abortStep < 0 {
			abortStep = st.N
		}
	}
	if abortStep < 0 {
		t.Fatal("the interleaved demo has no ABORT marker")
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(lessonURL(srv.URL, s)+"?step=2")); err != nil {
		t.Fatal(err)
	}
	checkStep(t, ctx, ls, 2)
	chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-next"]`)))
	checkStep(t, ctx, ls, 3)
	chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-prev"]`)))
	checkStep(t, ctx, ls, 2)
	chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight))
	checkStep(t, ctx, ls, 3)
	chromedp.Do(ctx, chromedp.KeyEvent(" "))
	checkStep(t, ctx, ls, 4)
	chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowLeft))
	checkStep(t, ctx, ls, 3)
	chromedp.Do(ctx, chromedp.KeyEvent(kb.End))
	last := checkStep(t, ctx, ls, len(ls.Steps)-1)
	if !strings.Contains(last.URL, fmt.Sprintf("step=%d", len(ls.Steps)-1)) {
		t.Errorf("URL %q does not hold the step", last.URL)
	}
	chromedp.Do(ctx, chromedp.KeyEvent(kb.Home))
	checkStep(t, ctx, ls, 0)

	// The ABORT marker's step: the new .txnindex entry, the producer in the
	// aborted set of the response the consumer now gets, and the link to
	// the step opens it.
	chromedp.Do(ctx, js(fmt.Sprintf(`window.txnscopeLesson.go(%d)`, abortStep)))
	got := checkStep(t, ctx, ls, abortStep)
	var entry *web.LessonEntry
	for i, e := range ls.Steps[abortStep].Broker.Index {
		if e.New {
			entry = &ls.Steps[abortStep].Broker.Index[i]
		}
	}
	if entry == nil || !strings.Contains(got.NewEntry, entry.File) || !strings.Contains(got.NewEntry, fmt.Sprint(entry.LSO)) {
		t.Errorf("abort step %d: new entry shown %q, want %+v", abortStep, got.NewEntry, entry)
	}
	if !strings.Contains(got.Text, fmt.Sprintf("producer %d, first offset %d", entry.Producer, entry.First)) {
		t.Errorf("abort step %d: the response's aborted list is not shown: %q", abortStep, got.Text)
	}
	if !strings.Contains(got.Link, fmt.Sprintf("step=%d", abortStep)) {
		t.Errorf("link %q does not hold step %d", got.Link, abortStep)
	}
	screenshot(t, ctx, "TestLessonStepThrough")
	if err := chromedp.Do(ctx, chromedp.Navigate(lessonURL(srv.URL, s)), chromedp.Navigate(got.Link)); err != nil {
		t.Fatal(err)
	}
	checkStep(t, ctx, ls, abortStep)

	// A step past the end opens the last; a bad one is refused.
	if err := chromedp.Do(ctx, chromedp.Navigate(lessonURL(srv.URL, s)+"?step=999")); err != nil {
		t.Fatal(err)
	}
	checkStep(t, ctx, ls, len(ls.Steps)-1)
	if resp, _ := get(t, lessonURL(srv.URL, s)+"?step=x"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("?step=x: %s", resp.Status)
	}
}

// TestLessonChipColours: the strip's COMMIT and ABORT chips, and the
// verdicts of markers, have the timeline's colours (COMMIT #0072B2 dark
// blue, ABORT #C4589E pink), not the light blue of other control batches.
func TestLessonChipColours(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	ls := lessonOf(t, cat, "interleaved", "demo-interleaved")
	n := len(ls.Steps) - 1
	if err := chromedp.Do(ctx, chromedp.Navigate(lessonURL(srv.URL, s)+fmt.Sprintf("?step=%d", n)), waitStep(n)); err != nil {
		t.Fatal(err)
	}
	got := eval[map[string][]string](t, ctx, `(() => {
	  const out = {};
	  for (const li of document.querySelectorAll('[data-testid="lesson-strip"] li')) (out[li.dataset.kind] = out[li.dataset.kind] || []).push(getComputedStyle(li).backgroundColor);
	  return out; })()`)
	want := map[string]string{"COMMIT marker": "rgb(0, 114, 178)", "ABORT marker": "rgb(196, 88, 158)"}
	for kind, colour := range want {
		if len(got[kind]) == 0 {
			t.Errorf("no %s chip", kind)
		}
		for _, c := range got[kind] {
			if c != colour {
				t.Errorf("%s chip %s, want %s", kind, c, colour)
			}
		}
	}
	// The verdicts listed at the ABORT's step: its marker pink, the COMMIT
	// before it dark blue.
	abort := slices.IndexFunc(ls.Steps, func(st web.LessonStep) bool { return st.Batch != nil && st.Batch.Kind == "ABORT marker" })
	chromedp.Do(ctx, js(fmt.Sprintf(`window.txnscopeLesson.go(%d)`, abort)), waitStep(abort))
	verdicts := eval[map[string]string](t, ctx, `(() => {
	  const out = {};
	  for (const li of document.querySelectorAll('[data-testid="consumer-decisions"] li')) { const v = li.querySelector(".verdict"); if (v) out[li.querySelector("small").textContent] = getComputedStyle(v).backgroundColor; }
	  return out; })()`)
	for k, c := range verdicts {
		for kind, colour := range want {
			if strings.Contains(k, kind) && c != colour {
				t.Errorf("verdict of %s: %s, want %s", k, c, colour)
			}
		}
	}
	screenshot(t, ctx, "TestLessonChipColours")
}
