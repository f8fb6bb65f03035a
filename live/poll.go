package live

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// defaultPartitionMaxBytes is the Java consumer's max.partition.fetch.bytes
// default, sent as PartitionMaxBytes and given to the engine's emulation.
const defaultPartitionMaxBytes = txnindex.DefaultMaxBytes

// defaultFetchesPerPoll bounds the catch-up work of one poll, so that a
// large backlog still yields updates instead of one long silence.
const defaultFetchesPerPoll = 64

// Update is what one poll saw.
type Update struct {
	Seq        int             `json:"seq"`
	Time       time.Time       `json:"time"`
	Topic      string          `json:"topic"`
	Partitions []PartitionView `json:"partitions"`
	// Mismatches are the differences between the engine and the broker,
	// each a sentence naming the partition. Empty when they agree.
	Mismatches []string `json:"mismatches"`
	Notes      []string `json:"notes,omitempty"`
	// Err is set on an update that reports a transient failure; Run
	// retries after RetryIn.
	Err     string        `json:"error,omitempty"`
	RetryIn time.Duration `json:"retry_in_ns,omitempty"`
}

// PartitionView is one partition in an update.
type PartitionView struct {
	Partition   int32 `json:"partition"`
	Leader      int32 `json:"leader"`
	WindowStart int64 `json:"window_start"` // first offset the engine holds
	WindowEnd   int64 `json:"window_end"`   // offset after the last batch held
	Batches     int   `json:"batches"`
	NewBatches  int   `json:"new_batches"`     // since the previous update
	Dropped     int64 `json:"dropped_batches"` // dropped from the window so far (MaxBatches)

	HighWatermark  int64 `json:"high_watermark"`  // the HWM the engine's view is built at
	BrokerLSO      int64 `json:"broker_lso"`      // from the latest read_committed Fetch
	ListedLSO      int64 `json:"listed_lso"`      // ListOffsets(read_committed, latest)
	ListedHWM      int64 `json:"listed_hwm"`      // ListOffsets(read_uncommitted, latest)
	EngineLSO      int64 `json:"engine_lso"`      // what txnindex computes
	PrevEngineLSO  int64 `json:"prev_engine_lso"` // in the previous update; -1 for the first
	LogStartOffset int64 `json:"log_start_offset"`

	// Delivered counts offsets kgo's read_committed filter returned from
	// the window start to CommittedPosition.
	CommittedPosition int64 `json:"committed_position"`
	Delivered         int64 `json:"delivered"`

	Open      []OpenTxn            `json:"open_transactions"`
	Diagnosis *diagnosis.Diagnosis `json:"diagnosis"`
	// Groups are the consumer groups whose committed offset is at or
	// below the LSO while it lags (ListGroups, OffsetFetch: groups.go),
	// as a cluster scan lists them, the first txnindex.ListCap of
	// GroupsTotal; the diagnosis places them too.
	Groups      []GroupBehind `json:"groups_behind"`
	GroupsTotal int           `json:"groups_behind_total"`
	Mismatches  []string      `json:"mismatches"`
	Unsettled   bool          `json:"unsettled,omitempty"` // the log moved during the poll; some checks waited for the next one

	// Log is the engine's view; not serialised.
	Log *txnindex.Log `json:"-"`
}

// OpenTxn is an undecided transaction on a partition, joined with what the
// transaction coordinator says about its producer.
type OpenTxn struct {
	ProducerID      int64  `json:"producer_id"`
	ProducerEpoch   int16  `json:"producer_epoch"`
	FirstOffset     int64  `json:"first_offset"`
	LastOffset      int64  `json:"last_offset"`
	TransactionalID string `json:"transactional_id,omitempty"` // "" when ListTransactions does not know the producer
	// CoordinatorState is the DescribeTransactions state (Ongoing,
	// PrepareAbort, ...), "" when unknown.
	CoordinatorState string   `json:"coordinator_state,omitempty"`
	CoordinatorTopic []string `json:"coordinator_partitions,omitempty"`
	LastTimestamp    int64    `json:"last_timestamp"` // DescribeProducers' LastTimestamp, or the log's
	AgeMs            int64    `json:"age_ms"`
	EngineState      string   `json:"engine_state"` // txnindex's open / expired / late / hanging from the log
	// Hanging is the KIP-664 verdict (find-hanging): open on the
	// partition for longer than transaction.max.timeout.ms and unknown
	// to the coordinator, or known without this partition.
	Hanging bool `json:"hanging"`
	// Late: DescribeProducers did not answer, and the log alone says the
	// transaction is late (diagnosis.StateLate): hanging is not confirmed,
	// but an operator must look (watch --once exits 3).
	Late         bool   `json:"late,omitempty"`
	Reason       string `json:"reason"`
	AbortCommand string `json:"abort_command"`
	PinsLSO      bool   `json:"pins_lso"`
}

