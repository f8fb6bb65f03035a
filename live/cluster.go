package live

// Cluster mode (issue 20): one scan ranks every partition of a cluster by
// how far its last stable offset lags the high watermark, names the
// transactions that hold the stuck ones and the consumer groups waiting
// behind them, with a number of requests that does not grow with the
// partition count.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// DefaultPerBroker is the number of scan requests in flight to one broker
// at a time. Two lets a broker answer DescribeProducers while it lists its
// groups, and keeps a scan from queueing more than that behind a client's
// own requests on a busy broker.
const DefaultPerBroker = 2

// ScanOptions tune ScanCluster.
type ScanOptions struct {
	// Topics, when set, keeps only the topics whose name it matches
	// (--topics REGEX).
	Topics *regexp.Regexp
	// Internal includes Kafka's internal topics (__consumer_offsets,
	// __transaction_state), which Metadata flags IsInternal.
	Internal bool
	// MaxTxnTimeout is transaction.max.timeout.ms for KIP-664's rule; 0
	// asks a broker with DescribeConfigs when there is an open
	// transaction to judge, and falls back to Kafka's default of 15 min.
	MaxTxnTimeout time.Duration
	// RequestTimeout bounds each request; 0 means DefaultDialTimeout.
	RequestTimeout time.Duration
	// PerBroker bounds the requests in flight to one broker; 0 means
	// DefaultPerBroker.
	PerBroker int
	// Now is the clock transaction ages are measured against; nil is
	// time.Now.
	Now func() time.Time
	// Bootstrap goes into the printed abort commands; "" prints
	// <bootstrap>.
	Bootstrap string
}

// ClusterScan is what one scan of a cluster found.
//
// Partitions holds one entry per partition scanned, ranked: stuck ones
// (LSO below the high watermark) first, hanging before open, then by lag
// seconds and lag offsets; then those whose offsets could not be read;
// then the clear ones (lag 0) by topic and partition.
type ClusterScan struct {
	Time      time.Time      `json:"time"`
	Duration  time.Duration  `json:"duration_ns"`
	Bootstrap string         `json:"bootstrap"`
	Brokers   []BrokerStatus `json:"brokers"`
	Topics    int            `json:"topics"`

	MaxTxnTimeoutMs     int64  `json:"max_transaction_timeout_ms"`
	MaxTxnTimeoutSource string `json:"max_transaction_timeout_source"` // configured, broker N, default, or "" when no transaction needed it

	// Requests counts the requests the scan sent, by API name;
	// RequestCount is their sum (see ScanCluster for the formula).
	Requests     map[string]int `json:"requests"`
	RequestCount int            `json:"request_count"`

	Stuck   int `json:"stuck"`   // partitions whose LSO lags the high watermark
	Hanging int `json:"hanging"` // of those, pinned by a KIP-664 hanging transaction
	Unknown int `json:"unknown"` // partitions whose offsets could not be read
	Clear   int `json:"clear"`

	Partitions []PartitionLag `json:"partitions"`
	Notes      []string       `json:"notes,omitempty"`
}

// BrokerStatus is one broker of the Metadata answer.
type BrokerStatus struct {
	ID    int32  `json:"id"`
	Host  string `json:"host"`
	Port  int32  `json:"port"`
	Rack  string `json:"rack,omitempty"`
	Leads int    `json:"partitions_led"` // scanned partitions it leads
	// Err is the first failure to reach it; the scan sent it nothing
	// more and reports its partitions as unknown.
	Err string `json:"error,omitempty"`
}

