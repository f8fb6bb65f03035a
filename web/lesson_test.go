package web

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/present"
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

var markerAt = regexp.MustCompile(`marker at (\d+)`)

// checkLessonCoherent checks every step of ls against the engine on the
// log prefix of that step: the broker's LSO, each cell's state (decided
// with the engine's verdict, or pending where the engine says pending),
// every decision shown (verdict, cause and reason the engine gives on the
// prefix), the consumer's position, and that nothing a step says cites a
// marker at or past that step's log end.
func checkLessonCoherent(t *testing.T, name string, l *txnindex.Log, ls *Lesson, from int64) {
	t.Helper()
	bs := slices.Clone(l.Batches)
	for _, c := range ls.Cells[len(l.Batches):] {
		if !c.Remedy {
			t.Fatalf("%s: cell %d past the partition's batches is not the remedy's", name, c.Index)
		}
	}
	_, fixes := remedies(l)
	bs = append(bs, fixes...)
	if len(ls.Steps) != len(bs)+1 || len(ls.Cells) != len(bs) {
		t.Fatalf("%s: %d steps, %d cells for %d batches", name, len(ls.Steps), len(ls.Cells), len(bs))
	}
	for k, st := range ls.Steps {
		p := testfixture.PrefixLog(l, bs, k)
		if st.Broker.LSO != p.LastStableOffset || st.Broker.LogEnd != p.LogEndOffset || st.Broker.HWM != p.HighWatermark {
			t.Errorf("%s from %d step %d: broker LSO %d log end %d HWM %d, engine %d %d %d", name, from, k, st.Broker.LSO, st.Broker.LogEnd, st.Broker.HWM,
				p.LastStableOffset, p.LogEndOffset, p.HighWatermark)
		}
		eng := map[int]txnindex.Decision{}
		pos := max(from, l.LogStartOffset)
		for d := range p.Decisions(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}) {
			if d.BatchIndex < 0 {
				continue
			}
			eng[int(d.BatchIndex)] = d
			if d.FetchOffset >= 0 {
				pos = max(pos, d.To+1)
			}
		}
		for i := range k {
			c, d := ls.Cells[i], eng[i]
			decided := c.Decided >= 0 && c.Decided <= k
			if decided != (d.Verdict != txnindex.Pending) || (decided && c.Verdict != d.Verdict.String()) {
				t.Errorf("%s from %d step %d batch %d (%d-%d): decided %v at %d (%s), engine %v", name, from, k, i, c.From, c.To, decided, c.Decided, c.Verdict, d.Verdict)
			}
		}
		for _, sd := range st.Consumer.Decided {
			var d *txnindex.Decision
			for e := range p.Decisions(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}) {
				if int(e.BatchIndex) == sd.Batch && e.From == sd.From {
					d = &e
					break
				}
			}
			if d == nil || sd.Verdict != d.Verdict.String() || sd.Cause != d.Cause.String() || sd.Reason != d.Reason() {
				t.Errorf("%s from %d step %d: shows %d-%d %s/%s %q, engine %+v", name, from, k, sd.From, sd.To, sd.Verdict, sd.Cause, sd.Reason, d)
			}
			if k > 0 && ls.Cells[sd.Batch].Decided != k {
				t.Errorf("%s step %d: batch %d shown decided here, its cell says step %d", name, k, sd.Batch, ls.Cells[sd.Batch].Decided)
			}
			if sd.Ask != (sd.Verdict != "before_position") {
				t.Errorf("%s step %d: %s asked=%v", name, k, sd.Verdict, sd.Ask)
			}
		}
		if st.Consumer.Position != pos {
			t.Errorf("%s from %d step %d: consumer at %d, the engine's consumer at %d", name, from, k, st.Consumer.Position, pos)
		}
		texts := []string{st.Sentence, st.Lead}
		for _, d := range st.Consumer.Decided {
			texts = append(texts, d.Reason, d.Gap)
		}
		for _, s := range texts {
			for _, m := range markerAt.FindAllStringSubmatch(s, -1) {
				if off, _ := strconv.ParseInt(m[1], 10, 64); off >= p.LogEndOffset {
					t.Errorf("%s from %d step %d cites a marker at %d, the log ends at %d: %q", name, from, k, off, p.LogEndOffset, s)
				}
			}
		}
	}
}

