package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/static"
	"github.com/txnscope/txnscope/txnindex"
)

// LessonMaxBatches caps a lesson: it plays the first this many batches of a
// partition. Each step replays the log up to its batch with txnindex.Build,
// so a lesson costs O(n²) batch replays; lessons are for small partitions.
const LessonMaxBatches = 400

// Lesson is the step-through of one partition, computed here from the
// engine and rendered by static/js/lesson.js (it only draws what is here).
// Step 0 is the empty partition; step k (k ≥ 1) is the log just after batch
// k-1 was appended, and the consumer just after deciding it.
type Lesson struct {
	Version   int          `json:"version"`
	Source    string       `json:"source"`
	Topic     string       `json:"topic"`
	Partition int32        `json:"partition"`
	Isolation string       `json:"isolation"`
	Rules     string       `json:"rules"`
	Position  int64        `json:"position"` // where the consumer starts
	Batches   int          `json:"batches"`  // batches in the partition
	Note      string       `json:"note,omitempty"`
	Steps     []LessonStep `json:"steps"`
}

// LessonStep is one step's view model.
type LessonStep struct {
	N        int            `json:"n"`
	Batch    *LessonBatch   `json:"batch,omitempty"`
	Broker   LessonBroker   `json:"broker"`
	Consumer LessonConsumer `json:"consumer"`
	Sentence string         `json:"sentence"`
	Lead     string         `json:"lead"` // the broker half of Sentence, all a quiz shows before the answer
	// Answer is the verdict a quiz asks the learner to predict ("" on
	// step 0); Why explains it in a sentence.
	Answer string `json:"answer,omitempty"`
	Why    string `json:"why,omitempty"`
}

// LessonBatch is the batch a step appends.
type LessonBatch struct {
	Index    int    `json:"index"`
	From     int64  `json:"from"`
	To       int64  `json:"to"`
	Producer int64  `json:"producer"` // -1 without a producer id
	Epoch    int16  `json:"epoch"`
	Kind     string `json:"kind"` // "data", "transactional data", "COMMIT marker", "ABORT marker", "control"
	Records  int32  `json:"records"`
	Segment  string `json:"segment"`
}

// LessonBroker is the broker's state after the step's append, from
// txnindex.Build over the log up to and including the batch.
type LessonBroker struct {
	LogEnd  int64         `json:"log_end"`
	HWM     int64         `json:"hwm"`
	LSO     int64         `json:"lso"`
	PrevLSO int64         `json:"prev_lso"`
	Ongoing []LessonTxn   `json:"ongoing"`
	Decided *LessonTxn    `json:"decided,omitempty"` // the transaction this step's marker ended
	Index   []LessonEntry `json:"txnindex"`          // every .txnindex entry so far, in file order
}

// LessonTxn is a transaction on the broker side.
type LessonTxn struct {
	Producer int64  `json:"producer"`
	First    int64  `json:"first"`
	Last     int64  `json:"last"` // last data offset so far; -1 if none seen
	State    string `json:"state"`
}

// LessonEntry is one .txnindex entry (AbortedTxn).
type LessonEntry struct {
	File     string `json:"file"`
	Producer int64  `json:"producer"`
	First    int64  `json:"first"`
	Last     int64  `json:"last"`
	LSO      int64  `json:"lso"`
	New      bool   `json:"new"` // appended by this step's marker
}

