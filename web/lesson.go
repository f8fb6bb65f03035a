package web

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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

// LessonJSON is the lesson as HTML-safe JSON (json.Marshal escapes <, >
// and &), for a <script type="application/json"> block.
func LessonJSON(ls *Lesson) ([]byte, error) {
	return json.Marshal(ls)
}
