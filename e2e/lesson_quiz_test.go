package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/web"
)

// TestLessonQuiz walks the quiz of the interleaved demo, answering every
// other question wrongly. A question is asked at the step where the
// consumer decides its batch (none while it waits at the LSO); after each
// answer the page says whether it was right and why, and keeps the score;
// at the end a summary gives the score and the questions missed with their
// explanation, and a restart starts over.
func TestLessonQuiz(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	ls := lessonOf(t, cat, "interleaved", "demo-interleaved")
	if err := chromedp.Do(ctx, chromedp.Navigate(lessonURL(srv.URL, s)+"?quiz=1"), waitStep(0)); err != nil {
		t.Fatal(err)
	}
	chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-next"]`)))
	q, right := 0, 0
	var missed []web.LessonDecision
	for n := 1; n < len(ls.Steps); n++ {
		st := ls.Steps[n]
		if err := chromedp.Do(ctx, waitStep(n)); err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		asked := 0
		for i, d := range st.Consumer.Decided {
			if !d.Ask {
				continue
			}
			asked++
			// Before the answer: the decision is hidden, forward is off.
			before := eval[map[string]any](t, ctx, fmt.Sprintf(`({ decision: document.querySelector('[data-testid="decided-%d"]').dataset.decision,
			  next: document.querySelector('[data-testid="lesson-next"]').disabled, q: document.querySelector('[data-testid="quiz-q"]').textContent,
			  sentence: document.querySelector('[data-testid="lesson-sentence"]').textContent })`, i))
			if before["decision"] != "hidden" || before["next"] != true || !strings.Contains(before["q"].(string), fmt.Sprint(d.From)) || strings.Contains(before["sentence"].(string), "It delivers") {
				t.Errorf("step %d question %d before answering: %v", n, i, before)
			}
			choice, ok := d.Verdict, q%2 == 0
			if !ok {
				choice = "delivered"
				if d.Verdict == "delivered" {
					choice = "aborted"
				}
				missed = append(missed, d)
			} else {
				right++
			}
			q++
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="quiz-choice-`+choice+`"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="quiz-why"]`))); err != nil {
				t.Fatalf("step %d: %v", n, err)
			}
			res := text(t, ctx, `[data-testid="quiz-result"]`)
			correct, _ := attr(ctx, `[data-testid="quiz-result"]`, "data-correct")
			if correct != fmt.Sprint(ok) || (ok && !strings.HasPrefix(res, "Right")) || (!ok && !strings.Contains(res, "you said "+choice)) {
				t.Errorf("step %d: answered %s (answer %s): result %q correct=%s", n, choice, d.Verdict, res, correct)
			}
			if why := text(t, ctx, `[data-testid="quiz-why"]`); why != d.Why {
				t.Errorf("step %d: why %q, want %q", n, why, d.Why)
			}
			// The explanation is the question's: a COMMIT marker's names no
			// ABORT, and the other way round.
			if other, isMarker := map[string]string{"COMMIT marker": "ABORT", "ABORT marker": "COMMIT"}[d.Kind]; isMarker &&
				(!strings.Contains(d.Why, strings.Fields(d.Kind)[0]) || strings.Contains(d.Why, other)) {
				t.Errorf("step %d: the %s is explained with %q", n, d.Kind, d.Why)
			}
			if strings.Contains(res, "_") || (d.Verdict == "control" && !strings.Contains(res, "control marker")) {
				t.Errorf("step %d: the result %q names a verdict by its identifier", n, res)
			}
			if got, _ := attr(ctx, fmt.Sprintf(`[data-testid="decided-%d"]`, i), "data-decision"); got != d.Verdict {
				t.Errorf("step %d: revealed %q, want %q", n, got, d.Verdict)
			}
			if score := text(t, ctx, `[data-testid="quiz-score"]`); !strings.HasPrefix(score, fmt.Sprintf("score %d / %d", right, q)) {
				t.Errorf("step %d: score %q, want %d / %d", n, score, right, q)
			}
		}
		got := eval[lessonShows](t, ctx, lessonShowsJS)
		if got.Sentence != st.Sentence {
			t.Errorf("step %d answered: sentence %q, want %q", n, got.Sentence, st.Sentence)
		}
		if asked == 0 {
			// Nothing to decide: the consumer waits at the LSO (the
			// interleaved lesson's step 4), so no question and forward stays on.
			if hidden := eval[bool](t, ctx, `document.querySelector('[data-testid="quiz"]').hidden`); !hidden && n+1 < len(ls.Steps) {
				t.Errorf("step %d: a question box with nothing to decide", n)
			}
		}
		if n == 7 {
			screenshot(t, ctx, "TestLessonQuiz")
		}
		if n+1 < len(ls.Steps) {
			chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight))
		}
	}
	if w := eval[string](t, ctx, `document.querySelector('[data-testid="lesson-sentence"]').textContent`); q == 0 || w == "" {
		t.Fatalf("no question asked (%q)", w)
	}
	if s4 := ls.Steps[4]; len(s4.Consumer.Decided) != 0 || !strings.Contains(s4.Sentence, "receives nothing") {
		t.Errorf("step 4 asks %d questions: %q", len(s4.Consumer.Decided), s4.Sentence)
	}
	// The summary: score, and every question missed with its explanation.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="quiz-summary"]`))); err != nil {
		t.Fatal(err)
	}
	if got, want := text(t, ctx, `[data-testid="quiz-summary-score"]`), fmt.Sprintf("You scored %d of %d.", right, q); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	items := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="quiz-missed"] li')].map((li) => li.textContent)`)
	if len(items) != len(missed) {
		t.Fatalf("%d questions listed missed, want %d: %q", len(items), len(missed), items)
	}
	for i, d := range missed {
		if !strings.Contains(items[i], fmt.Sprint(d.From)) || !strings.Contains(items[i], d.Why) || !strings.Contains(items[i], "decision is "+d.Verdict) {
			t.Errorf("missed %d: %q, want %d-%d %s and %q", i, items[i], d.From, d.To, d.Verdict, d.Why)
		}
	}
	chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="quiz-summary"]`)))
	screenshot(t, ctx, "TestLessonQuiz-summary")
	// Restart: step 0, no answer, no summary.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="quiz-restart"]`)), waitStep(0)); err != nil {
		t.Fatal(err)
	}
	after := eval[map[string]any](t, ctx, `({ score: document.querySelector('[data-testid="quiz-score"]').textContent, summary: document.querySelector('[data-testid="quiz-summary"]').hidden })`)
	if !strings.HasPrefix(after["score"].(string), "score 0 / 0") || after["summary"] != true {
		t.Errorf("after restart: %v", after)
	}
}