// partState is the window of one partition between polls.
type partState struct {
	id      int32
	leader  int32
	batches []txnindex.Batch
	seeds   []txnindex.OngoingTxn // transactions open at the window start
	// atLogStart: the window starts at the log start (ListOffsets
	// earliest), so a transaction seeded from before it began in a
	// segment retention deleted, not merely one not read.
	atLogStart bool
	start      int64 // window start
	next       int64 // next read_uncommitted fetch offset
	pos        int64 // byte position after the last batch
	dropped    int64 // batches dropped so far
	prevN      int   // batches at the previous update
	prevLSO    int64 // engine LSO at the previous update

	rcPos     int64      // next read_committed fetch offset
	delivered [][2]int64 // offset ranges kgo's filter returned, merged
}

func sortParts(ps []*partState) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].id < ps[j].id })
}

// nextBackoff is the wait after a failed poll or scan, given the previous
// one (0 after a success): 200 ms, doubling up to 5 s.
func nextBackoff(prev time.Duration) time.Duration {
	return min(max(2*prev, 200*time.Millisecond), 5*time.Second)
}

// sleep waits d, or until ctx ends and then returns ctx.Err().
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Run polls until ctx ends or a fatal error (authentication, ACL, missing
// topic). A transient failure (connection lost, leader moved) is reported
// as an Update with Err, then retried with exponential backoff from 200 ms
// to 5 s, reloading metadata first.
func (w *Watcher) Run(ctx context.Context, fn func(Update)) error {
	backoff := time.Duration(0)
	for {
		u, err := w.Poll(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := w.cfg.Poll
		if err != nil {
			if fatal(err) {
				return err
			}
			backoff = nextBackoff(backoff)
			wait = backoff
			fn(Update{Seq: w.seq, Time: time.Now(), Topic: w.cfg.Topic, Err: err.Error(), RetryIn: backoff, Mismatches: []string{}})
		} else {
			backoff = 0
			fn(u)
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		if err != nil {
			mctx, cancel := context.WithTimeout(ctx, w.cfg.DialTimeout)
			if merr := w.metadata(mctx); merr != nil && fatal(merr) {
				cancel()
				return merr
			}
			cancel()
		}
	}
}

// Poll runs one round over every partition and returns its update.
func (w *Watcher) Poll(ctx context.Context) (Update, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*w.cfg.DialTimeout)
	defer cancel()
	w.seq++
	u := Update{Seq: w.seq, Time: time.Now(), Topic: w.cfg.Topic, Mismatches: []string{}, Notes: w.notes}
	w.notes = nil
	for _, p := range w.parts {
		v, err := w.poll(ctx, p, &u)
		if err != nil {
			return u, err
		}
		u.Partitions = append(u.Partitions, v)
		for _, m := range v.Mismatches {
			u.Mismatches = append(u.Mismatches, fmt.Sprintf("%s-%d: %s", w.cfg.Topic, p.id, m))
		}
	}
	w.groups(ctx, &u)
	if w.rec != nil {
		if err := w.rec.Flush(); err != nil {
			u.Notes = append(u.Notes, "recording: "+err.Error())
		}
	}
	return u, nil
}

// position sets the window start of a partition and seeds the transactions
// already open there from DescribeProducers, as Kafka's producer-state
// snapshot would: without them a transaction that began before the window
// would look like it began at its first batch inside it.
func (w *Watcher) position(ctx context.Context, p *partState) error {
	ls, _, err := w.listOffset(ctx, p, 0, -2)
	if err != nil {
		return err
	}
	hwm, _, err := w.listOffset(ctx, p, 0, -1)
	if err != nil {
		return err
	}
	start := ls
	switch {
	case w.cfg.From >= 0:
		start = min(max(w.cfg.From, ls), hwm)
	case w.cfg.Last > 0:
		start = max(hwm-w.cfg.Last, ls)
	}
	p.start, p.next, p.rcPos, p.prevLSO, p.atLogStart = start, start, start, -1, start == ls
	// Even a window at the log start needs them: a transaction whose
	// first offset retention deleted is open from before it, and only
	// the producer state remembers where it began.
	prods, err := w.describeProducers(ctx, p)
	if errors.Is(err, ErrDenied) {
		w.notes = append(w.notes, err.Error()+": transactions open before the window are not seeded")
		return nil
	}
	if err != nil {
		return err
	}
	p.seeds = seedsFrom(prods, start)
	return nil
}

// listOffset asks the leader for one offset: timestamp -1 is the latest
// (the HWM read_uncommitted, the LSO read_committed: Kafka's
// fetchOffsetByTimestamp answers LATEST_TIMESTAMP with the isolation's
// upper bound), -2 the log start.
func (w *Watcher) listOffset(ctx context.Context, p *partState, iso int8, ts int64) (int64, int32, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, iso
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = w.cfg.Topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p.id, ts, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := w.cl.Broker(int(p.leader)).Request(ctx, req)
	if err != nil {
		return 0, 0, w.classify(err, "ListOffsets")
	}
	resp := kresp.(*kmsg.ListOffsetsResponse)
	for _, t := range resp.Topics {
		for _, rp := range t.Partitions {
			if rp.Partition != p.id {
				continue
			}
			if err := w.partErr(rp.ErrorCode, "ListOffsets", p.id); err != nil {
				return 0, 0, err
			}
			return rp.Offset, rp.LeaderEpoch, nil
		}
	}
	return 0, 0, fmt.Errorf("live: ListOffsets response lacks partition %d", p.id)
}

// partErr maps a partition error code: ACL and missing-topic errors are
// fatal, leadership changes transient.
func (w *Watcher) partErr(code int16, api string, part int32) error {
	err := kerr.ErrorForCode(code)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return fmt.Errorf("live: %s on %s-%d: %w: the ACLs deny it (%v)", api, w.cfg.Topic, part, ErrDenied, err)
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return fmt.Errorf("live: %s on %s-%d: %w (%v)", api, w.cfg.Topic, part, ErrTopicMissing, err)
	}
	return fmt.Errorf("live: %s on %s-%d: %w", api, w.cfg.Topic, part, err)
}

// fetch sends one raw Fetch for one partition. SessionEpoch -1 asks for no
// fetch session (KIP-227), so every response is full and stands alone in a
// recording; MaxWaitMillis 0 makes the broker answer at once, the poll
// interval being the wait.
func (w *Watcher) fetch(ctx context.Context, p *partState, offset int64, iso int8) (*kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 1, 64<<20
	req.IsolationLevel, req.SessionID, req.SessionEpoch = iso, 0, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = w.cfg.Topic, w.topicID // v13+ names topics by id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = p.id, offset, w.maxBytes, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := w.cl.Broker(int(p.leader)).Request(ctx, req)
	if err != nil {
		return nil, w.classify(err, "Fetch")
	}
	resp := kresp.(*kmsg.FetchResponse)
	conn := "read_uncommitted"
	if iso == 1 {
		conn = "read_committed"
	}
	w.record(req, resp, conn)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, w.classify(err, "Fetch")
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if rp := &resp.Topics[i].Partitions[j]; rp.Partition == p.id {
				return rp, nil
			}
		}
	}
	return nil, fmt.Errorf("live: Fetch response lacks %s-%d", w.cfg.Topic, p.id)
}

