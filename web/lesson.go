package web

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// LessonMaxBatches caps a lesson: it plays the first this many batches of a
// partition. Each step replays the log up to its batch with txnindex.Build,
// so a lesson costs O(n²) batch replays; lessons are for small partitions.
const LessonMaxBatches = 400

// Lesson is the step-through of one partition, computed here from the
// engine and rendered by static/js/lesson.js (it only draws what is here).
// Step 0 is the empty partition; step k (k ≥ 1) is one moment: the log just
// after batch k-1 was appended, as the broker has it then, and a
// read_committed consumer that has fetched everything that log lets it
// (it waits at the LSO, gets the aborted list once the ABORT marker is
// written, then filters). A partition pinned by a hanging transaction ends
// with the remedy played out (lesson_remedy.go).
type Lesson struct {
	Version   int    `json:"version"`
	Source    string `json:"source"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Isolation string `json:"isolation"`
	Rules     string `json:"rules"`    // the consumer rules in words
	Variant   string `json:"variant"`  // their name (txnindex.Variant)
	Position  int64  `json:"position"` // where the consumer starts
	Batches   int    `json:"batches"`  // batches in the partition
	Note      string `json:"note,omitempty"`
	// Remedy is the command the last steps play out ("" for none).
	Remedy string `json:"remedy,omitempty"`
	// Cells are the lesson's batches in offset order, with the step that
	// appends each and the step at which the consumer decides it: the
	// strip and the timeline draw step N from them.
	Cells []LessonCell `json:"cells"`
	Steps []LessonStep `json:"steps"`
}

// LessonCell is one batch of the lesson and when it changed.
type LessonCell struct {
	LessonBatch
	Appended int    `json:"appended"` // the step that appends it
	Decided  int    `json:"decided"`  // the step whose consumer decides it; -1 if none does
	Verdict  string `json:"verdict"`  // the decision from Decided on ("" while pending)
	Remedy   bool   `json:"remedy,omitempty"`
	// Header is a remedy's marker's batch header: the marker is not in the
	// partition the API serves, so the timeline's detail panel shows it
	// from here (lesson.js) in the API's batch words.
	Header *LessonHeader `json:"header,omitempty"`
}

// LessonHeader is the batch header of a remedy's marker, named as the
// batch API names it (api.BatchJSON).
type LessonHeader struct {
	MaxTimestamp     int64  `json:"max_timestamp"`
	BaseSequence     int32  `json:"base_sequence"`
	Size             int32  `json:"size"`
	Position         int64  `json:"position"`
	Magic            int8   `json:"magic"`
	Attributes       int16  `json:"attributes"`
	Compression      string `json:"compression"`
	TimestampType    string `json:"timestamp_type"`
	CoordinatorEpoch int32  `json:"coordinator_epoch"`
	TxnIndex         string `json:"txnindex"` // the .txnindex file of its segment
}

// LessonStep is one step's view model.
type LessonStep struct {
	N        int            `json:"n"`
	Batch    *LessonBatch   `json:"batch,omitempty"`
	Remedy   string         `json:"remedy,omitempty"` // the command whose marker this step appends
	Broker   LessonBroker   `json:"broker"`
	Consumer LessonConsumer `json:"consumer"`
	Sentence string         `json:"sentence"`
	Lead     string         `json:"lead"` // the broker half of Sentence, all a quiz shows before the answers
}

// LessonBatch is a batch a step appends.
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
	// IndexNote says which .txnindex files are lost (Segment.TxnIndexAbsent):
	// the broker lists none of their segments' aborted transactions.
	IndexNote string `json:"txnindex_note,omitempty"`
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

// LessonConsumer is what the consumer did at the step: the fetches it
// sent to the log as the broker has it now, and what it decided.
type LessonConsumer struct {
	Fetches  []LessonFetch    `json:"fetches"`
	Decided  []LessonDecision `json:"decided"`
	Queue    []LessonAbort    `json:"queue"` // the aborted list's elements not reached yet, after the step
	Set      []LessonAbort    `json:"set"`   // the aborted producer set after the step
	Position int64            `json:"position"`
	// Waiting: the consumer stands at the LSO with data above it that
	// read_committed may not read yet.
	Waiting bool `json:"waiting"`
}

// LessonFetch is one fetch the consumer sent at a step.
type LessonFetch struct {
	Offset int64         `json:"offset"`
	From   int64         `json:"from"` // offsets the response returned; -1 for none
	To     int64         `json:"to"`
	Listed []LessonAbort `json:"listed"` // the response's aborted list
}

// LessonDecision is the consumer's decision for (part of) one batch.
type LessonDecision struct {
	Batch    int    `json:"batch"` // index in Cells
	From     int64  `json:"from"`
	To       int64  `json:"to"`
	Kind     string `json:"kind"`
	Producer int64  `json:"producer"`
	Fetch    int    `json:"fetch"` // index in Fetches; -1: no fetch returned it (below the position)
	Verdict  string `json:"verdict"`
	Cause    string `json:"cause"`
	Reason   string `json:"reason"`
	Why      string `json:"why"`           // the rule, for the quiz
	Gap      string `json:"gap,omitempty"` // offsets missing just before the batch
	// Queue and Set after the batch's bookkeeping.
	Queue []LessonAbort `json:"queue"`
	Set   []LessonAbort `json:"set"`
	// Ask: a quiz asks for it (the consumer decides it; a batch below
	// the position is never fetched, so there is nothing to ask).
	Ask bool `json:"ask"`
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

// NewLesson computes the step-through of l for a read_committed Java
// consumer starting at from (-1: the log start offset).
func NewLesson(id string, l *txnindex.Log, from int64) *Lesson {
	return NewLessonFor(id, l, from, txnindex.VariantJava)
}

// ExportLessonMaxBatches caps the lesson an export inlines: a step holds
// the broker's and the consumer's state, which grows with the batches
// before it, so 400 steps of a busy partition made 2.9 MB of the page.
const ExportLessonMaxBatches = 100

// NewLessonOf is NewLesson playing at most most batches.
func NewLessonOf(id string, l *txnindex.Log, from int64, most int) *Lesson {
	return newLesson(id, l, from, txnindex.VariantJava, most)
}

// NewLessonFor is NewLesson for the consumer rules v: any variant that
// LessonVariant accepts.
func NewLessonFor(id string, l *txnindex.Log, from int64, v txnindex.Variant) *Lesson {
	return newLesson(id, l, from, v, LessonMaxBatches)
}

func newLesson(id string, l *txnindex.Log, from int64, v txnindex.Variant, most int) *Lesson {
	n := min(len(l.Batches), most)
	ls := &Lesson{Version: 2, Source: id, Topic: l.Topic, Partition: l.Partition, Isolation: "read_committed",
		Rules: present.ClientWords(v), Variant: v.String(), Position: max(from, l.LogStartOffset), Batches: len(l.Batches)}
	if n < len(l.Batches) {
		ls.Note = fmt.Sprintf("this lesson plays the first %s of %s batches", txnindex.Count(int64(n)), txnindex.Count(int64(len(l.Batches))))
	}
	all := l.Batches[:n:n]
	var cmds []string
	if n == len(l.Batches) {
		var fixes []txnindex.Batch
		cmds, fixes = remedies(l)
		all = append(slices.Clone(all), fixes...)
		if len(cmds) > 0 {
			ls.Remedy = cmds[0]
		}
	}
	gaps := gapsBefore(l, from, n)

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
			si = max(int(all[k-1].Segment), 0)
		}
		segs := slices.Clone(l.Segments[:si+1])
		for i := range segs {
			// The replay's own index, not the files on disk: those hold
			// the entries of markers not appended yet.
			segs[i].TxnIndex, segs[i].TxnIndexOnDisk, segs[i].TxnIndexAbsent = nil, false, false
		}
		// The high watermark follows the log end as the append is
		// replicated, but never passes the one the partition has now;
		// the remedy's markers are replicated like any append.
		hw := l.LogStartOffset
		if k > 0 {
			hw = all[k-1].NextOffset()
		}
		if k <= n {
			hw = min(hw, l.HighWatermark)
		}
		build := func() *txnindex.Log {
			return txnindex.Build(&txnindex.Partition{Topic: l.Topic, Partition: l.Partition, Segments: segs,
				Batches: all[:k:k], LogStartOffset: l.LogStartOffset, HighWatermark: max(hw, 0), Ongoing: seeds})
		}
		cur := build()
		if !lostIndexes(l, segs, cur, l.LogEndOffset) {
			return cur
		}
		return build()
	}

	prev := replay(0)
	ls.Steps = append(ls.Steps, LessonStep{N: 0,
		Broker:   LessonBroker{LogEnd: prev.LogEndOffset, HWM: prev.HighWatermark, LSO: prev.LastStableOffset, PrevLSO: prev.LastStableOffset, Ongoing: ongoing(prev), Index: []LessonEntry{}},
		Consumer: LessonConsumer{Fetches: []LessonFetch{}, Decided: []LessonDecision{}, Queue: []LessonAbort{}, Set: []LessonAbort{}, Position: ls.Position},
		Sentence: fmt.Sprintf("%s-%d holds %s. Step forward to watch the broker append them one by one (left), and a read_committed consumer (%s rules) reading from offset %d fetch what the broker lets it read at each moment (right).%s",
			l.Topic, l.Partition, plural(len(l.Batches), "batch", "batches"), ls.Rules, ls.Position, variantNote(v)),
	})
	pos := ls.Position
	for k := 1; k <= len(all); k++ {
		bi := k - 1
		b := &all[bi]
		cur := replay(k)
		lb := lessonBatch(cur, bi)
		ls.Cells = append(ls.Cells, LessonCell{LessonBatch: *lb, Appended: k, Decided: -1, Remedy: bi >= n})
		if bi >= n {
			ls.Cells[bi].Header = &LessonHeader{MaxTimestamp: b.MaxTimestamp, BaseSequence: b.BaseSequence(), Size: b.Size, Position: b.Position(),
				Magic: b.Magic(), Attributes: b.Attributes(), Compression: b.Compression().String(), TimestampType: b.TimestampType().String(),
				CoordinatorEpoch: b.CoordinatorEpoch(), TxnIndex: cur.Segments[b.Segment].TxnIndexName()}
		}
		st := LessonStep{N: k, Batch: lb}
		if bi >= n {
			st.Remedy = cmds[bi-n]
		}
		st.Broker = LessonBroker{LogEnd: cur.LogEndOffset, HWM: cur.HighWatermark, LSO: cur.LastStableOffset,
			PrevLSO: prev.LastStableOffset, Ongoing: ongoing(cur), Index: []LessonEntry{}}
		st.Broker.IndexNote = lostNote(cur)
		var entry *LessonEntry
		for si, ents := range cur.RebuiltIndex {
			if cur.Segments[si].TxnIndexOnDisk {
				ents = cur.Segments[si].TxnIndex // a lost .txnindex: what the broker serves
			}
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

		st.Consumer, pos = consumeStep(cur, from, pos, bi, gaps, v)
		for _, d := range st.Consumer.Decided {
			c := &ls.Cells[d.Batch]
			c.Decided, c.Verdict = k, d.Verdict
		}
		st.Lead = brokerSentence(cur, bi, st.Broker, entry)
		if st.Remedy != "" {
			st.Lead = remedySentence(st.Remedy, b) + " " + st.Lead
		}
		st.Sentence = st.Lead + " " + consumerSentence(st.Consumer, st.Broker)
		ls.Steps = append(ls.Steps, st)
		prev = cur
	}
	return ls
}

// consumeStep plays the consumer at one step, on cur, the log as the
// broker has it after batch bi was appended: a batch wholly below the
// consumer's starting position is never fetched (the engine's
// before_position, decided as it lands); then, as Log.Decisions does,
// FetchInto and Consumer.Process from the position while it is below the
// LSO. It returns what the consumer did and its position after.
//
// For kafka-go and kafka-python (v) the loop is the Java consumer's, each
// decision as the client makes it (txnindex.AsClient), and no aborted
// queue or set is kept, as neither client keeps one; kafka-python's
// fetches are read_uncommitted ones, to the high watermark.
func consumeStep(cur *txnindex.Log, from, pos int64, bi int, gaps []string, v txnindex.Variant) (LessonConsumer, int64) {
	out := LessonConsumer{Fetches: []LessonFetch{}, Decided: []LessonDecision{}, Queue: []LessonAbort{}, Set: []LessonAbort{}}
	unfiltered := v == txnindex.VariantKafkaGo || v == txnindex.VariantKafkaPython
	add := func(d txnindex.Decision, fetch int, queue, set []LessonAbort) {
		d = txnindex.AsClient(v, true, d)
		if unfiltered {
			queue, set = []LessonAbort{}, []LessonAbort{}
		}
		i := int(d.BatchIndex)
		b := &cur.Batches[i]
		ld := LessonDecision{Batch: i, From: d.From, To: d.To, Kind: kindOf(b), Producer: -1, Fetch: fetch,
			Verdict: d.Verdict.String(), Cause: d.Cause.String(), Reason: d.Reason(), Why: whyOf(d),
			Queue: queue, Set: set, Ask: d.Verdict != txnindex.BeforePosition}
		if b.HasProducerID() {
			ld.Producer = int64(b.ProducerID)
		}
		if i < len(gaps) && d.From == b.BaseOffset {
			ld.Gap = gaps[i]
		}
		out.Decided = append(out.Decided, ld)
	}
	if cur.Batches[bi].LastOffset() < pos {
		for d := range cur.Decisions(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}) {
			if int(d.BatchIndex) == bi {
				add(d, -1, []LessonAbort{}, []LessonAbort{})
			}
		}
	}
	iso, limit, cv := txnindex.ReadCommitted, cur.LastStableOffset, v
	if unfiltered {
		cv = txnindex.VariantJava
	}
	if v == txnindex.VariantKafkaPython {
		iso, limit = txnindex.ReadUncommitted, cur.HighWatermark
	}
	c := txnindex.Consumer{Isolation: iso, Variant: cv, Position: pos, Log: cur}
	var resp txnindex.FetchResponse
	for pos < limit {
		cur.FetchInto(txnindex.FetchRequest{Offset: pos, Isolation: iso}, &resp)
		if resp.Err != txnindex.FetchOK || len(resp.Batches) == 0 {
			break
		}
		last := &resp.Batches[len(resp.Batches)-1]
		out.Fetches = append(out.Fetches, LessonFetch{Offset: pos, From: resp.Batches[0].BaseOffset, To: last.LastOffset(), Listed: abortsOf(resp.AbortedTransactions)})
		fi := len(out.Fetches) - 1
		c.Process(&resp, pos, func(d txnindex.Decision) bool {
			if d.BatchIndex >= 0 {
				if !unfiltered {
					out.Queue, out.Set = abortsOf(c.AbortedQueue()), abortsOf(c.AbortedSet())
				}
				add(d, fi, out.Queue, out.Set)
			}
			return true
		})
		if c.Position <= pos {
			break
		}
		pos = c.Position
	}
	out.Position = pos
	out.Waiting = pos < cur.HighWatermark
	return out, pos
}

// gapsBefore says, per batch index below n, which offsets are missing just
// before the batch (from the engine's gap decisions).
func gapsBefore(l *txnindex.Log, from int64, n int) []string {
	gaps := make([]string, n)
	var text []string
	for d := range l.Decisions(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}) {
		if d.BatchIndex < 0 {
			text = append(text, fmt.Sprintf("%s missing (%s)", offsets(d.From, d.To), strings.TrimPrefix(d.Reason(), "gap: ")))
			continue
		}
		bi := int(d.BatchIndex)
		if bi >= n {
			break
		}
		if len(text) > 0 {
			gaps[bi] = strings.Join(text, "; ")
			text = nil
		}
	}
	return gaps
}

func ongoing(l *txnindex.Log) []LessonTxn {
	out := []LessonTxn{}
	for _, i := range l.Open {
		t := &l.Txns[i]
		out = append(out, LessonTxn{Producer: int64(t.ProducerID), First: t.FirstOffset, Last: t.LastDataOffset, State: t.State.String()})
	}
	return out
}

func kindOf(b *txnindex.Batch) string {
	switch {
	case b.IsCommitMarker():
		return "COMMIT marker"
	case b.IsAbortMarker():
		return "ABORT marker"
	case b.IsControl():
		return "control"
	case b.IsTransactional():
		return "transactional data"
	}
	return "data"
}

func lessonBatch(l *txnindex.Log, i int) *LessonBatch {
	b := &l.Batches[i]
	lb := &LessonBatch{Index: i, From: b.BaseOffset, To: b.LastOffset(), Producer: -1, Epoch: b.ProducerEpoch, Records: b.Records, Kind: kindOf(b)}
	if b.HasProducerID() {
		lb.Producer = int64(b.ProducerID)
	}
	if b.Segment >= 0 && int(b.Segment) < len(l.Segments) {
		lb.Segment = l.Segments[b.Segment].Name
	}
	return lb
}

// LessonJSON is the lesson as HTML-safe JSON (json.Marshal escapes <, >
// and &), for a <script type="application/json"> block.
func LessonJSON(ls *Lesson) ([]byte, error) {
	return json.Marshal(ls)
}

// lostNote names the .txnindex files of cur that are lost, "" when none is.
func lostNote(cur *txnindex.Log) string {
	var lost []string
	for i := range cur.Segments {
		if cur.Segments[i].TxnIndexAbsent {
			lost = append(lost, cur.Segments[i].TxnIndexName())
		}
	}
	if len(lost) == 0 {
		return ""
	}
	return strings.Join(lost, ", ") + " lost (the copy left it out, its .index is there): the broker lists none of its segment's aborted transactions"
}

// lostIndexes marks, in segs (those of the replay cur), the segments whose
// .txnindex l lost: a segment with no .txnindex beside its .index although
// its aborted transactions imply entries. The broker serves none of the
// entries of markers already in the files, and writes the entries of
// markers appended since (below end, the files' log end, or not: a remedy's
// ABORT). It reports whether it marked any, for cur to be built again.
func lostIndexes(l *txnindex.Log, segs []txnindex.Segment, cur *txnindex.Log, end int64) bool {
	marked := false
	for i := range segs {
		if i >= len(l.Segments) || !l.Segments[i].TxnIndexAbsent || i >= len(l.RebuiltIndex) || len(l.RebuiltIndex[i]) == 0 {
			continue
		}
		var since []txnindex.AbortedTxn
		for _, e := range cur.RebuiltIndex[i] {
			if e.LastOffset >= end {
				since = append(since, e)
			}
		}
		segs[i].TxnIndex, segs[i].TxnIndexOnDisk, segs[i].TxnIndexAbsent = since, true, len(since) == 0
		marked = true
	}
	return marked
}