// TestLessonLinks: lessons can be found. The partition page links its
// Lesson and Quiz; its Embed button gives the iframe snippet (with
// ?step=) and says another site needs --allowed-origin; every page's
// header links /lessons, which lists every partition's lesson, quiz and
// embed.
func TestLessonLinks(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+web.PartitionPath(s.id, s.topic, s.partition)), waitDone(1)); err != nil {
		t.Fatal(err)
	}
	links := eval[map[string]string](t, ctx, `({ lesson: document.querySelector('[data-testid="lesson-link-page"]').getAttribute("href"),
	  lessonText: document.querySelector('[data-testid="lesson-link-page"]').textContent,
	  quiz: document.querySelector('[data-testid="quiz-link-page"]').getAttribute("href"),
	  quizText: document.querySelector('[data-testid="quiz-link-page"]').textContent,
	  nav: document.querySelector('[data-testid="nav-lessons"]').getAttribute("href") })`)
	lp := web.LessonPath(s.id, s.topic, s.partition)
	if links["lesson"] != lp || links["lessonText"] != "Lesson" || links["quiz"] != lp+"?quiz=1" || links["quizText"] != "Quiz" || links["nav"] != "/lessons" {
		t.Errorf("partition page links %v", links)
	}
	if v := eval[bool](t, ctx, `document.querySelector('[data-testid="embed-box"]').open || document.querySelector('[data-testid="embed-snippet"]').checkVisibility()`); v {
		t.Error("the embed snippet shows before the Embed button is pressed")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="embed-button"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="embed-snippet"]`))); err != nil {
		t.Fatal(err)
	}
	snippet := eval[string](t, ctx, `document.querySelector('[data-testid="embed-snippet"]').value`)
	if want := `<iframe src="` + srv.URL + "/embed/interleaved/demo-interleaved/0?step=1"; !strings.HasPrefix(snippet, want) {
		t.Errorf("snippet %q, want it to start %q", snippet, want)
	}
	if note := text(t, ctx, `[data-testid="embed-origin-note"]`); !strings.Contains(note, "--allowed-origin") {
		t.Errorf("the embed note %q does not say --allowed-origin", note)
	}
	screenshot(t, ctx, "TestLessonLinks-embed")
	// The snippet's frame opens the lesson at step 1.
	src := snippet[len(`<iframe src="`):strings.Index(snippet, `" `)]
	if err := chromedp.Do(ctx, chromedp.Navigate(src), waitStep(1)); err != nil {
		t.Errorf("the snippet's URL does not open step 1: %v", err)
	}
	// /lessons lists every partition.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/lessons"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="lessons"]`))); err != nil {
		t.Fatal(err)
	}
	rows := eval[[]map[string]string](t, ctx, `[...document.querySelectorAll('[data-testid="lessons"] tbody tr')].map((tr) => ({ id: tr.dataset.testid,
	  lesson: tr.querySelector('[data-testid="lessons-lesson"]').getAttribute("href"), quiz: tr.querySelector('[data-testid="lessons-quiz"]').getAttribute("href"),
	  embed: tr.querySelector('[data-testid="lessons-embed"]').getAttribute("href") }))`)
	for _, name := range lessonDemos {
		d := cat.find(name, "demo-"+name, 0)
		p := web.LessonPath(d.id, d.topic, d.partition)
		found := false
		for _, r := range rows {
			if r["lesson"] == p && r["quiz"] == p+"?quiz=1" && r["embed"] == web.EmbedPath(d.id, d.topic, d.partition)+"?step=1" {
				found = true
			}
		}
		if !found {
			t.Errorf("/lessons does not list %s: %v", name, rows)
		}
	}
	screenshot(t, ctx, "TestLessonLinks-lessons")
	chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lessons-lesson"]`)))
	if err := chromedp.Do(ctx, waitStep(0)); err != nil {
		t.Errorf("the /lessons link does not open a lesson: %v", err)
	}
}