// errOutOfRange is how pollOnce reports a window the broker no longer
// holds; poll restarts the window once and retries.
var errOutOfRange = errors.New("offset out of range")

func (w *Watcher) poll(ctx context.Context, p *partState, u *Update) (PartitionView, error) {
	v, err := w.pollOnce(ctx, p, u)
	if errors.Is(err, errOutOfRange) {
		v, err = w.pollOnce(ctx, p, u)
		if errors.Is(err, errOutOfRange) {
			err = fmt.Errorf("live: %s-%d: the broker keeps answering OFFSET_OUT_OF_RANGE at %d", w.cfg.Topic, p.id, p.start)
		}
	}
	return v, err
}

func (w *Watcher) pollOnce(ctx context.Context, p *partState, u *Update) (PartitionView, error) {
	v := PartitionView{Partition: p.id, Leader: p.leader, Mismatches: []string{}, Open: []OpenTxn{}, Groups: []GroupBehind{}, PrevEngineLSO: p.prevLSO}

	// ListOffsets brackets: the HWM, the LSO, the HWM again. If both HWMs
	// agree the LSO belongs to that HWM and can be checked against the
	// engine's log cut there.
	h1, _, err := w.listOffset(ctx, p, 0, -1)
	if err != nil {
		return v, err
	}
	lso, _, err := w.listOffset(ctx, p, 1, -1)
	if err != nil {
		return v, err
	}
	h2, _, err := w.listOffset(ctx, p, 0, -1)
	if err != nil {
		return v, err
	}
	v.ListedHWM, v.ListedLSO = h2, lso
	hwm := h2

	// The read_committed consumer, tailing from the window start. At
	// least one fetch per poll, for the broker's current LSO.
	var rcs []committedFetch
	for i := 0; i < w.fetchesPerPoll; i++ {
		r, err := w.fetch(ctx, p, p.rcPos, 1)
		if err != nil {
			return v, err
		}
		if r.ErrorCode == kerr.OffsetOutOfRange.Code {
			w.reset(p, r.LogStartOffset, u)
			return v, errOutOfRange
		}
		if err := w.partErr(r.ErrorCode, "Fetch", p.id); err != nil {
			return v, err
		}
		rcs = append(rcs, committedFetch{p.rcPos, r})
		hwm = max(hwm, r.HighWatermark)
		v.BrokerLSO, v.LogStartOffset = r.LastStableOffset, r.LogStartOffset
		fp, next, err := w.committedFilter(p, r)
		if err != nil {
			return v, err
		}
		for _, rec := range fp.Records {
			p.delivered = addOffset(p.delivered, rec.Offset)
		}
		if next <= p.rcPos || next >= r.LastStableOffset {
			p.rcPos = max(p.rcPos, next)
			break
		}
		p.rcPos = next
	}

	// Every batch, read_uncommitted, up to the highest HWM seen.
	for i := 0; i < w.fetchesPerPoll && p.next < hwm; i++ {
		r, err := w.fetch(ctx, p, p.next, 0)
		if err != nil {
			return v, err
		}
		if r.ErrorCode == kerr.OffsetOutOfRange.Code {
			w.reset(p, r.LogStartOffset, u)
			return v, errOutOfRange
		}
		if err := w.partErr(r.ErrorCode, "Fetch", p.id); err != nil {
			return v, err
		}
		hwm = max(hwm, r.HighWatermark)
		bs, damage := loader.ParseRecordSet(r.RecordBatches, fmt.Sprintf("%s-%d@%d", w.cfg.Topic, p.id, p.next))
		for _, d := range damage {
			// The broker cuts the record set at the byte limit, often
			// inside a batch (Kafka returns a slice of the segment);
			// clients drop that tail, and so does the next fetch.
			if !strings.HasPrefix(d.Msg, "truncated") {
				u.Notes = append(u.Notes, d.Error())
			}
		}
		added := false
		for _, b := range bs {
			if b.LastOffset() < p.next || b.BaseOffset >= r.HighWatermark {
				continue
			}
			// One pseudo-segment with positions laid end to end,
			// as the broker's byte limits see the log.
			b.Segment = 0
			b.SetPosition(p.pos)
			p.pos += int64(b.Size)
			p.batches = append(p.batches, b)
			p.next = b.NextOffset()
			added = true
		}
		if !added {
			break
		}
	}
	w.trim(p)

	// The leader's producer state, now: the evidence a broker's .snapshot
	// gives a log dir (last write times, coordinator epochs, where open
	// transactions began), and the producers the coordinators are asked
	// about.
	prods, perr := w.describeProducers(ctx, p)
	if perr != nil && !errors.Is(perr, ErrDenied) {
		return v, perr
	}
	snap := producerState(p, prods, perr)

	// The engine's view at the highest HWM the window covers. HWMs move
	// in whole batches, so a log cut at an older HWM is exactly what the
	// broker held when it reported that HWM.
	cache := map[int64]*txnindex.Log{}
	logAt := func(h int64) *txnindex.Log {
		if l, ok := cache[h]; ok {
			return l
		}
		k := sort.Search(len(p.batches), func(i int) bool { return p.batches[i].BaseOffset >= h })
		l := txnindex.Build(&txnindex.Partition{Topic: w.cfg.Topic, Partition: p.id, Batches: p.batches[:k:k],
			LogStartOffset: p.start, HighWatermark: h, HighWatermarkSource: "broker", Ongoing: p.seeds, Snapshot: snap,
			Segments: []txnindex.Segment{{Name: "live window", BaseOffset: p.start}}})
		cache[h] = l
		return l
	}
	clamped := hwm > p.next // still catching up: the window ends below the HWM
	if clamped {
		v.Unsettled = true
		hwm = p.next
	}
	l := logAt(hwm)
	v.Log, v.HighWatermark, v.EngineLSO = l, hwm, w.effectiveLSO(l)
	v.WindowStart, v.WindowEnd, v.Batches, v.Dropped = p.start, p.next, len(p.batches), p.dropped
	v.NewBatches = max(len(p.batches)-p.prevN, 0)
	p.prevN, p.prevLSO = len(p.batches), v.EngineLSO

	w.compare(p, &v, logAt, brokerSaw{h1: h1, h2: h2, lso: lso, rcs: rcs, clamped: clamped})

	// Coordinator state and the diagnosis.
	v.Diagnosis = present.Diagnose(l, diagnosis.Options{Now: w.cfg.Now(), MaxTxnTimeout: w.maxTxn, Bootstrap: w.Bootstrap(), Position: -1})
	if err := w.coordinator(ctx, p, &v, u, prods, perr); err != nil {
		return v, err
	}
	return v, nil
}

