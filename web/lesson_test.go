package web

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// demoLogs builds every embedded demo (the loader round trip is tested in
// package scenario; here the built log is enough).
func demoLogs(t *testing.T) map[string]*txnindex.Log {
	t.Helper()
	demos, err := scenario.Demos()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*txnindex.Log{}
	for _, s := range demos {
		b, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		out[s.Name] = b.Log
	}
	return out
}

// TestLessonFollowsEngine checks the step list against the engine it is
// computed from: one step per batch, each step's decision the one
// Log.Decisions gives, the trace's own fetch loop deciding the same, the
// broker's LSO never going back and ending at the Log's LSO, the
// .txnindex ending as the rebuilt one with one new entry per aborting
// marker, and an aborted batch's producer in the aborted set.
func TestLessonFollowsEngine(t *testing.T) {
	for name, l := range demoLogs(t) {
		for _, from := range []int64{-1, 3, 7} {
			ls := NewLesson(name, l, from)
			if len(ls.Steps) != len(l.Batches)+1 {
				t.Fatalf("%s: %d steps for %d batches", name, len(ls.Steps), len(l.Batches))
			}
			want := map[int32]txnindex.Decision{}
			for d := range l.Decisions(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}) {
				if d.BatchIndex >= 0 {
					want[d.BatchIndex] = d
				}
			}
			trace := traceConsumer(l, from, len(l.Batches))
			prevLSO := int64(-1)
			news := 0
			for _, st := range ls.Steps[1:] {
				bi := int32(st.Batch.Index)
				if st.Consumer.Verdict != want[bi].Verdict.String() || st.Consumer.Cause != want[bi].Cause.String() || st.Answer != st.Consumer.Verdict {
					t.Errorf("%s from %d step %d: %s/%s, engine %v/%v", name, from, st.N, st.Consumer.Verdict, st.Consumer.Cause, want[bi].Verdict, want[bi].Cause)
				}
				if tr := trace[bi]; tr.ok && (tr.decision.Verdict != want[bi].Verdict || tr.decision.Cause != want[bi].Cause) {
					t.Errorf("%s from %d batch %d: trace decided %v/%v, Decisions %v/%v", name, from, bi, tr.decision.Verdict, tr.decision.Cause, want[bi].Verdict, want[bi].Cause)
				}
				if st.Broker.LSO < prevLSO {
					t.Errorf("%s step %d: LSO went back from %d to %d", name, st.N, prevLSO, st.Broker.LSO)
				}
				prevLSO = st.Broker.LSO
				for _, e := range st.Broker.Index {
					if e.New {
						news++
						if e.Last != st.Batch.From || st.Batch.Kind != "ABORT marker" {
							t.Errorf("%s step %d: new entry %+v on a %s", name, st.N, e, st.Batch.Kind)
						}
					}
				}
				if st.Consumer.Verdict == "aborted" && !slices.ContainsFunc(st.Consumer.Set, func(a LessonAbort) bool { return a.Producer == st.Batch.Producer }) {
					t.Errorf("%s step %d: aborted, but producer %d not in the set %v", name, st.N, st.Batch.Producer, st.Consumer.Set)
				}
				if !strings.HasPrefix(st.Sentence, st.Lead) || st.Why == "" {
					t.Errorf("%s step %d: sentence %q lead %q why %q", name, st.N, st.Sentence, st.Lead, st.Why)
				}
			}
			last := ls.Steps[len(ls.Steps)-1].Broker
			if last.LSO != l.LastStableOffset || last.HWM != l.HighWatermark {
				t.Errorf("%s: last step LSO %d HWM %d, the log's %d %d", name, last.LSO, last.HWM, l.LastStableOffset, l.HighWatermark)
			}
			var rebuilt []txnindex.AbortedTxn
			for _, es := range l.RebuiltIndex {
				rebuilt = append(rebuilt, es...)
			}
			if len(last.Index) != len(rebuilt) || news != len(rebuilt) {
				t.Errorf("%s: %d entries at the end, %d new ones, the log has %d", name, len(last.Index), news, len(rebuilt))
			}
			for i := range min(len(last.Index), len(rebuilt)) {
				e, r := last.Index[i], rebuilt[i]
				if e.Producer != int64(r.ProducerID) || e.First != r.FirstOffset || e.Last != r.LastOffset || e.LSO != r.LastStableOffset {
					t.Errorf("%s entry %d: %+v, rebuilt %+v", name, i, e, r)
				}
			}
			if _, err := json.Marshal(ls); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestLessonSentences pins the sentences of the interleaved demo's key
// steps to what a reader must learn from them.
func TestLessonSentences(t *testing.T) {
	l := demoLogs(t)["interleaved"]
	ls := NewLesson("interleaved", l, -1)
	var abortStep, abortedData *LessonStep
	for i := range ls.Steps[1:] {
		st := &ls.Steps[i+1]
		if st.Batch.Kind == "ABORT marker" && abortStep == nil {
			abortStep = st
		}
		if st.Answer == "aborted" && abortedData == nil {
			abortedData = st
		}
	}
	if abortStep == nil || abortedData == nil {
		t.Fatal("no ABORT marker or aborted batch in the interleaved demo")
	}
	for _, want := range []string{"ABORT marker lands at offset", "is aborted", ".txnindex", "The LSO moves from"} {
		if !strings.Contains(abortStep.Sentence, want) {
			t.Errorf("abort step %d: %q lacks %q", abortStep.N, abortStep.Sentence, want)
		}
	}
	for _, want := range []string{"joins the aborted set", "Consumer: aborted:"} {
		if !strings.Contains(abortedData.Sentence, want) {
			t.Errorf("aborted step %d: %q lacks %q", abortedData.N, abortedData.Sentence, want)
		}
	}
}