// PartitionLag is one partition of a cluster scan. Its JSON names follow
// diagnose's (txnindex.Diagnosis) where they mean the same.
type PartitionLag struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Leader    int32  `json:"leader"`
	// HighWatermark and LastStableOffset are ListOffsets' latest offset
	// read_uncommitted and read_committed; -1 when unknown (Err).
	HighWatermark    int64 `json:"high_watermark"`
	LastStableOffset int64 `json:"last_stable_offset"`
	LSOLagOffsets    int64 `json:"lso_lag_offsets"`
	// LSOLagMs is how long the LSO has been held: since the pinning
	// transaction started (DescribeTransactions' StartTimestamp), or, when
	// the coordinator did not describe it, since its last write
	// (DescribeProducers' LastTimestamp), a lower bound. LSOLagSource says
	// which.
	LSOLagMs     int64  `json:"lso_lag_ms"`
	LSOLagSource string `json:"lso_lag_source,omitempty"`
	// Hanging is set when an open transaction here is hanging by
	// KIP-664's rule (OpenTxn.Hanging's).
	Hanging  bool          `json:"hanging"`
	PinnedBy *ClusterTxn   `json:"pinned_by"`
	Open     []ClusterTxn  `json:"open_transactions"`
	Groups   []GroupBehind `json:"groups_behind"`
	// Err says why the offsets are unknown (no leader, leader down, a
	// partition error); Notes carry lesser failures (DescribeProducers,
	// the coordinators, the groups) that leave the offsets known.
	Err   string   `json:"error,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// LagSeconds is LSOLagMs in seconds.
func (p *PartitionLag) LagSeconds() float64 { return float64(p.LSOLagMs) / 1000 }

// ClusterTxn is an open transaction on a partition (DescribeProducers'
// producer with a current transaction), joined by producer id with what its
// coordinator says (ListTransactions, DescribeTransactions).
type ClusterTxn struct {
	ProducerID       int64 `json:"producer_id"`
	ProducerEpoch    int16 `json:"producer_epoch"`
	CoordinatorEpoch int32 `json:"coordinator_epoch"`
	// FirstOffset is DescribeProducers' currentTxnStartOffset: where
	// `kafka-transactions.sh abort --start-offset` wants it.
	FirstOffset   int64 `json:"first_offset"`
	LastTimestamp int64 `json:"last_timestamp"` // the producer's last write here
	AgeMs         int64 `json:"age_ms"`         // since LastTimestamp

	TransactionalID  string `json:"transactional_id,omitempty"`  // "" when no coordinator lists the producer
	CoordinatorState string `json:"coordinator_state,omitempty"` // Ongoing, PrepareCommit, ...; "" when unknown
	Coordinator      int32  `json:"coordinator"`                 // the broker that listed it; -1 when unknown
	StartTimestamp   int64  `json:"start_timestamp"`             // the coordinator's transaction start; -1 when unknown
	TimeoutMs        int32  `json:"transaction_timeout_ms"`      // its transaction.timeout.ms; 0 when unknown
	// CoordinatorPartitions are the partitions the coordinator's
	// transaction for the id includes, as topic-partition.
	CoordinatorPartitions []string `json:"coordinator_partitions,omitempty"`

	State        txnindex.OpenTxnState `json:"state"` // open, expired or hanging
	Hanging      bool                  `json:"hanging"`
	Reason       string                `json:"reason"`
	AbortCommand string                `json:"abort_command"`
	PinsLSO      bool                  `json:"pins_lso"`
}

// GroupBehind is a consumer group whose committed offset on a stuck
// partition is at or below its LSO: read_committed members cannot get past
// the LSO until the transaction ends. The names are txnindex.GroupPosition's
// (behind_lso: committed <= LSO; blocked: committed == LSO); a group past
// the LSO is a read_uncommitted consumer's and is not listed.
type GroupBehind struct {
	Group       string `json:"group"`
	State       string `json:"state,omitempty"` // ListGroups' GroupState (v4+)
	Coordinator int32  `json:"coordinator"`
	Committed   int64  `json:"committed_offset"`
	LagOffsets  int64  `json:"lag_offsets"` // high watermark - committed
	BehindLSO   bool   `json:"behind_lso"`  // committed <= LSO: always true here
	Blocked     bool   `json:"blocked"`     // committed == LSO: waiting on the transaction now
}

// AnyHanging reports whether a partition is held by a hanging transaction
// (diagnose's exit status 3).
func (s *ClusterScan) AnyHanging() bool { return s.Hanging > 0 }

// ScanCluster scans a cluster through cl, strictly read-only: every request
// is a Metadata, ListOffsets, DescribeProducers, ListTransactions,
// DescribeTransactions, DescribeConfigs, ListGroups or OffsetFetch, sent with
// cl.Broker(id).Request to the broker that must answer it, never joining a
// group. (kgo's sharded Request also splits a ListOffsets into one request
// per leader, measured on kfake, after a Metadata lookup of its own on a
// cold client; but it routes DescribeTransactions and OffsetFetch through
// FindCoordinator, which is not on the read-only list.)
//
// Requests per scan, with B brokers in the Metadata answer, all reachable:
//
//	R = 1 + 2·L + [S > 0]·(Ls + B + Ct + B + Gc + [T > 0 ∧ MaxTxnTimeout unset])
//
// where L ≤ B brokers lead a scanned partition (one ListOffsets each for the
// high watermark and for the LSO, however many partitions they lead), S
// partitions are stuck, Ls ≤ min(B, S) brokers lead one (one
// DescribeProducers each), every broker gets one ListTransactions and one
// ListGroups (each lists only what it coordinates), Ct ≤ min(B, T) of them
// coordinate one of the T open transactions (one DescribeTransactions each),
// Gc ≤ B coordinate a group (one OffsetFetch each for all their groups, v8+;
// a broker older than Kafka 3.0 gets one per group instead), and one
// DescribeConfigs reads transaction.max.timeout.ms. So R ≤ 2 + 7·B whatever
// the number of partitions. A new client also sends ApiVersions (and the
// SASL handshake) once per connection, at most B + 1.
//
// A broker that does not answer is reported in Brokers and its partitions
// as unknown; the rest is still scanned. The error is non-nil only when the
// Metadata request fails or ctx ends.
func ScanCluster(ctx context.Context, cl *kgo.Client, o ScanOptions) (*ClusterScan, error) {
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultDialTimeout
	}
	if o.PerBroker <= 0 {
		o.PerBroker = DefaultPerBroker
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Bootstrap == "" {
		o.Bootstrap = "<bootstrap>"
	}
	start := time.Now()
	s := &scanner{cl: cl, o: o, now: o.Now(), reqs: map[string]int{}, down: map[int32]error{}, sem: map[int32]chan struct{}{}}
	out := &ClusterScan{Time: s.now, Bootstrap: o.Bootstrap}
	parts, err := s.metadata(ctx, out)
	if err != nil {
		return nil, err
	}
	s.listOffsets(ctx, parts)
	var stuck []*PartitionLag
	for _, p := range parts {
		if p.Err == "" && p.LSOLagOffsets > 0 {
			stuck = append(stuck, p)
		}
	}
	if len(stuck) > 0 {
		s.explain(ctx, stuck, out)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range out.Brokers {
		b := &out.Brokers[i]
		if err := s.down[b.ID]; err != nil {
			b.Err = err.Error()
		}
	}
	out.Partitions = make([]PartitionLag, len(parts))
	for i, p := range parts {
		out.Partitions[i] = *p
	}
	rank(out.Partitions)
	for i := range out.Partitions {
		p := &out.Partitions[i]
		// PinnedBy pointed into the scanner's copy; point it into ours.
		p.PinnedBy = nil
		for j := range p.Open {
			if p.Open[j].PinsLSO {
				p.PinnedBy = &p.Open[j]
			}
		}
		switch {
		case p.Err != "":
			out.Unknown++
		case p.LSOLagOffsets > 0:
			out.Stuck++
			if p.Hanging {
				out.Hanging++
			}
		default:
			out.Clear++
		}
	}
	out.Requests = s.reqs
	for _, n := range s.reqs {
		out.RequestCount += n
	}
	out.Notes = append(out.Notes, s.notes...)
	out.Duration = time.Since(start)
	return out, nil
}

// rank orders partitions: stuck first, hanging before open, then by lag
// seconds and offsets; unknown ones next; clear ones last; ties by topic and
// partition.
func rank(ps []PartitionLag) {
	class := func(p *PartitionLag) int {
		switch {
		case p.Err != "":
			return 3
		case p.LSOLagOffsets > 0 && p.Hanging:
			return 0
		case p.LSOLagOffsets > 0:
			return 1
		}
		return 4
	}
	slices.SortStableFunc(ps, func(a, b PartitionLag) int {
		if c := class(&a) - class(&b); c != 0 {
			return c
		}
		if c := cmp.Compare(b.LSOLagMs, a.LSOLagMs); c != 0 {
			return c
		}
		if c := cmp.Compare(b.LSOLagOffsets, a.LSOLagOffsets); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
}

// scanner is the state of one scan.
type scanner struct {
	cl  *kgo.Client
	o   ScanOptions
	now time.Time

	sem map[int32]chan struct{} // per broker, filled by metadata before any concurrency

	mu    sync.Mutex
	reqs  map[string]int
	down  map[int32]error
	notes []string

	brokers  []int32             // every broker of the Metadata answer
	topicIDs map[string][16]byte // for OffsetFetch v10, which names topics by id
}

func (s *scanner) note(format string, args ...any) {
	s.mu.Lock()
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *scanner) downErr(b int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down[b]
}

// send issues one request to one broker: it waits for one of the broker's
// PerBroker slots, bounds the request by RequestTimeout, and marks the
// broker down on a transport failure, after which nothing more is sent to
// it in this scan (a dead broker costs one timeout, not one per phase).
// kgo's Broker.Request does not retry.
func (s *scanner) send(ctx context.Context, b int32, req kmsg.Request) (kmsg.Response, error) {
	release, err := s.acquire(ctx, b)
	if err != nil {
		return nil, err
	}
	defer release()
	rctx, cancel := context.WithTimeout(ctx, s.o.RequestTimeout)
	defer cancel()
	s.count(req.Key())
	resp, err := s.cl.Broker(int(b)).Request(rctx, req)
	if err != nil {
		return nil, s.markDown(ctx, b, err)
	}
	return resp, nil
}

func (s *scanner) acquire(ctx context.Context, b int32) (func(), error) {
	if err := s.downErr(b); err != nil {
		return nil, err
	}
	sem := s.sem[b]
	if sem == nil {
		return nil, fmt.Errorf("broker %d is not in the Metadata answer", b)
	}
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := s.downErr(b); err != nil { // it failed while we waited
		<-sem
		return nil, err
	}
	return func() { <-sem }, nil
}

func (s *scanner) count(key int16) {
	s.mu.Lock()
	s.reqs[kmsg.NameForKey(key)]++
	s.mu.Unlock()
}

// markDown records a broker's failure and returns the error that names it.
func (s *scanner) markDown(ctx context.Context, b int32, err error) error {
	if ctx.Err() != nil {
		return err // the scan was cancelled, the broker did nothing wrong
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down[b] == nil {
		s.down[b] = fmt.Errorf("broker %d unreachable: %w", b, err)
	}
	return s.down[b]
}

// metadata asks for every topic (never creating one) and returns the
// partitions to scan, unknown ones already marked.
func (s *scanner) metadata(ctx context.Context, out *ClusterScan) ([]*PartitionLag, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil // all topics
	req.AllowAutoTopicCreation = false
	// Through the client rather than one broker: kgo learns the brokers
	// from the answer, which Broker(id) needs, and retries on another
	// seed if the first is down.
	mctx, cancel := context.WithTimeout(ctx, 2*s.o.RequestTimeout)
	defer cancel()
	s.count(req.Key())
	kresp, err := s.cl.Request(mctx, req)
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.MetadataResponse)
	for _, b := range resp.Brokers {
		s.brokers = append(s.brokers, b.NodeID)
		s.sem[b.NodeID] = make(chan struct{}, s.o.PerBroker)
		bs := BrokerStatus{ID: b.NodeID, Host: b.Host, Port: b.Port}
		if b.Rack != nil {
			bs.Rack = *b.Rack
		}
		out.Brokers = append(out.Brokers, bs)
	}
	slices.Sort(s.brokers)
	slices.SortFunc(out.Brokers, func(a, b BrokerStatus) int { return cmp.Compare(a.ID, b.ID) })
	s.topicIDs = map[string][16]byte{}
	n := 0
	for _, t := range resp.Topics {
		n += len(t.Partitions)
	}
	// One allocation for all of them; parts points into it and never
	// outgrows it.
	all := make([]PartitionLag, 0, n)
	var parts []*PartitionLag
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		name := *t.Topic
		if (t.IsInternal && !s.o.Internal) || (s.o.Topics != nil && !s.o.Topics.MatchString(name)) {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			s.note("topic %q: Metadata answered %v; its partitions are not scanned", name, err)
			continue
		}
		out.Topics++
		s.topicIDs[name] = t.TopicID
		for _, mp := range t.Partitions {
			all = append(all, PartitionLag{Topic: name, Partition: mp.Partition, Leader: mp.Leader, HighWatermark: -1, LastStableOffset: -1,
				Open: []ClusterTxn{}, Groups: []GroupBehind{}})
			p := &all[len(all)-1]
			switch err := kerr.ErrorForCode(mp.ErrorCode); {
			case mp.Leader < 0:
				p.Err = "no leader"
				if err != nil {
					p.Err += " (" + err.Error() + ")"
				}
			case err != nil && !errors.Is(err, kerr.ReplicaNotAvailable):
				// REPLICA_NOT_AVAILABLE only says a follower is
				// missing; the leader still answers.
				p.Err = "Metadata: " + err.Error()
			case s.sem[mp.Leader] == nil:
				p.Err = fmt.Sprintf("leader %d is not among the brokers Metadata listed", mp.Leader)
			}
			parts = append(parts, p)
		}
	}
	for i := range out.Brokers {
		for _, p := range parts {
			if p.Err == "" && p.Leader == out.Brokers[i].ID {
				out.Brokers[i].Leads++
			}
		}
	}
	return parts, nil
}

// byLeader groups partitions by leader, in broker id order.
func byLeader(ps []*PartitionLag) ([]int32, map[int32][]*PartitionLag) {
	m := map[int32][]*PartitionLag{}
	for _, p := range ps {
		if p.Err == "" {
			m[p.Leader] = append(m[p.Leader], p)
		}
	}
	ids := make([]int32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, m
}

// eachBroker runs fn for each broker concurrently and waits.
func eachBroker(ids []int32, fn func(b int32)) {
	var wg sync.WaitGroup
	for _, b := range ids {
		wg.Go(func() { fn(b) })
	}
	wg.Wait()
}

// listOffsets reads, per leader, the high watermark and then the LSO of all
// its partitions: one ListOffsets each (timestamp -1 is the latest offset,
// which Kafka answers with the isolation's bound: the high watermark
// read_uncommitted, the LSO read_committed). The high watermark is read
// first so that the LSO, read later, cannot be found above an earlier high
// watermark by a transaction that began in between: what lag remains was
// there when the LSO was read.
func (s *scanner) listOffsets(ctx context.Context, parts []*PartitionLag) {
	ids, m := byLeader(parts)
	eachBroker(ids, func(b int32) {
		ps := m[b]
		hwm, err := s.listOffsetsOne(ctx, b, ps, 0)
		if err != nil {
			for _, p := range ps {
				p.Err = err.Error()
			}
			return
		}
		lso, err := s.listOffsetsOne(ctx, b, ps, 1)
		if err != nil {
			for _, p := range ps {
				p.Err = err.Error()
			}
			return
		}
		for i, p := range ps {
			switch {
			case hwm[i].err != "":
				p.Err = "ListOffsets(read_uncommitted): " + hwm[i].err
			case lso[i].err != "":
				p.Err = "ListOffsets(read_committed): " + lso[i].err
			default:
				p.HighWatermark, p.LastStableOffset = hwm[i].off, lso[i].off
				p.LSOLagOffsets = max(p.HighWatermark-p.LastStableOffset, 0)
			}
		}
	})
}

type offsetAnswer struct {
	off int64
	err string
}

func (s *scanner) listOffsetsOne(ctx context.Context, b int32, ps []*PartitionLag, iso int8) ([]offsetAnswer, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, iso
	ti := map[string]int{}
	for _, p := range ps {
		i, ok := ti[p.Topic]
		if !ok {
			i = len(req.Topics)
			ti[p.Topic] = i
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = p.Topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p.Partition, -1, -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	kresp, err := s.send(ctx, b, req)
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.ListOffsetsResponse)
	out := make([]offsetAnswer, len(ps))
	answer := func(rp *kmsg.ListOffsetsResponseTopicPartition) offsetAnswer {
		a := offsetAnswer{off: rp.Offset}
		if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
			a.err = err.Error()
		}
		return a
	}
	// Brokers answer in the order asked, partition for partition: match
	// by position, which at 3,000 partitions a broker saves a map of
	// them; fall back to a lookup for one that does not.
	if inOrder(ps, resp) {
		i := 0
		for t := range resp.Topics {
			for j := range resp.Topics[t].Partitions {
				out[i] = answer(&resp.Topics[t].Partitions[j])
				i++
			}
		}
		return out, nil
	}
	type tp struct {
		t string
		p int32
	}
	got := make(map[tp]offsetAnswer, len(ps))
	for t := range resp.Topics {
		for j := range resp.Topics[t].Partitions {
			rp := &resp.Topics[t].Partitions[j]
			got[tp{resp.Topics[t].Topic, rp.Partition}] = answer(rp)
		}
	}
	for i, p := range ps {
		a, ok := got[tp{p.Topic, p.Partition}]
		if !ok {
			a.err = fmt.Sprintf("broker %d's answer lacks the partition", b)
		}
		out[i] = a
	}
	return out, nil
}

// inOrder reports whether a ListOffsets answer lists exactly ps, in order.
func inOrder(ps []*PartitionLag, resp *kmsg.ListOffsetsResponse) bool {
	i := 0
	for t := range resp.Topics {
		for _, rp := range resp.Topics[t].Partitions {
			if i >= len(ps) || ps[i].Topic != resp.Topics[t].Topic || ps[i].Partition != rp.Partition {
				return false
			}
			i++
		}
	}
	return i == len(ps)
}

// explain names what holds each stuck partition: DescribeProducers on its
// leader, the coordinators of the open producers, and the groups behind.
func (s *scanner) explain(ctx context.Context, stuck []*PartitionLag, out *ClusterScan) {
	var (
		wg     sync.WaitGroup
		prods  map[*PartitionLag][]kmsg.DescribeProducersResponseTopicPartitionActiveProducer
		groups map[int32][]kmsg.ListGroupsResponseGroup
	)
	wg.Go(func() { prods = s.describeProducers(ctx, stuck) })
	wg.Go(func() { groups = s.listGroups(ctx) })
	wg.Wait()

	var pids []int64
	for _, aps := range prods {
		for _, ap := range aps {
			if !slices.Contains(pids, ap.ProducerID) {
				pids = append(pids, ap.ProducerID)
			}
		}
	}
	slices.Sort(pids)
	var (
		coord  *coordAnswers
		maxTxn time.Duration
		src    string
	)
	wg.Go(func() { s.offsetFetch(ctx, groups, stuck) })
	if len(pids) > 0 {
		wg.Go(func() { coord = s.transactions(ctx, pids) })
		wg.Go(func() { maxTxn, src = s.maxTxnTimeout(ctx) })
	}
	wg.Wait()
	if len(pids) > 0 {
		out.MaxTxnTimeoutMs, out.MaxTxnTimeoutSource = maxTxn.Milliseconds(), src
	}
	for _, p := range stuck {
		s.judge(p, prods[p], coord, maxTxn, src)
	}
}

// describeProducers asks each leader of stuck partitions for their producer
// state (KIP-664), one request per leader, and keeps the producers with a
// current transaction, by first offset.
func (s *scanner) describeProducers(ctx context.Context, stuck []*PartitionLag) map[*PartitionLag][]kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
	out := map[*PartitionLag][]kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}
	var mu sync.Mutex
	ids, m := byLeader(stuck)
	eachBroker(ids, func(b int32) {
		ps := m[b]
		req := kmsg.NewPtrDescribeProducersRequest()
		ti := map[string]int{}
		for _, p := range ps {
			i, ok := ti[p.Topic]
			if !ok {
				i = len(req.Topics)
				ti[p.Topic] = i
				rt := kmsg.NewDescribeProducersRequestTopic()
				rt.Topic = p.Topic
				req.Topics = append(req.Topics, rt)
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, p.Partition)
		}
		kresp, err := s.send(ctx, b, req)
		if err != nil {
			for _, p := range ps {
				p.Notes = append(p.Notes, "DescribeProducers: "+err.Error()+": the transactions holding it are unknown")
			}
			return
		}
		type tp struct {
			t string
			p int32
		}
		byTP := map[tp]*PartitionLag{}
		for _, p := range ps {
			byTP[tp{p.Topic, p.Partition}] = p
		}
		mu.Lock()
		defer mu.Unlock()
		for _, t := range kresp.(*kmsg.DescribeProducersResponse).Topics {
			for _, rp := range t.Partitions {
				p := byTP[tp{t.Topic, rp.Partition}]
				if p == nil {
					continue
				}
				delete(byTP, tp{t.Topic, rp.Partition})
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					p.Notes = append(p.Notes, fmt.Sprintf("DescribeProducers: %v: the transactions holding it are unknown", err))
					continue
				}
				var open []kmsg.DescribeProducersResponseTopicPartitionActiveProducer
				for _, ap := range rp.ActiveProducers {
					if ap.CurrentTxnStartOffset >= 0 {
						open = append(open, ap)
					}
				}
				slices.SortFunc(open, func(a, b kmsg.DescribeProducersResponseTopicPartitionActiveProducer) int {
					return cmp.Compare(a.CurrentTxnStartOffset, b.CurrentTxnStartOffset)
				})
				out[p] = open
			}
		}
		for _, p := range byTP {
			p.Notes = append(p.Notes, fmt.Sprintf("DescribeProducers: broker %d's answer lacks the partition", b))
		}
	})
	return out
}

// coordAnswers is what the coordinators said about the open producers.
type coordAnswers struct {
	info  map[int64]*txnInfo // by producer id, as coord.go's coordinators builds it
	coord map[int64]int32    // the broker that described (or, failing that, listed) the producer
	// missing names the brokers whose ListTransactions failed: a producer
	// no broker listed may be one of theirs, so it is not hanging for
	// want of a coordinator.
	missing []string
	// unanswered holds the producers no coordinator answered
	// DescribeTransactions for (transport failure, or NOT_COORDINATOR
	// from every broker that listed it, as while a coordinator moves):
	// no description is then no evidence.
	unanswered map[int64]error
}

// transactions maps the open producers to transactional ids, states and
// descriptions. ListTransactions goes to every broker, since in Kafka each
// lists only the transactions whose __transaction_state partition it leads
// (filtered by producer id, KIP-664); DescribeTransactions then goes to each
// broker that listed one, with the ids it listed, so no FindCoordinator is
// needed. A broker that listed an id it does not coordinate (kfake lists
// every transaction on every broker; Kafka may while a coordinator moves)
// answers NOT_COORDINATOR, and the coordinator's answer is kept.
func (s *scanner) transactions(ctx context.Context, pids []int64) *coordAnswers {
	ca := &coordAnswers{info: map[int64]*txnInfo{}, coord: map[int64]int32{}, unanswered: map[int64]error{}}
	type answer struct {
		b    int32
		ts   kmsg.ListTransactionsResponseTransactionState
		desc *kmsg.DescribeTransactionsResponseTransactionState
		err  error // the DescribeTransactions failure, request or entry
	}
	var (
		mu      sync.Mutex
		answers = map[int64][]*answer{}
	)
	eachBroker(s.brokers, func(b int32) {
		req := kmsg.NewPtrListTransactionsRequest()
		req.ProducerIDFilters = pids
		kresp, err := s.send(ctx, b, req)
		if err == nil {
			err = kerr.ErrorForCode(kresp.(*kmsg.ListTransactionsResponse).ErrorCode)
		}
		if err != nil {
			mu.Lock()
			ca.missing = append(ca.missing, fmt.Sprintf("broker %d (%v)", b, err))
			mu.Unlock()
			return
		}
		var (
			ids  []string
			mine = map[string][]*answer{}
		)
		for _, ts := range kresp.(*kmsg.ListTransactionsResponse).TransactionStates {
			if _, ok := slices.BinarySearch(pids, ts.ProducerID); !ok {
				continue // an old broker ignoring the filter
			}
			a := &answer{b: b, ts: ts}
			if len(mine[ts.TransactionalID]) == 0 {
				ids = append(ids, ts.TransactionalID)
			}
			mine[ts.TransactionalID] = append(mine[ts.TransactionalID], a)
		}
		if len(ids) > 0 {
			dreq := kmsg.NewPtrDescribeTransactionsRequest()
			dreq.TransactionalIDs = ids
			dk, err := s.send(ctx, b, dreq)
			if err != nil {
				for _, as := range mine {
					for _, a := range as {
						a.err = err
					}
				}
			} else {
				states := dk.(*kmsg.DescribeTransactionsResponse).TransactionStates
				for i := range states {
					d := &states[i]
					for _, a := range mine[d.TransactionalID] {
						a.desc, a.err = d, kerr.ErrorForCode(d.ErrorCode)
					}
				}
			}
		}
		mu.Lock()
		for _, as := range mine {
			for _, a := range as {
				answers[a.ts.ProducerID] = append(answers[a.ts.ProducerID], a)
			}
		}
		mu.Unlock()
	})
	// The coordinator's answer is a description, else
	// TRANSACTIONAL_ID_NOT_FOUND, the one error that is evidence for
	// KIP-664's rule (the coordinator forgot the id). Any other
	// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, an ACL denying
	// DESCRIBE on the id, a transport failure) leaves the producer
	// unanswered: not knowing is not hanging.
	score := func(a *answer) int {
		switch {
		case a.desc != nil && a.err == nil:
			return 3
		case errors.Is(a.err, kerr.TransactionalIDNotFound):
			return 2
		case a.desc != nil:
			return 1
		}
		return 0
	}
	for pid, as := range answers {
		slices.SortFunc(as, func(x, y *answer) int { return cmp.Compare(x.b, y.b) })
		best := slices.MaxFunc(as, func(x, y *answer) int { return cmp.Compare(score(x), score(y)) })
		ti := &txnInfo{id: best.ts.TransactionalID, state: best.ts.TransactionState, listed: true}
		switch err := best.err; {
		case best.desc != nil && err == nil:
			ti.desc, ti.state = best.desc, best.desc.State
		case errors.Is(err, kerr.TransactionalIDNotFound):
			ti.descErr = err
		default:
			if err == nil {
				err = fmt.Errorf("broker %d's answer lacks %q", best.b, best.ts.TransactionalID)
			}
			ca.unanswered[pid], ti.descErr = err, err
		}
		ca.info[pid], ca.coord[pid] = ti, best.b
	}
	slices.Sort(ca.missing)
	return ca
}

// maxTxnTimeout is the configured bound, or the one a reachable broker
// reports, read with the watcher's describeMaxTxnTimeout.
func (s *scanner) maxTxnTimeout(ctx context.Context) (time.Duration, string) {
	if s.o.MaxTxnTimeout > 0 {
		return s.o.MaxTxnTimeout, "configured"
	}
	for _, b := range s.brokers {
		release, err := s.acquire(ctx, b)
		if err != nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, s.o.RequestTimeout)
		w := &Watcher{cl: s.cl, parts: []*partState{{leader: b}}}
		s.count(int16(kmsg.DescribeConfigs))
		d, src := w.describeMaxTxnTimeout(rctx)
		cancel()
		release()
		for _, n := range w.notes {
			s.note("%s", n)
		}
		return d, src
	}
	return txnindex.DefaultMaxTxnTimeout, "default"
}

// listGroups asks every broker for the groups it coordinates.
func (s *scanner) listGroups(ctx context.Context) map[int32][]kmsg.ListGroupsResponseGroup {
	out := map[int32][]kmsg.ListGroupsResponseGroup{}
	var mu sync.Mutex
	eachBroker(s.brokers, func(b int32) {
		kresp, err := s.send(ctx, b, kmsg.NewPtrListGroupsRequest())
		if err == nil {
			err = kerr.ErrorForCode(kresp.(*kmsg.ListGroupsResponse).ErrorCode)
		}
		if err != nil {
			s.note("ListGroups on broker %d: %v: the groups it coordinates are not shown", b, err)
			return
		}
		var gs []kmsg.ListGroupsResponseGroup
		for _, g := range kresp.(*kmsg.ListGroupsResponse).Groups {
			// Consumer groups commit offsets; an empty protocol type
			// is a group that only ever committed (simple consumers,
			// kafka-consumer-groups --reset-offsets). Connect and
			// share groups keep no offsets OffsetFetch can read.
			if g.ProtocolType == "consumer" || g.ProtocolType == "" {
				gs = append(gs, g)
			}
		}
		slices.SortFunc(gs, func(a, b kmsg.ListGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
		mu.Lock()
		out[b] = gs
		mu.Unlock()
	})
	return out
}

// offsetFetch reads, per coordinator, the committed offsets of all its
// groups on the stuck partitions (OffsetFetch v8+ carries many groups,
// KIP-709), as an admin fetch (no member id, epoch -1): no group is joined.
// A group is behind a stuck partition when its committed offset is at or
// below the LSO.
func (s *scanner) offsetFetch(ctx context.Context, groups map[int32][]kmsg.ListGroupsResponseGroup, stuck []*PartitionLag) {
	type tp struct {
		t string
		p int32
	}
	byTP := map[tp]*PartitionLag{}
	var topics []string
	for _, p := range stuck {
		byTP[tp{p.Topic, p.Partition}] = p
		if !slices.Contains(topics, p.Topic) {
			topics = append(topics, p.Topic)
		}
	}
	byID := map[[16]byte]string{}
	for _, t := range topics {
		byID[s.topicIDs[t]] = t
	}
	reqTopics := func() []kmsg.OffsetFetchRequestGroupTopic {
		var rts []kmsg.OffsetFetchRequestGroupTopic
		for _, t := range topics {
			rt := kmsg.NewOffsetFetchRequestGroupTopic()
			rt.Topic, rt.TopicID = t, s.topicIDs[t] // v8-9 by name, v10+ by id
			for _, p := range stuck {
				if p.Topic == t {
					rt.Partitions = append(rt.Partitions, p.Partition)
				}
			}
			rts = append(rts, rt)
		}
		return rts
	}
	var mu sync.Mutex
	add := func(b int32, g kmsg.ListGroupsResponseGroup, topic string, part int32, committed int64) {
		p := byTP[tp{topic, part}]
		if p == nil || committed < 0 || committed > p.LastStableOffset {
			return
		}
		mu.Lock()
		p.Groups = append(p.Groups, GroupBehind{Group: g.Group, State: g.GroupState, Coordinator: b, Committed: committed,
			LagOffsets: p.HighWatermark - committed, BehindLSO: true, Blocked: committed == p.LastStableOffset})
		mu.Unlock()
	}
	ids := make([]int32, 0, len(groups))
	for b, gs := range groups {
		if len(gs) > 0 {
			ids = append(ids, b)
		}
	}
	slices.Sort(ids)
	eachBroker(ids, func(b int32) {
		gs := groups[b]
		req := kmsg.NewPtrOffsetFetchRequest()
		for _, g := range gs {
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group, rg.MemberEpoch, rg.Topics = g.Group, -1, reqTopics()
			req.Groups = append(req.Groups, rg)
		}
		kresp, err := s.send(ctx, b, req)
		if err != nil {
			s.note("OffsetFetch on broker %d: %v: its groups are not shown", b, err)
			return
		}
		resp := kresp.(*kmsg.OffsetFetchResponse)
		if resp.GetVersion() < 8 {
			// The broker predates KIP-709 (Kafka 3.0): the groups
			// were not encoded; ask one group at a time.
			s.offsetFetchEach(ctx, b, gs, reqTopics(), add)
			return
		}
		for _, rg := range resp.Groups {
			g := findGroup(gs, rg.Group)
			if err := kerr.ErrorForCode(rg.ErrorCode); err != nil || g == nil {
				if err != nil {
					s.note("OffsetFetch of group %q on broker %d: %v", rg.Group, b, err)
				}
				continue
			}
			for _, t := range rg.Topics {
				name := t.Topic
				if name == "" {
					name = byID[t.TopicID]
				}
				for _, rp := range t.Partitions {
					if rp.ErrorCode == 0 {
						add(b, *g, name, rp.Partition, rp.Offset)
					}
				}
			}
		}
	})
	for _, p := range stuck {
		slices.SortFunc(p.Groups, func(a, b GroupBehind) int { return strings.Compare(a.Group, b.Group) })
	}
}

// offsetFetchEach is OffsetFetch for brokers before v8, one group a request.
func (s *scanner) offsetFetchEach(ctx context.Context, b int32, gs []kmsg.ListGroupsResponseGroup, topics []kmsg.OffsetFetchRequestGroupTopic,
	add func(int32, kmsg.ListGroupsResponseGroup, string, int32, int64)) {
	for _, g := range gs {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = g.Group
		for _, t := range topics {
			rt := kmsg.NewOffsetFetchRequestTopic()
			rt.Topic, rt.Partitions = t.Topic, t.Partitions
			req.Topics = append(req.Topics, rt)
		}
		kresp, err := s.send(ctx, b, req)
		if err != nil {
			s.note("OffsetFetch of group %q on broker %d: %v", g.Group, b, err)
			return
		}
		resp := kresp.(*kmsg.OffsetFetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			s.note("OffsetFetch of group %q on broker %d: %v", g.Group, b, err)
			continue
		}
		for _, t := range resp.Topics {
			for _, rp := range t.Partitions {
				if rp.ErrorCode == 0 {
					add(b, g, t.Topic, rp.Partition, rp.Offset)
				}
			}
		}
	}
}

func findGroup(gs []kmsg.ListGroupsResponseGroup, name string) *kmsg.ListGroupsResponseGroup {
	for i := range gs {
		if gs[i].Group == name {
			return &gs[i]
		}
	}
	return nil
}

// judge turns a stuck partition's open producers into ClusterTxns and
// applies KIP-664's find-hanging rule exactly as the watcher does
// (coord.go): a producer whose last write here is older than
// transaction.max.timeout.ms is hanging when no coordinator lists it, the
// coordinator cannot describe its id, the description is another
// producer's, or it lacks this partition. Where a coordinator could not be
// asked (a broker down), the rule is not applied: absence of an answer is
// not absence of a coordinator.
func (s *scanner) judge(p *PartitionLag, open []kmsg.DescribeProducersResponseTopicPartitionActiveProducer, ca *coordAnswers, maxTxn time.Duration, src string) {
	now := s.now.UnixMilli()
	// The watcher's hanging() reads only the topic from its config and
	// the partition id.
	w := &Watcher{cfg: Config{Topic: p.Topic}}
	ps := &partState{id: p.Partition}
	for i, ap := range open {
		t := ClusterTxn{ProducerID: ap.ProducerID, ProducerEpoch: int16(ap.ProducerEpoch), CoordinatorEpoch: ap.CoordinatorEpoch,
			FirstOffset: ap.CurrentTxnStartOffset, LastTimestamp: ap.LastTimestamp, AgeMs: max(now-ap.LastTimestamp, 0),
			Coordinator: -1, StartTimestamp: -1, State: txnindex.StateOpen,
			// The LSO is the first offset of the oldest open
			// transaction (ProducerStateManager.firstUnstableOffset),
			// or the log start if that is later.
			PinsLSO: i == 0 && ap.CurrentTxnStartOffset <= p.LastStableOffset,
		}
		var ti *txnInfo
		if ca != nil {
			ti = ca.info[ap.ProducerID]
		}
		if ti != nil {
			t.TransactionalID, t.CoordinatorState, t.Coordinator = ti.id, ti.state, ca.coord[ap.ProducerID]
			if d := ti.desc; d != nil && d.ProducerID == ap.ProducerID {
				t.StartTimestamp, t.TimeoutMs = d.StartTimestamp, d.TimeoutMillis
				for _, dt := range d.Topics {
					for _, part := range dt.Partitions {
						t.CoordinatorPartitions = append(t.CoordinatorPartitions, fmt.Sprintf("%s-%d", dt.Topic, part))
					}
				}
			}
		}
		unknown := ""
		switch {
		case ca == nil:
			unknown = "the coordinators were not asked"
		case ti == nil && len(ca.missing) > 0:
			unknown = "no reachable coordinator lists it, and " + strings.Join(ca.missing, ", ") + " failed ListTransactions"
		case ti != nil && ca.unanswered[ap.ProducerID] != nil:
			unknown = fmt.Sprintf("no broker that lists %q described it (DescribeTransactions: %v)", ti.id, ca.unanswered[ap.ProducerID])
		}
		age := time.Duration(t.AgeMs) * time.Millisecond
		switch {
		case age > maxTxn && unknown != "":
			t.State = txnindex.StateExpired
			t.Reason = fmt.Sprintf("no write for %s, longer than transaction.max.timeout.ms (%s, %s), but %s: whether it hangs is unknown",
				fmtAge(t.AgeMs), maxTxn, src, unknown)
		case age > maxTxn:
			var why string
			t.Hanging, why = w.hanging(ps, ap.ProducerID, ti)
			if t.Hanging {
				t.State = txnindex.StateHanging
				t.Reason = fmt.Sprintf("hanging (KIP-664): no write for %s, longer than transaction.max.timeout.ms (%s, %s), and %s", fmtAge(t.AgeMs), maxTxn, src, why)
			} else {
				t.State = txnindex.StateExpired
				t.Reason = fmt.Sprintf("no write for %s, longer than transaction.max.timeout.ms (%s, %s), but %s", fmtAge(t.AgeMs), maxTxn, src, why)
			}
		case t.StartTimestamp > 0 && t.TimeoutMs > 0 && now-t.StartTimestamp > int64(t.TimeoutMs):
			t.State = txnindex.StateExpired
			t.Reason = fmt.Sprintf("started %s ago, longer than its transaction.timeout.ms (%s): the coordinator should abort it",
				fmtAge(now-t.StartTimestamp), time.Duration(t.TimeoutMs)*time.Millisecond)
		default:
			t.Reason = fmt.Sprintf("open, last write %s ago, within transaction.max.timeout.ms (%s)", fmtAge(t.AgeMs), maxTxn)
			if unknown != "" && ti == nil {
				t.Reason += "; " + unknown
			}
		}
		t.AbortCommand = fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic %s --partition %d --start-offset %d",
			s.o.Bootstrap, p.Topic, p.Partition, t.FirstOffset)
		p.Hanging = p.Hanging || t.Hanging
		p.Open = append(p.Open, t)
	}
	for i := range p.Open {
		t := &p.Open[i]
		if !t.PinsLSO {
			continue
		}
		p.PinnedBy = t
		if t.StartTimestamp > 0 {
			p.LSOLagMs, p.LSOLagSource = max(now-t.StartTimestamp, 0), "transaction start (DescribeTransactions)"
		} else {
			p.LSOLagMs, p.LSOLagSource = t.AgeMs, "last write (DescribeProducers), a lower bound"
		}
	}
	if p.PinnedBy == nil && len(p.Notes) == 0 {
		// Between the two ListOffsets a transaction ended, or its
		// marker is written but not yet replicated (the LSO waits for
		// the high watermark to pass it): transient.
		p.Notes = append(p.Notes, "no open transaction at the LSO: it ended during the scan, or its marker awaits replication")
	}
}

// WriteText renders the scan for a terminal: stuck partitions first
// (hanging ones flagged), each with its transactions, the command that ends
// each and the groups waiting; then the unknown ones and the brokers that
// failed; the clear partitions as ranges per topic.
func (s *ClusterScan) WriteText(w io.Writer) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "cluster %s: %d partitions in %d topics on %d brokers, scanned in %s with %d requests\n",
		s.Bootstrap, len(s.Partitions), s.Topics, len(s.Brokers), s.Duration.Round(time.Millisecond), s.RequestCount)
	fmt.Fprintf(&sb, "  %d stuck (%d hanging), %d unknown, %d clear\n", s.Stuck, s.Hanging, s.Unknown, s.Clear)
	for i := range s.Partitions {
		p := &s.Partitions[i]
		if p.Err != "" || p.LSOLagOffsets == 0 {
			continue
		}
		word := "STUCK"
		if p.Hanging {
			word = "HANGING"
		}
		fmt.Fprintf(&sb, "\n%s %s-%d (leader %d): LSO %d is %d offsets behind the high watermark %d", word, p.Topic, p.Partition, p.Leader,
			p.LastStableOffset, p.LSOLagOffsets, p.HighWatermark)
		if p.LSOLagSource != "" {
			fmt.Fprintf(&sb, ", held for %s (%s)", fmtAge(p.LSOLagMs), p.LSOLagSource)
		}
		sb.WriteString("\n")
		for _, t := range p.Open {
			id := "no transactional id (no coordinator lists the producer)"
			if t.TransactionalID != "" {
				id = fmt.Sprintf("transactional id %q, %s on coordinator %d", t.TransactionalID, t.CoordinatorState, t.Coordinator)
			}
			fmt.Fprintf(&sb, "  open transaction: producer %d epoch %d from offset %d, %s", t.ProducerID, t.ProducerEpoch, t.FirstOffset, id)
			if t.StartTimestamp > 0 {
				fmt.Fprintf(&sb, ", started %s", time.UnixMilli(t.StartTimestamp).UTC().Format(time.RFC3339))
			}
			if t.TimeoutMs > 0 {
				fmt.Fprintf(&sb, ", timeout %s", time.Duration(t.TimeoutMs)*time.Millisecond)
			}
			fmt.Fprintf(&sb, "\n    %s: %s\n    to end it: %s\n", t.State, t.Reason, t.AbortCommand)
		}
		for _, g := range p.Groups {
			where := "behind it"
			if g.Blocked {
				where = "waiting at the LSO"
			}
			fmt.Fprintf(&sb, "  group %q (%s) committed %d, %s, %d offsets behind the high watermark\n", g.Group, g.State, g.Committed, where, g.LagOffsets)
		}
		for _, n := range p.Notes {
			fmt.Fprintf(&sb, "  note: %s\n", n)
		}
	}
	for i := range s.Partitions {
		if p := &s.Partitions[i]; p.Err != "" {
			fmt.Fprintf(&sb, "\nUNKNOWN %s-%d (leader %d): %s", p.Topic, p.Partition, p.Leader, p.Err)
		}
	}
	if s.Unknown > 0 {
		sb.WriteString("\n")
	}
	for _, b := range s.Brokers {
		if b.Err != "" {
			fmt.Fprintf(&sb, "\nbroker %d (%s:%d): %s\n", b.ID, b.Host, b.Port, b.Err)
		}
	}
	if s.Clear > 0 {
		sb.WriteString("\nclear (lag 0):")
		writeClear(&sb, s.Partitions)
		sb.WriteString("\n")
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&sb, "note: %s\n", n)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// writeClear writes the clear partitions as "topic 0-4 6-9" per topic.
func writeClear(sb *strings.Builder, ps []PartitionLag) {
	byTopic := map[string][]int32{}
	var topics []string
	for i := range ps {
		p := &ps[i]
		if p.Err != "" || p.LSOLagOffsets > 0 {
			continue
		}
		if _, ok := byTopic[p.Topic]; !ok {
			topics = append(topics, p.Topic)
		}
		byTopic[p.Topic] = append(byTopic[p.Topic], p.Partition)
	}
	slices.Sort(topics)
	for _, t := range topics {
		parts := byTopic[t]
		slices.Sort(parts)
		fmt.Fprintf(sb, "\n  %s", t)
		for i := 0; i < len(parts); {
			j := i
			for j+1 < len(parts) && parts[j+1] == parts[j]+1 {
				j++
			}
			if i == j {
				sb.WriteString(" " + strconv.Itoa(int(parts[i])))
			} else {
				fmt.Fprintf(sb, " %d-%d", parts[i], parts[j])
			}
			i = j + 1
		}
	}
}
