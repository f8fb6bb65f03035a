package api

import (
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// Feed is implemented by a Catalog some of whose partitions change while
// they are served: the partitions of a live cluster (LiveFeed).
// The websocket of such a partition follows it: each change starts a new
// generation on every open stream, and a "live" message carries the
// watcher's state (docs/protocol.md, "Live sources").
type Feed interface {
	// Subscribe returns a channel that receives a value whenever the
	// partition changes, and the function that ends the subscription.
	// The channel must have capacity 1 and be sent to without blocking,
	// so that changes coalesce and a slow connection never holds up the
	// watcher. ok is false for a partition that never changes.
	Subscribe(id, topic string, partition int32) (changed <-chan struct{}, cancel func(), ok bool)
	// Live returns the watcher's current state of the partition.
	Live(id, topic string, partition int32) (LiveStatus, bool)
}

// Live states of LiveStatus.State.
const (
	LiveConnected    = "connected"
	LiveReconnecting = "reconnecting"
	LiveError        = "error"
)

// LiveStatus is the "live" message: what the watcher last saw of a live
// partition, next to the engine's answer. The broker's numbers come from
// its own responses: ListOffsets (both isolation levels) and the latest
// read_committed Fetch.
type LiveStatus struct {
	Type       string    `json:"type"`
	Version    int       `json:"version"`
	Generation uint32    `json:"generation"`
	Seq        int       `json:"seq"` // the watcher's poll number
	Time       time.Time `json:"time"`
	State      string    `json:"state"` // connected, reconnecting, error
	Error      string    `json:"error,omitempty"`
	RetryInMs  int64     `json:"retry_in_ms,omitempty"`
	Bootstrap  string    `json:"bootstrap"`
	Topic      string    `json:"topic"`
	Partition  int32     `json:"partition"`
	Leader     int32     `json:"leader"`

	HighWatermark int64 `json:"high_watermark"` // the HWM the engine's view is built at
	ListedHWM     int64 `json:"listed_hwm"`     // ListOffsets(read_uncommitted, latest)
	ListedLSO     int64 `json:"listed_lso"`     // ListOffsets(read_committed, latest)
	FetchLSO      int64 `json:"fetch_lso"`      // LastStableOffset of the latest read_committed Fetch
	EngineLSO     int64 `json:"engine_lso"`     // what txnindex computes from the batches

	WindowStart int64 `json:"window_start"`
	WindowEnd   int64 `json:"window_end"`
	Batches     int   `json:"batches"`
	NewBatches  int   `json:"new_batches"`
	Dropped     int64 `json:"dropped_batches"`

	CommittedPosition int64 `json:"committed_position"`
	Delivered         int64 `json:"delivered"`

	// Mismatches are the engine-versus-broker differences, each a
	// sentence; empty when they agree. Any entry means a broker or
	// client bug, or one in txnscope.
	Mismatches []string  `json:"mismatches"`
	Unsettled  bool      `json:"unsettled,omitempty"`
	Notes      []string  `json:"notes,omitempty"`
	Open       []LiveTxn `json:"open_transactions"`
	// Diagnosis is the engine's stuck-LSO diagnosis of the window.
	Diagnosis *diagnosis.Diagnosis `json:"diagnosis,omitempty"`
}

// LiveTxn is an open transaction joined with the coordinator's state
// (DescribeProducers, ListTransactions, DescribeTransactions).
type LiveTxn struct {
	// ProducerID is a number with a string twin past 2^53 (jsonid).
	ProducerID       int64    `json:"producer_id"`
	ProducerEpoch    int16    `json:"producer_epoch"`
	FirstOffset      int64    `json:"first_offset"`
	LastOffset       int64    `json:"last_offset"`
	TransactionalID  string   `json:"transactional_id,omitempty"`
	CoordinatorState string   `json:"coordinator_state,omitempty"`
	CoordinatorParts []string `json:"coordinator_partitions,omitempty"`
	AgeMs            int64    `json:"age_ms"`
	EngineState      string   `json:"engine_state"`
	Hanging          bool     `json:"hanging"` // KIP-664's find-hanging verdict
	PinsLSO          bool     `json:"pins_lso"`
	Reason           string   `json:"reason"`
	AbortCommand     string   `json:"abort_command"`
}

// subscribe follows l's partition when the catalog is a Feed; the channel
// is nil (never ready) otherwise.
func (a *API) subscribe(id string, l *txnindex.Log) (<-chan struct{}, func()) {
	f, ok := a.cat.(Feed)
	if !ok {
		return nil, func() {}
	}
	ch, cancel, ok := f.Subscribe(id, l.Topic, l.Partition)
	if !ok {
		return nil, func() {}
	}
	return ch, cancel
}

// liveChanged runs on the writer when a live partition changed: a new log
// starts a new generation (its meta, transactions and decisions replace
// what the client holds, so that batches whose transaction has just ended
// change decision, pending to delivered or aborted), then the live state
// follows. Only the writer goroutine touches c.l.
//
// A partition that is not live changes once: a lazily loaded partition
// whose whole log replaces the tail the stream began with. After its new
// generation's meta a "loaded" message tells the page that what it drew on
// the server (the diagnosis panel) is of the tail, so that it fetches it
// again.
func (c *wsConn) liveChanged(s **stream, start func() error) error {
	if l, ok := c.a.cat.Log(c.id, c.l.Topic, c.l.Partition); ok && l != c.l {
		c.l = l
		if err := start(); err != nil {
			return err
		}
		if f, ok := c.a.cat.(Feed); ok {
			if _, live := f.Live(c.id, c.l.Topic, c.l.Partition); !live {
				if err := c.writeJSON(loadedMsg((*s).gen)); err != nil {
					return err
				}
			}
		}
	}
	return c.sendLive(*s)
}

// sendLive writes the "live" message of the connection's partition, if
// it is live, for the generation of s.
func (c *wsConn) sendLive(s *stream) error {
	f, ok := c.a.cat.(Feed)
	if !ok {
		return nil
	}
	st, ok := f.Live(c.id, c.l.Topic, c.l.Partition)
	if !ok {
		return nil
	}
	st.Type, st.Version = "live", Version
	if s != nil {
		st.Generation = s.gen
	}
	if st.Mismatches == nil {
		st.Mismatches = []string{}
	}
	if st.Open == nil {
		st.Open = []LiveTxn{}
	}
	return c.writeJSON(st)
}