// drawnKind is the timeline's kind of a decision (timeline-draw.js binOf).
func drawnKind(d *txnindex.Decision) string {
	switch d.Verdict {
	case txnindex.Delivered:
		return "delivered"
	case txnindex.Aborted:
		return "aborted"
	case txnindex.Control:
		if d.Batch.IsCommitMarker() {
			return "commit"
		}
		if d.Batch.IsAbortMarker() {
			return "abort"
		}
		return "control"
	case txnindex.Pending:
		return "pending"
	case txnindex.BeforePosition:
		return "before"
	}
	return "gap"
}

// TestEmbedLessonAsOf: under an embed with a lesson, the timeline draws the
// log as of the step, for every step of every demo: the decisions drawn
// per kind are the engine's on the log as of that step (batches not
// written yet left out, those behind the step's LSO pending, a remedy's
// ABORT marker drawn once written), and the LSO marker is the step's.
func TestEmbedLessonAsOf(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	for _, name := range lessonDemos {
		s := cat.find(name, "demo-"+name, 0)
		l := s.get()
		ls := web.NewLesson(s.id, l, -1)
		bs := lessonBatches(l)
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+web.EmbedPath(s.id, s.topic, s.partition)+"?step=0&position="), waitDone(1)); err != nil {
			t.Fatal(err)
		}
		for n := range ls.Steps {
			p, _, _ := engineAt(l, bs, n)
			end := p.LogEndOffset // a remedy's marker too, though not in the partition streamed
			if err := chromedp.Do(ctx, js(fmt.Sprintf(`window.txnscopeLesson.go(%d)`, n)),
				pollFresh(fmt.Sprintf(`document.querySelector('[data-testid="timeline"]').dataset.asOf === "%d" && window.txnscope.state().painted`, end), 10*time.Second),
				chromedp.Sleep(50*time.Millisecond)); err != nil {
				t.Fatalf("%s step %d: the timeline never drew the log as of the step: %v", name, n, err)
			}
			want := map[string]int{}
			for d := range p.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
				if d.From < end {
					want[drawnKind(&d)]++
				}
			}
			// The frame after asOf draws the step (requestAnimationFrame).
			var got map[string]int
			lso, wantLSO := "", fmt.Sprint(min(p.LastStableOffset, end))
			for deadline := time.Now().Add(3 * time.Second); ; {
				got = eval[map[string]int](t, ctx, `window.txnscope.drawn()`)
				lso = eval[string](t, ctx, `document.querySelector('[data-testid="lso"] span').textContent`)
				if (fmt.Sprint(got) == fmt.Sprint(want) && strings.HasSuffix(lso, " "+wantLSO)) || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s step %d: the timeline draws %v, the engine on the log as of the step %v", name, n, got, want)
			}
			if !strings.HasSuffix(lso, " "+wantLSO) {
				t.Errorf("%s step %d: LSO marker %q, want %s", name, n, lso, wantLSO)
			}
			if name == "interleaved" && n == 4 {
				// Hovering producer 7's 2-4 gives the reason as of the
				// step: pending, not the abort of a marker not written.
				hoverOffset(t, ctx, 3)
				if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="tooltip"]`)),
					chromedp.Poll[chromedp.Void](`document.querySelector('[data-testid="tooltip"] .reason').textContent.startsWith("pending")`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
					t.Errorf("step 4: the tooltip of 2-4 says %q: %v", text(t, ctx, `[data-testid="tooltip"] .reason`), err)
				}
				screenshot(t, ctx, "TestEmbedLessonAsOf")
			}
		}
	}
}
