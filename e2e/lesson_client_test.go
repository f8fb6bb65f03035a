package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/web"
)

// TestLessonVariantCoherence: a lesson played with other consumer rules
// (?variant=) decides, at every step of every demo, what the engine
// decides for those rules on the log as of that step, with the same
// reasons.
func TestLessonVariantCoherence(t *testing.T) {
	cat := newCatalog(t)
	for _, name := range lessonDemos {
		s := cat.find(name, "demo-"+name, 0)
		l := s.get()
		bs := lessonBatches(l)
		for _, v := range []txnindex.Variant{txnindex.VariantLibrdkafka, txnindex.VariantFranzGo, txnindex.VariantKafkaGo, txnindex.VariantKafkaPython} {
			ls := web.NewLessonFor(s.id, l, -1, v)
			for n, st := range ls.Steps {
				p := testfixture.PrefixLog(l, bs, n)
				eng := map[int]txnindex.Decision{}
				for d := range p.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted, Variant: v}) {
					if d.BatchIndex >= 0 {
						eng[int(d.BatchIndex)] = d
					}
				}
				for _, sd := range st.Consumer.Decided {
					d := eng[sd.Batch]
					if sd.Verdict != d.Verdict.String() || sd.Reason != d.Reason() {
						t.Errorf("%s, %s, step %d: batch %d %s %q; the engine: %v %q", name, v, n, sd.Batch, sd.Verdict, sd.Reason, d.Verdict, d.Reason())
					}
				}
			}
		}
	}
}

// TestLessonRolledBackOrder: /lessons asks "why your service processed a
// rolled-back order" and links it to the interleaved demo's lesson played
// by kafka-go; walked step by step, the step that aborts producer 7's
// transaction says kafka-go delivers its records and why, where the Java
// consumer's lesson skips them.
func TestLessonRolledBackOrder(t *testing.T) {
	ctx, srv, cat := browser(t, false)
	s := cat.find("interleaved", "demo-interleaved", 0)
	ls := web.NewLessonFor(s.id, s.get(), -1, txnindex.VariantKafkaGo)
	java := lessonOf(t, cat, "interleaved", "demo-interleaved")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/lessons"),
		chromedp.Click(chromedp.CSS(`[data-testid="lessons-case-rolled-back"]`)), waitStep(0)); err != nil {
		t.Fatal(err)
	}
	if u := eval[string](t, ctx, `location.search`); !strings.Contains(u, "variant=kafka-go") {
		t.Errorf("the question's lesson is at %q, want variant=kafka-go", u)
	}
	if rules := eval[string](t, ctx, `document.querySelector('[data-testid="variant"]').value`); rules != "kafka-go" {
		t.Errorf("the timeline's rules selector shows %q, want kafka-go", rules)
	}
	if quiz, _ := attr(ctx, `[data-testid="lesson-mode-link"]`, "href"); !strings.Contains(quiz, "quiz=1&variant=kafka-go") {
		t.Errorf("the quiz link %q leaves kafka-go's rules behind", quiz)
	}
	const why = "kafka-go reads the fetch response's aborted-transactions list and never uses it"
	abortStep := -1
	for n := 0; n < len(ls.Steps); n++ {
		if n > 0 {
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="lesson-next"]`))); err != nil {
				t.Fatal(err)
			}
		}
		got := checkStep(t, ctx, ls, n)
		if strings.Contains(got.Sentence, "Among them 2–4 and 7–8, aborted records a Java consumer skips: kafka-go delivers this aborted record") {
			abortStep = n
			if !strings.Contains(got.Sentence, why) {
				t.Errorf("step %d names the aborted records kafka-go delivers but not why: %q", n, got.Sentence)
			}
			delivered := 0
			for _, d := range got.Decided {
				if d.Decision == "delivered" && strings.Contains(d.Text, "kafka-go delivers this aborted record") {
					delivered++
				}
			}
			if delivered != 2 {
				t.Errorf("step %d lists %d aborted batches kafka-go delivers with its reason, want 2: %+v", n, delivered, got.Decided)
			}
			screenshot(t, ctx, "TestLessonRolledBackOrder")
		}
	}
	if abortStep < 0 {
		t.Fatal("no step of the kafka-go lesson says that kafka-go delivers the aborted records 2–4 and 7–8")
	}
	if js := java.Steps[abortStep].Sentence; !strings.Contains(js, "It skips 2–4, 7–8 as aborted") {
		t.Errorf("the Java consumer's lesson at step %d: %q, want it to skip 2–4 and 7–8", abortStep, js)
	}
	// kafkajs's record-by-record loop is not played: said so, not
	// played as the Java consumer's.
	if resp, body := get(t, lessonURL(srv.URL, s)+"?variant=kafkajs"); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "record by record") {
		t.Errorf("?variant=kafkajs: %s %s", resp.Status, body)
	}
}
