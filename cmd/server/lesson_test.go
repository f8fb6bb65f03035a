package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
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
}

const lessonShowsJS = `(() => {
  const q = (id) => document.querySelector('[data-testid="' + id + '"]');
  const ne = q("txnindex-new");
  return { step: +q("lesson").dataset.step, count: q("lesson-count").textContent, sentence: q("lesson-sentence").textContent,
    decision: q("consumer-decision").dataset.decision || "", reason: q("consumer-reason").textContent, lso: q("broker-lso").textContent,
    set: q("consumer-set").textContent, newEntry: ne ? ne.textContent : "",
    strip: [...q("lesson-strip").children].filter((li) => !li.hidden && li.getBoundingClientRect().width > 0).length,
    url: location.href, link: q("lesson-link").href };
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
	if want := fmt.Sprintf("step %d of %d", n, len(ls.Steps)-1); got.Count != want {
		t.Errorf("step %d count %q, want %q", n, got.Count, want)
	}
	if n > 0 && (got.Decision != st.Consumer.Verdict || got.Reason != st.Consumer.Reason) {
		t.Errorf("step %d decision %q %q, want %q %q", n, got.Decision, got.Reason, st.Consumer.Verdict, st.Consumer.Reason)
	}
	if got.Strip != n {
		t.Errorf("step %d: %d batches shown in the strip", n, got.Strip)
	}
	if !strings.Contains(got.LSO, fmt.Sprint(st.Broker.LSO)) {
		t.Errorf("step %d LSO %q, want %d", n, got.LSO, st.Broker.LSO)
	}
	return got
}

// TestLessonStepThrough walks the interleaved demo's lesson with the
// buttons and the keyboard from a shared link, checking each step's
// sentence, decision, LSO, aborted set and the .txnindex entry the ABORT
// marker appends, and that the link to a step opens that step.
func TestLessonStepThrough(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	ls := lessonOf(t, cat, "interleaved", "demo-interleaved")
	abortStep, abortedStep := -1, -1
	for _, st := range ls.Steps[1:] {
		if st.Batch.Kind == "ABORT marker" && abortStep < 0 {
			abortStep = st.N
		}
		if st.Answer == "aborted" && abortedStep < 0 {
			abortedStep = st.N
		}
	}
	if abortStep < 0 || abortedStep < 0 {
		t.Fatal("the interleaved demo has no ABORT marker or aborted batch")
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

	// The step where the producer joins the aborted set.
	chromedp.Do(ctx, js(fmt.Sprintf(`window.txnscopeLesson.go(%d)`, abortedStep)))
	got := checkStep(t, ctx, ls, abortedStep)
	b := ls.Steps[abortedStep].Batch
	if !strings.Contains(got.Set, fmt.Sprintf("producer %d", b.Producer)) {
		t.Errorf("aborted step %d: the aborted set shows %q, want producer %d", abortedStep, got.Set, b.Producer)
	}

	// The ABORT marker's step: the new .txnindex entry is shown, and the
	// link to the step opens it.
	for range abortStep - abortedStep {
		chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight))
	}
	got = checkStep(t, ctx, ls, abortStep)
	var entry *web.LessonEntry
	for i, e := range ls.Steps[abortStep].Broker.Index {
		if e.New {
			entry = &ls.Steps[abortStep].Broker.Index[i]
		}
	}
	if entry == nil || !strings.Contains(got.NewEntry, entry.File) || !strings.Contains(got.NewEntry, fmt.Sprint(entry.LSO)) {
		t.Errorf("abort step %d: new entry shown %q, want %+v", abortStep, got.NewEntry, entry)
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

// TestLessonQuiz walks the quiz of the interleaved demo answering every
// other batch wrongly, and checks after each answer what is revealed (the
// verdict, whether the learner was right, the explanation) and the score.
func TestLessonQuiz(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	ls := lessonOf(t, cat, "interleaved", "demo-interleaved")
	if err := chromedp.Do(ctx, chromedp.Navigate(lessonURL(srv.URL, s)+"?quiz=1")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, waitStep(0)); err != nil {
		t.Fatal(err)
	}
	chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-next"]`)))
	right := 0
	for n := 1; n < len(ls.Steps); n++ {
		st := ls.Steps[n]
		if err := chromedp.Do(ctx, waitStep(n)); err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		// Before the answer: the decision is hidden and forward is off.
		before := eval[map[string]any](t, ctx, `({ decision: document.querySelector('[data-testid="consumer-decision"]').dataset.decision,
		  next: document.querySelector('[data-testid="lesson-next"]').disabled, result: document.querySelector('[data-testid="quiz-result"]').hidden,
		  sentence: document.querySelector('[data-testid="lesson-sentence"]').textContent })`)
		if before["decision"] != "hidden" || before["next"] != true || before["result"] != true || strings.Contains(before["sentence"].(string), "Consumer:") {
			t.Errorf("step %d before answering: %v", n, before)
		}
		choice := st.Answer
		wantRight := n%2 == 1
		if !wantRight {
			choice = "delivered"
			if st.Answer == "delivered" {
				choice = "aborted"
			}
		} else {
			right++
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="quiz-choice-`+choice+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="quiz-why"]`))); err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		res := text(t, ctx, `[data-testid="quiz-result"]`)
		correct, _ := attr(ctx, `[data-testid="quiz-result"]`, "data-correct")
		if correct != fmt.Sprint(wantRight) || (wantRight && !strings.HasPrefix(res, "Right")) || (!wantRight && !strings.Contains(res, "you said "+choice)) {
			t.Errorf("step %d: answered %s (answer %s): result %q correct=%s", n, choice, st.Answer, res, correct)
		}
		if why := text(t, ctx, `[data-testid="quiz-why"]`); why != st.Why {
			t.Errorf("step %d: why %q, want %q", n, why, st.Why)
		}
		got := eval[lessonShows](t, ctx, lessonShowsJS)
		if got.Decision != st.Answer || got.Reason != st.Consumer.Reason || got.Sentence != st.Sentence {
			t.Errorf("step %d revealed %q %q %q", n, got.Decision, got.Reason, got.Sentence)
		}
		score := text(t, ctx, `[data-testid="quiz-score"]`)
		if want := fmt.Sprintf("score %d / %d", right, n); !strings.HasPrefix(score, want) {
			t.Errorf("step %d: score %q, want %q", n, score, want)
		}
		if n == 4 {
			screenshot(t, ctx, "TestLessonQuiz")
		}
		if n+1 < len(ls.Steps) {
			chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight))
		}
	}
	// Going back shows the answers given; they cannot be changed.
	chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowLeft))
	if err := chromedp.Do(ctx, waitStep(len(ls.Steps)-2)); err != nil {
		t.Fatal(err)
	}
	if d := eval[bool](t, ctx, `document.querySelector('[data-testid="quiz-choice-delivered"]').disabled`); !d {
		t.Error("an answered step still takes answers")
	}
	if score := text(t, ctx, `[data-testid="quiz-score"]`); !strings.HasPrefix(score, fmt.Sprintf("score %d / %d", right, len(ls.Steps)-1)) {
		t.Errorf("final score %q, want %d / %d", score, right, len(ls.Steps)-1)
	}
}