// LessonConsumer is the consumer's state after deciding the step's batch.
type LessonConsumer struct {
	Fetched     bool          `json:"fetched"` // a fetch returned the batch
	FetchOffset int64         `json:"fetch_offset"`
	Listed      []LessonAbort `json:"listed"` // the fetch response's aborted list, as sent
	Queue       []LessonAbort `json:"queue"`  // its elements not reached yet
	Set         []LessonAbort `json:"set"`    // the aborted producer set
	Verdict     string        `json:"verdict,omitempty"`
	Cause       string        `json:"cause,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	Gap         string        `json:"gap,omitempty"` // offsets missing just before the batch
	Position    int64         `json:"position"`      // the consumer's position after the step
}

// LessonAbort is one aborted-list element (producer, first offset).
type LessonAbort struct {
	Producer int64 `json:"producer"`
	First    int64 `json:"first"`
}

func abortsOf(list []txnindex.AbortedTransaction) []LessonAbort {
	out := make([]LessonAbort, 0, len(list))
	for _, a := range list {
		out = append(out, LessonAbort{int64(a.ProducerID), a.FirstOffset})
	}
	return out
}

// consumerTrace is what the consumer knew when it decided one batch.
type consumerTrace struct {
	ok          bool
	fetchOffset int64
	listed      []LessonAbort
	queue, set  []LessonAbort
	decision    txnindex.Decision
}

// traceConsumer plays the read_committed Java consumer the way
// Log.Decisions does (FetchInto, then Consumer.Process, from the position
// to the LSO) and records, per batch index below n, the aborted list of the
// response that returned it and the consumer's queue and aborted set right
// after its bookkeeping.
func traceConsumer(l *txnindex.Log, from int64, n int) []consumerTrace {
	out := make([]consumerTrace, n)
	pos := max(from, l.LogStartOffset)
	c := txnindex.Consumer{Isolation: txnindex.ReadCommitted, Variant: txnindex.VariantJava, Position: pos, Log: l}
	var resp txnindex.FetchResponse
	for pos < l.LastStableOffset {
		l.FetchInto(txnindex.FetchRequest{Offset: pos, Isolation: txnindex.ReadCommitted}, &resp)
		if resp.Err != txnindex.FetchOK || len(resp.Batches) == 0 || resp.FirstBatch >= n {
			break
		}
		listed := abortsOf(resp.AbortedTransactions)
		c.Process(&resp, pos, func(d txnindex.Decision) bool {
			if bi := int(d.BatchIndex); bi >= 0 && bi < n {
				out[bi] = consumerTrace{ok: true, fetchOffset: pos, listed: listed,
					queue: abortsOf(c.AbortedQueue()), set: abortsOf(c.AbortedSet()), decision: d}
			}
			return true
		})
		if c.Position <= pos {
			break
		}
		pos = c.Position
	}
	return out
}

// NewLesson computes the step-through of l for a read_committed Java
// consumer starting at from (-1: the log start offset).
func NewLesson(id string, l *txnindex.Log, from int64) *Lesson {
	n := min(len(l.Batches), LessonMaxBatches)
	ls := &Lesson{Version: 1, Source: id, Topic: l.Topic, Partition: l.Partition, Isolation: "read_committed",
		Rules: "Java consumer", Position: max(from, l.LogStartOffset), Batches: len(l.Batches)}
	if n < len(l.Batches) {
		ls.Note = fmt.Sprintf("this lesson plays the first %d of %d batches", n, len(l.Batches))
	}

	// The engine's decisions: for a batch split at the position, the last
	// one (the part at or past the position) is the batch's decision.
	decs := make([]txnindex.Decision, n)
	gaps := make([]string, n)
	var gapText []string
	for d := range l.Decisions(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}) {
		if d.BatchIndex < 0 {
			gapText = append(gapText, fmt.Sprintf("%s missing (%s)", offsets(d.From, d.To), strings.TrimPrefix(d.Reason(), "gap: ")))
			continue
		}
		bi := int(d.BatchIndex)
		if bi >= n {
			break
		}
		decs[bi] = d
		if len(gapText) > 0 {
			gaps[bi] = strings.Join(gapText, "; ")
			gapText = nil
		}
	}
	trace := traceConsumer(l, from, n)

	// Transactions open before the first batch (from a producer snapshot)
	// seed every replay, as they seeded l's.
	var seeds []txnindex.OngoingTxn
	for _, t := range l.Txns {
		if t.Seeded {
			seeds = append(seeds, txnindex.OngoingTxn{ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, FirstOffset: t.FirstOffset})
		}
	}
	replay := func(k int) *txnindex.Log {
		si := 0
		if k > 0 {
			si = max(int(l.Batches[k-1].Segment), 0)
		}
		segs := slices.Clone(l.Segments[:si+1])
		for i := range segs {
			// The replay's own index, not the files on disk: those hold
			// the entries of markers not appended yet.
			segs[i].TxnIndex, segs[i].TxnIndexOnDisk = nil, false
		}
		// The high watermark follows the log end as the append is
		// replicated, but never passes the one the partition has now.
		hw := l.LogStartOffset
		if k > 0 {
			hw = l.Batches[k-1].NextOffset()
		}
		hw = max(min(hw, l.HighWatermark), 0)
		return txnindex.Build(&txnindex.Partition{Topic: l.Topic, Partition: l.Partition, Segments: segs,
			Batches: l.Batches[:k:k], LogStartOffset: l.LogStartOffset, HighWatermark: hw, Ongoing: seeds})
	}

	prev := replay(0)
	ls.Steps = append(ls.Steps, LessonStep{N: 0,
		Broker:   LessonBroker{LogEnd: prev.LogEndOffset, HWM: prev.HighWatermark, LSO: prev.LastStableOffset, PrevLSO: prev.LastStableOffset, Ongoing: ongoing(prev), Index: []LessonEntry{}},
		Consumer: LessonConsumer{FetchOffset: -1, Listed: []LessonAbort{}, Queue: []LessonAbort{}, Set: []LessonAbort{}, Position: ls.Position},
		Sentence: fmt.Sprintf("%s-%d holds %s. Step forward to watch the broker append them one by one (left), and a read_committed consumer (%s rules) that fetches the finished log from offset %d decide each one (right).",
			l.Topic, l.Partition, plural(len(l.Batches), "batch", "batches"), ls.Rules, ls.Position),
	})
	var prevSet []LessonAbort
	for k := 1; k <= n; k++ {
		bi := k - 1
		b := &l.Batches[bi]
		cur := replay(k)
		st := LessonStep{N: k, Batch: lessonBatch(l, bi)}
		st.Broker = LessonBroker{LogEnd: cur.LogEndOffset, HWM: cur.HighWatermark, LSO: cur.LastStableOffset,
			PrevLSO: prev.LastStableOffset, Ongoing: ongoing(cur), Index: []LessonEntry{}}
		var entry *LessonEntry
		for si, ents := range cur.RebuiltIndex {
			for _, e := range ents {
				le := LessonEntry{File: cur.Segments[si].TxnIndexName(), Producer: int64(e.ProducerID), First: e.FirstOffset,
					Last: e.LastOffset, LSO: e.LastStableOffset, New: int32(si) == b.Segment && e.LastOffset == b.BaseOffset && b.IsAbortMarker()}
				st.Broker.Index = append(st.Broker.Index, le)
				if le.New {
					entry = &st.Broker.Index[len(st.Broker.Index)-1]
				}
			}
		}
		if t := cur.TxnOf(bi); t != nil && t.MarkerOffset == b.BaseOffset {
			st.Broker.Decided = &LessonTxn{Producer: int64(t.ProducerID), First: t.FirstOffset, Last: t.LastDataOffset, State: t.State.String()}
		}

		d := decs[bi]
		tr := trace[bi]
		st.Consumer = LessonConsumer{FetchOffset: -1, Listed: []LessonAbort{}, Queue: []LessonAbort{}, Set: []LessonAbort{},
			Verdict: d.Verdict.String(), Cause: d.Cause.String(), Reason: d.Reason(), Gap: gaps[bi], Position: ls.Position}
		if tr.ok {
			st.Consumer.Fetched, st.Consumer.FetchOffset = true, tr.fetchOffset
			st.Consumer.Listed, st.Consumer.Queue, st.Consumer.Set = tr.listed, tr.queue, tr.set
			st.Consumer.Position = max(ls.Position, b.NextOffset())
		} else if k > 1 {
			st.Consumer.Position = ls.Steps[k-1].Consumer.Position
		}
		st.Answer = d.Verdict.String()
		st.Why = whyOf(d)
		st.Lead = brokerSentence(cur, bi, st.Broker, entry)
		st.Sentence = st.Lead + " " + consumerSentence(d, st.Consumer, prevSet)
		prevSet = st.Consumer.Set
		ls.Steps = append(ls.Steps, st)
		prev = cur
	}
	return ls
}

func ongoing(l *txnindex.Log) []LessonTxn {
	out := []LessonTxn{}
	for _, i := range l.Open {
		t := &l.Txns[i]
		out = append(out, LessonTxn{Producer: int64(t.ProducerID), First: t.FirstOffset, Last: t.LastDataOffset, State: t.State.String()})
	}
	return out
}

func lessonBatch(l *txnindex.Log, i int) *LessonBatch {
	b := &l.Batches[i]
	lb := &LessonBatch{Index: i, From: b.BaseOffset, To: b.LastOffset(), Producer: -1, Epoch: b.ProducerEpoch, Records: b.Records}
	if b.HasProducerID() {
		lb.Producer = int64(b.ProducerID)
	}
	if b.Segment >= 0 && int(b.Segment) < len(l.Segments) {
		lb.Segment = l.Segments[b.Segment].Name
	}
	switch {
	case b.IsCommitMarker():
		lb.Kind = "COMMIT marker"
	case b.IsAbortMarker():
		lb.Kind = "ABORT marker"
	case b.IsControl():
		lb.Kind = "control"
	case b.IsTransactional():
		lb.Kind = "transactional data"
	default:
		lb.Kind = "data"
	}
	return lb
}

// offsets is "offset 5" or "offsets 5–7".
func offsets(from, to int64) string {
	if from == to {
		return "offset " + span(from, to)
	}
	return "offsets " + span(from, to)
}

func span(from, to int64) string {
	if from == to {
		return strconv.FormatInt(from, 10)
	}
	return strconv.FormatInt(from, 10) + "–" + strconv.FormatInt(to, 10)
}

func who(b *txnindex.Batch) string {
	if !b.HasProducerID() {
		return "A producer without a producer id"
	}
	return "Producer " + strconv.FormatInt(int64(b.ProducerID), 10)
}

// brokerSentence says what the append did on the broker: which transaction
// it opened, extended or ended, the .txnindex entry it appended, and where
// the LSO went.
func brokerSentence(cur *txnindex.Log, bi int, br LessonBroker, entry *LessonEntry) string {
	var sb strings.Builder
	b := &cur.Batches[bi]
	t := cur.TxnOf(bi)
	switch {
	case b.IsEndTxnMarker() && br.Decided != nil:
		fmt.Fprintf(&sb, "%s's %s lands at offset %d: its transaction from %d is %s.", who(b), markerWord(b), b.BaseOffset, br.Decided.First, br.Decided.State)
		if entry != nil {
			fmt.Fprintf(&sb, " The broker appends the entry (producer %d, first %d, last %d, LSO %d) to %s.", entry.Producer, entry.First, entry.Last, entry.LSO, entry.File)
		}
	case b.IsEndTxnMarker():
		fmt.Fprintf(&sb, "%s's %s lands at offset %d, but the producer had no open transaction here: the broker changes nothing and writes no index entry.", who(b), markerWord(b), b.BaseOffset)
	case b.IsControl():
		fmt.Fprintf(&sb, "A control batch (%s) is appended; it ends no transaction.", offsets(b.BaseOffset, b.LastOffset()))
	case b.IsTransactional() && t != nil && t.FirstOffset == b.BaseOffset:
		fmt.Fprintf(&sb, "%s begins a transaction and writes %s.", who(b), offsets(b.BaseOffset, b.LastOffset()))
	case b.IsTransactional() && t != nil:
		fmt.Fprintf(&sb, "%s writes %s in its transaction from %d.", who(b), offsets(b.BaseOffset, b.LastOffset()), t.FirstOffset)
	default:
		fmt.Fprintf(&sb, "%s writes %s outside any transaction.", who(b), offsets(b.BaseOffset, b.LastOffset()))
	}
	switch {
	case br.LSO != br.PrevLSO:
		fmt.Fprintf(&sb, " The LSO moves from %d to %d", br.PrevLSO, br.LSO)
	default:
		fmt.Fprintf(&sb, " The LSO stays at %d", br.LSO)
	}
	if len(br.Ongoing) > 0 {
		o := br.Ongoing[0]
		fmt.Fprintf(&sb, ", held by producer %d's open transaction from %d.", o.Producer, o.First)
	} else if br.LSO == br.HWM {
		sb.WriteString(", the high watermark: no transaction is open.")
	} else {
		sb.WriteString(".")
	}
	return sb.String()
}

func markerWord(b *txnindex.Batch) string {
	if b.IsAbortMarker() {
		return "ABORT marker"
	}
	return "COMMIT marker"
}

// consumerSentence says what the consumer did with the batch: the aborted
// set's change, then the engine's reason.
func consumerSentence(d txnindex.Decision, c LessonConsumer, before []LessonAbort) string {
	var sb strings.Builder
	if c.Gap != "" {
		fmt.Fprintf(&sb, "Before it, %s. ", c.Gap)
	}
	if !c.Fetched {
		fmt.Fprintf(&sb, "The consumer does not fetch it: %s.", d.Reason())
		return sb.String()
	}
	in := func(list []LessonAbort, a LessonAbort) bool { return slices.Contains(list, a) }
	for _, a := range c.Set {
		if !in(before, a) {
			fmt.Fprintf(&sb, "The consumer reaches the aborted-list element (producer %d, first offset %d): producer %d joins the aborted set. ", a.Producer, a.First, a.Producer)
		}
	}
	for _, a := range before {
		if !in(c.Set, a) {
			fmt.Fprintf(&sb, "Producer %d's ABORT marker takes it out of the aborted set. ", a.Producer)
		}
	}
	fmt.Fprintf(&sb, "Consumer: %s.", d.Reason())
	return sb.String()
}

// whyOf is the rule behind a verdict, for the quiz.
func whyOf(d txnindex.Decision) string {
	switch d.Cause {
	case txnindex.CauseAbortedTxn:
		return "The batch is transactional and its producer is in the aborted set: the fetch response listed its aborted transaction, and the consumer reached that transaction's first offset."
	case txnindex.CauseNotAborted:
		return "The batch is transactional but its producer is not in the aborted set, so read_committed delivers it: its transaction did not abort."
	case txnindex.CauseNonTransactional:
		return "The batch is not transactional: read_committed filters transactional batches only."
	case txnindex.CauseNonTxnFromAbortedProducer:
		return "The producer is in the aborted set, but the batch is not transactional, and the set filters transactional batches only."
	case txnindex.CauseCommitMarker, txnindex.CauseAbortMarker, txnindex.CauseOtherControl:
		return "Control batches (COMMIT and ABORT markers) are never returned to the application; an ABORT marker also takes its producer out of the aborted set."
	case txnindex.CauseAtOrAboveLSO:
		return "read_committed fetches stop at the last stable offset, which an open transaction holds back: the batch is not readable yet."
	case txnindex.CauseAtOrAboveHWM:
		return "Nothing at or above the high watermark is readable."
	case txnindex.CauseUnreachable:
		return "The consumer cannot pass an earlier batch, so it never gets here."
	case txnindex.CauseBelowPosition, txnindex.CauseBelowLogStart:
		return "The consumer starts past this batch, so it never sees it."
	case txnindex.CauseGapEmptiedBatch:
		return "The cleaner emptied this batch: it holds no record."
	}
	return d.Reason()
}

// LessonJSON is the lesson as HTML-safe JSON (json.Marshal escapes <, >
// and &), for a <script type="application/json"> block.
func LessonJSON(ls *Lesson) ([]byte, error) {
	return json.Marshal(ls)
}

// LessonView is the lesson page (and the lesson panel of an embed or an
// export).
type LessonView struct {
	Timeline TimelineView
	Lesson   *Lesson
	Data     string // LessonJSON
	Quiz     bool
	Step     int
	Autoplay int // ms between steps; 0 = off
	Assets   LessonAssets
	Href     string // the partition's timeline, "" in an export
}

// LessonAssets are lesson.js and lesson.css, linked or (export) inlined.
type LessonAssets struct {
	CSS, JS         string
	CSSText, JSText string
}

func lessonAssets() LessonAssets {
	return LessonAssets{CSS: static.Path("css/lesson.css"), JS: static.Path("js/lesson.js")}
}

// lessonQuery reads ?step=, ?quiz=, ?autoplay=, ?interval= and ?position=.
// A bad value is an error the handler reports as 400.
func lessonQuery(r *http.Request, v *LessonView) (from int64, err error) {
	q := r.URL.Query()
	from = -1
	if s := q.Get("position"); s != "" {
		if from, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, fmt.Errorf("position %q is not an offset", s)
		}
	}
	if s := q.Get("step"); s != "" {
		if v.Step, err = strconv.Atoi(s); err != nil || v.Step < 0 {
			return 0, fmt.Errorf("step %q is not a step number", s)
		}
	}
	v.Quiz = q.Get("quiz") == "1"
	if q.Get("autoplay") == "1" {
		v.Autoplay = 1500
		if s := q.Get("interval"); s != "" {
			ms, err := strconv.Atoi(s)
			if err != nil || ms < 200 || ms > 60000 {
				return 0, fmt.Errorf("interval %q: want milliseconds from 200 to 60000", s)
			}
			v.Autoplay = ms
		}
	}
	return from, nil
}

func (u *UI) lessonView(w http.ResponseWriter, r *http.Request) (*LessonView, bool) {
	id, topic := r.PathValue("id"), r.PathValue("topic")
	p, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	if err != nil {
		http.Error(w, "partition is not a number", http.StatusBadRequest)
		return nil, false
	}
	l, ok := u.cat.Log(id, topic, int32(p))
	if !ok {
		http.Error(w, "no partition "+topic+"-"+strconv.FormatInt(p, 10)+" in source "+strconv.Quote(id), http.StatusNotFound)
		return nil, false
	}
	v := &LessonView{Timeline: timelineView(id, "", l), Assets: lessonAssets(), Href: PartitionPath(id, topic, int32(p))}
	from, err := lessonQuery(r, v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	v.Lesson = NewLesson(id, l, from)
	v.Step = min(v.Step, len(v.Lesson.Steps)-1)
	b, err := LessonJSON(v.Lesson)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return nil, false
	}
	v.Data = string(b)
	return v, true
}

// Lesson serves /lessons/{id}/{topic}/{partition}: the step-through, or
// with ?quiz=1 the quiz; ?step=N opens step N.
func (u *UI) Lesson() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := u.lessonView(w, r)
		if !ok {
			return
		}
		for _, s := range u.cat.Sources() {
			if s.ID == v.Lesson.Source {
				v.Timeline.Title = s.Title
			}
		}
		render(w, r, LessonPage(*v))
	})
}

// LessonEmbed serves /embed/{id}/{topic}/{partition}: the timeline alone
// for an iframe (see Embed), and with ?step=N or ?autoplay=1 the lesson
// panel under it, starting at step N and, with autoplay, stepping every
// ?interval= ms (default 1500).
func (u *UI) LessonEmbed() http.Handler {
	plain := u.Embed()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !q.Has("step") && q.Get("autoplay") != "1" && q.Get("quiz") != "1" {
			plain.ServeHTTP(w, r)
			return
		}
		v, ok := u.lessonView(w, r)
		if !ok {
			return
		}
		v.Timeline.Chrome = chromeNone
		render(w, r, LessonEmbedPage(*v))
	})
}

// StaticLessonPage is StaticPage with the lesson panel: the step list is
// inlined with the timeline's data, lesson.js and lesson.css with the
// other assets.
func StaticLessonPage(ctx context.Context, w io.Writer, id, title string, l *txnindex.Log, d *txnindex.Diagnosis, data []byte, ls *Lesson) error {
	v := timelineView(id, title, l)
	if d != nil {
		v.Diag = diagnosisView(d)
	}
	v.Chrome = chromeStatic
	v.WSPath, v.APIPath = "", ""
	v.Data = string(data)
	if err := inlineAssets(&v.Assets); err != nil {
		return err
	}
	lv := LessonView{Timeline: v, Lesson: ls}
	var err error
	if lv.Assets.CSSText, err = readAsset("css/lesson.css", "</style"); err != nil {
		return err
	}
	if lv.Assets.JSText, err = readAsset("js/lesson.js", "</script"); err != nil {
		return err
	}
	b, err := LessonJSON(ls)
	if err != nil {
		return err
	}
	lv.Data = string(b)
	return LessonStaticPage(lv).Render(ctx, w)
}

// quizChoices are the verdicts a quiz offers (gaps are not batches).
var quizChoices = []string{"delivered", "aborted", "control", "pending", "before_position"}

func lessonTitle(v LessonView) string {
	if v.Quiz {
		return "Quiz " + v.Timeline.Name
	}
	return "Lesson " + v.Timeline.Name
}

func lessonMode(v LessonView) string {
	if v.Quiz {
		return "quiz"
	}
	return "lesson"
}

func lessonConsumerLabel(v LessonView) string {
	return v.Lesson.Isolation + ", " + v.Lesson.Rules + ", from offset " + i64(v.Lesson.Position)
}

// LessonPath is the lesson URL of a partition.
func LessonPath(id, topic string, partition int32) string {
	return "/lessons/" + url.PathEscape(id) + "/" + url.PathEscape(topic) + "/" + strconv.Itoa(int(partition))
}

func lessonPath(v LessonView) string {
	return LessonPath(v.Timeline.Source, v.Timeline.Topic, v.Timeline.Partition)
}
