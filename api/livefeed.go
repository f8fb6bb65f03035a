package api

import (
	"sync"
	"time"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/txnindex"
)

// LiveFeed keeps the latest view of each partition a live.Watcher polls
// (serve --bootstrap), for a Catalog to serve as partitions whose log
// changes (Feed). Subscribers (one per open websocket) are woken through a
// channel of capacity 1 that is sent to without blocking: changes
// coalesce, and a slow browser never holds up the watcher or another
// browser.
type LiveFeed struct {
	bootstrap, topic string

	mu      sync.Mutex
	parts   map[int32]*LivePartition
	state   string // LiveConnected, LiveReconnecting, LiveError
	err     string
	retryIn time.Duration
	seq     int
	at      time.Time
	notes   []string
	subs    map[*liveSub]bool
}

// LivePartition is one watched partition: the last view of it.
type LivePartition struct {
	feed *LiveFeed
	id   int32
	view live.PartitionView // guarded by feed.mu
}

type liveSub struct {
	part *LivePartition
	ch   chan struct{}
}

// maxLiveNotes bounds the notes kept for the page.
const maxLiveNotes = 20

// NewLiveFeed is an empty feed of topic on the cluster at bootstrap; Apply
// fills it.
func NewLiveFeed(bootstrap, topic string) *LiveFeed {
	return &LiveFeed{bootstrap: bootstrap, topic: topic, parts: map[int32]*LivePartition{}, subs: map[*liveSub]bool{}}
}

// Partition returns the watched partition id, nil until an update has
// carried it.
func (f *LiveFeed) Partition(id int32) *LivePartition {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts[id]
}

// Apply takes one update of the watcher (live.Watcher.Run calls it) and
// wakes the subscribers.
func (f *LiveFeed) Apply(u live.Update) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq, f.at = u.Seq, u.Time
	if u.Err != "" {
		// Run retries with backoff: the views stay, the state says so.
		f.state, f.err, f.retryIn = LiveReconnecting, u.Err, u.RetryIn
	} else {
		f.state, f.err, f.retryIn = LiveConnected, "", 0
		for _, pv := range u.Partitions {
			lp := f.parts[pv.Partition]
			if lp == nil {
				lp = &LivePartition{feed: f, id: pv.Partition}
				f.parts[pv.Partition] = lp
			}
			// Each poll builds a new log; keep the old one when the
			// window holds the same batches at the same high watermark,
			// so that the browsers get a new generation only when
			// something changed.
			if o := lp.view; o.Log != nil && o.WindowStart == pv.WindowStart && o.WindowEnd == pv.WindowEnd && o.Batches == pv.Batches &&
				o.Dropped == pv.Dropped && o.HighWatermark == pv.HighWatermark && o.EngineLSO == pv.EngineLSO {
				pv.Log = o.Log
			}
			lp.view = pv
		}
	}
	f.notes = append(f.notes, u.Notes...)
	if n := len(f.notes); n > maxLiveNotes {
		f.notes = append([]string(nil), f.notes[n-maxLiveNotes:]...)
	}
	f.wake()
}

// Fail records the error that stopped the watcher.
func (f *LiveFeed) Fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state, f.err, f.retryIn = LiveError, err.Error(), 0
	f.wake()
}

// wake tells every subscriber, never blocking (f.mu held).
func (f *LiveFeed) wake() {
	for s := range f.subs {
		select {
		case s.ch <- struct{}{}:
		default: // a wake-up is pending: the writer will read the latest state
		}
	}
}

// Subscribe returns a channel that receives a value after each update, and
// the function that ends the subscription (Feed.Subscribe).
func (lp *LivePartition) Subscribe() (<-chan struct{}, func()) {
	f := lp.feed
	s := &liveSub{part: lp, ch: make(chan struct{}, 1)}
	f.mu.Lock()
	f.subs[s] = true
	f.mu.Unlock()
	return s.ch, func() {
		f.mu.Lock()
		delete(f.subs, s)
		f.mu.Unlock()
	}
}

// Log is the engine's view of the partition at its last poll.
func (lp *LivePartition) Log() *txnindex.Log {
	lp.feed.mu.Lock()
	defer lp.feed.mu.Unlock()
	return lp.view.Log
}

// Status is the partition's "live" message (Feed.Live).
func (lp *LivePartition) Status() LiveStatus {
	f := lp.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	v := &lp.view
	st := LiveStatus{Seq: f.seq, Time: f.at, State: f.state, Error: f.err, RetryInMs: f.retryIn.Milliseconds(),
		Bootstrap: f.bootstrap, Topic: f.topic, Partition: lp.id, Leader: v.Leader,
		HighWatermark: v.HighWatermark, ListedHWM: v.ListedHWM, ListedLSO: v.ListedLSO, FetchLSO: v.BrokerLSO, EngineLSO: v.EngineLSO,
		WindowStart: v.WindowStart, WindowEnd: v.WindowEnd, Batches: v.Batches, NewBatches: v.NewBatches, Dropped: v.Dropped,
		CommittedPosition: v.CommittedPosition, Delivered: v.Delivered,
		Mismatches: append([]string{}, v.Mismatches...), Unsettled: v.Unsettled, Notes: append([]string(nil), f.notes...),
		Diagnosis: v.Diagnosis, Open: []LiveTxn{}}
	for _, o := range v.Open {
		st.Open = append(st.Open, LiveTxn{ProducerID: o.ProducerID, ProducerEpoch: o.ProducerEpoch, FirstOffset: o.FirstOffset,
			LastOffset: o.LastOffset, TransactionalID: o.TransactionalID, CoordinatorState: o.CoordinatorState,
			CoordinatorParts: o.CoordinatorTopic, AgeMs: o.AgeMs, EngineState: o.EngineState, Hanging: o.Hanging,
			PinsLSO: o.PinsLSO, Reason: o.Reason, AbortCommand: o.AbortCommand})
	}
	return st
}