// reset restarts a window the broker no longer holds (OFFSET_OUT_OF_RANGE:
// retention or DeleteRecords moved the log start past it, or the log was
// truncated), as a consumer with auto.offset.reset=earliest would.
func (w *Watcher) reset(p *partState, logStart int64, u *Update) {
	u.Notes = append(u.Notes, fmt.Sprintf("%s-%d: offset %d is out of range; restarting the window at the log start %d", w.cfg.Topic, p.id, p.start, logStart))
	p.dropped += int64(len(p.batches))
	p.batches, p.seeds, p.delivered, p.pos = nil, nil, nil, 0
	p.start, p.next, p.rcPos, p.prevN, p.atLogStart = logStart, logStart, logStart, 0, true
}

// trim drops the oldest batches beyond MaxBatches. The transactions open
// across the new window start become seeds, the way a producer-state
// snapshot carries them over a deleted segment, so the engine keeps their
// true first offsets.
func (w *Watcher) trim(p *partState) {
	k := len(p.batches) - w.cfg.MaxBatches
	if k <= 0 {
		return
	}
	full := txnindex.Build(&txnindex.Partition{Topic: w.cfg.Topic, Partition: p.id, Batches: p.batches,
		LogStartOffset: p.start, HighWatermark: p.next, Ongoing: p.seeds,
		Segments: []txnindex.Segment{{Name: "live window", BaseOffset: p.start}}})
	newStart := p.batches[k].BaseOffset
	var seeds []txnindex.OngoingTxn
	for _, t := range full.Txns {
		if t.FirstOffset < newStart && (t.State == txnindex.TxnOpen || t.MarkerOffset >= newStart) {
			// The last write time goes with it, as a snapshot's
			// Timestamp does: the batches that carried it are dropped.
			seeds = append(seeds, txnindex.OngoingTxn{ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, FirstOffset: t.FirstOffset,
				LastTimestamp: t.LastTimestamp, CoordinatorEpoch: -1})
		}
	}
	p.batches = append([]txnindex.Batch(nil), p.batches[k:]...)
	p.seeds, p.start, p.dropped, p.atLogStart = seeds, newStart, p.dropped+int64(k), false
	p.prevN = max(p.prevN-k, 0)
	pos := int64(0)
	for i := range p.batches {
		p.batches[i].SetPosition(pos)
		pos += int64(p.batches[i].Size)
	}
	p.pos = pos
	for len(p.delivered) > 0 && p.delivered[0][1] < newStart {
		p.delivered = p.delivered[1:]
	}
	if len(p.delivered) > 0 && p.delivered[0][0] < newStart {
		p.delivered[0][0] = newStart
	}
	p.rcPos = max(p.rcPos, newStart)
}