// TestLessonFollowsEngine: for every demo and three starting positions,
// every step equals the engine on the log as of that step
// (checkLessonCoherent), the LSO never goes back, the .txnindex gains one
// entry per aborting marker and ends as the rebuilt one, and an aborted
// batch's producer is in the aborted set.
func TestLessonFollowsEngine(t *testing.T) {
	for name, l := range demoLogs(t) {
		for _, from := range []int64{-1, 3, 7} {
			ls := NewLesson(name, l, from)
			checkLessonCoherent(t, name, l, ls, from)
			prevLSO, news := int64(-1), 0
			for _, st := range ls.Steps[1:] {
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
				for _, d := range st.Consumer.Decided {
					if d.Verdict == "aborted" && !slices.ContainsFunc(d.Set, func(a LessonAbort) bool { return a.Producer == d.Producer }) {
						t.Errorf("%s step %d: %d-%d aborted, but producer %d not in the set %v", name, st.N, d.From, d.To, d.Producer, d.Set)
					}
					if d.Why == "" {
						t.Errorf("%s step %d: no explanation for %d-%d", name, st.N, d.From, d.To)
					}
				}
				if !strings.HasPrefix(st.Sentence, st.Lead) {
					t.Errorf("%s step %d: sentence %q lead %q", name, st.N, st.Sentence, st.Lead)
				}
			}
			if ls.Remedy == "" {
				last := ls.Steps[len(ls.Steps)-1].Broker
				if last.LSO != l.LastStableOffset || last.HWM != l.HighWatermark {
					t.Errorf("%s: last step LSO %d HWM %d, the log's %d %d", name, last.LSO, last.HWM, l.LastStableOffset, l.HighWatermark)
				}
				// Every entry the broker serves: a lost .txnindex serves none.
				var rebuilt []txnindex.AbortedTxn
				for si, es := range l.RebuiltIndex {
					if !l.Segments[si].TxnIndexAbsent {
						rebuilt = append(rebuilt, es...)
					}
				}
				if len(last.Index) != len(rebuilt) || news != len(rebuilt) {
					t.Errorf("%s: %d entries at the end, %d new ones, the log has %d", name, len(last.Index), news, len(rebuilt))
				}
			}
			if _, err := json.Marshal(ls); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestLessonWaitsAtLSO is the example: at step 4 of the interleaved
// demo producer 7's transaction is open and the LSO is 2, so the consumer
// stands at 2 having decided nothing of it; the batches 2-4 and 7-8 are
// decided aborted only at the step that writes the ABORT marker (11), with
// the aborted list the response carries from then on.
func TestLessonWaitsAtLSO(t *testing.T) {
	l := demoLogs(t)["interleaved"]
	ls := NewLesson("interleaved", l, -1)
	st := ls.Steps[4]
	if st.Broker.LSO != 2 || st.Consumer.Position != 2 || !st.Consumer.Waiting || len(st.Consumer.Decided) != 0 {
		t.Errorf("step 4: LSO %d, consumer at %d waiting=%v, decided %v", st.Broker.LSO, st.Consumer.Position, st.Consumer.Waiting, st.Consumer.Decided)
	}
	if !strings.Contains(st.Sentence, "receives nothing") || strings.Contains(st.Sentence, "aborted by marker") {
		t.Errorf("step 4 says %q", st.Sentence)
	}
	abort := -1
	for _, s := range ls.Steps[1:] {
		if s.Batch.Kind == "ABORT marker" {
			abort = s.N
			break
		}
	}
	for _, c := range ls.Cells {
		if c.Producer == 7 && c.Kind == "transactional data" && (c.Decided != abort || c.Verdict != "aborted") {
			t.Errorf("producer 7's %d-%d decided %s at step %d, want aborted at the ABORT's step %d", c.From, c.To, c.Verdict, c.Decided, abort)
		}
	}
	f := ls.Steps[abort].Consumer.Fetches
	if len(f) != 1 || f[0].Offset != 2 || len(f[0].Listed) != 1 || f[0].Listed[0] != (LessonAbort{7, 2}) {
		t.Errorf("the ABORT's step fetches %+v, want one fetch from 2 listing (7, 2)", f)
	}
}

// TestLessonRemedy: the stuck-LSO lesson ends with the abort an operator
// runs: the marker kafka-transactions.sh makes the broker write (the
// hanging producer's id and epoch, coordinator epoch 0 as it has none),
// after which the LSO reaches the high watermark and the consumer reads to
// it, the hanging transaction's data aborted.
func TestLessonRemedy(t *testing.T) {
	logs := demoLogs(t)
	l := logs["stuck-lso"]
	d := present.Diagnose(l, diagnosis.Options{Position: -1})
	// The demo has no coordinator state: its transaction is late, its
	// hanging unconfirmed, and an operator must act (Alert).
	if d.PinnedBy == nil || !d.Alert() || d.PinnedBy.State != diagnosis.StateLate {
		t.Fatalf("the stuck-LSO demo is not pinned by a late transaction: %+v", d.PinnedBy)
	}
	pin := d.PinnedBy
	ls := NewLesson("stuck-lso", l, -1)
	want := fmt.Sprintf("abort --topic %s --partition %d --start-offset %d", l.Topic, l.Partition, pin.FirstOffset)
	// The command as a person copies it: --bootstrap-server "$BOOTSTRAP",
	// not the variable quoted again as a literal ('"$BOOTSTRAP"').
	if !strings.Contains(ls.Remedy, want) || !strings.Contains(ls.Remedy, `--bootstrap-server "$BOOTSTRAP" abort`) {
		t.Errorf("remedy %q, want %q", ls.Remedy, want)
	}
	last := ls.Steps[len(ls.Steps)-1]
	if len(ls.Steps) != len(l.Batches)+2 || last.Remedy == "" || last.Batch.Kind != "ABORT marker" || last.Batch.Producer != int64(pin.ProducerID) ||
		last.Batch.Epoch != pin.ProducerEpoch || last.Batch.From != l.LogEndOffset {
		t.Fatalf("last step %+v, want the ABORT of producer %d epoch %d at %d", last.Batch, pin.ProducerID, pin.ProducerEpoch, l.LogEndOffset)
	}
	if last.Broker.PrevLSO != pin.FirstOffset || last.Broker.LSO != l.LogEndOffset+1 || last.Broker.HWM != l.LogEndOffset+1 ||
		last.Consumer.Position != l.LogEndOffset+1 || last.Consumer.Waiting {
		t.Errorf("after the remedy: LSO %d→%d HWM %d, consumer at %d waiting=%v", last.Broker.PrevLSO, last.Broker.LSO, last.Broker.HWM, last.Consumer.Position, last.Consumer.Waiting)
	}
	for _, c := range ls.Cells {
		if c.Producer == int64(pin.ProducerID) && c.Kind == "transactional data" && (c.Verdict != "aborted" || c.Decided != last.N) {
			t.Errorf("the hanging transaction's %d-%d: %s at step %d", c.From, c.To, c.Verdict, c.Decided)
		}
	}
	for _, w := range []string{"coordinator epoch 0", "WriteTxnMarkers", "The LSO moves from 3 to 13"} {
		if !strings.Contains(last.Sentence, w) {
			t.Errorf("remedy sentence %q lacks %q", last.Sentence, w)
		}
	}
	for name, l := range logs {
		if name != "stuck-lso" && NewLesson(name, l, -1).Remedy != "" {
			t.Errorf("%s: a remedy on a partition nothing pins", name)
		}
	}
}
