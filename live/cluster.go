package live

// Cluster mode: one scan ranks every partition of a cluster by
// how far its last stable offset lags the high watermark, names the
// transactions that hold the stuck ones and the consumer groups waiting
// behind them, with a number of requests that does not grow with the
// partition count.

import (
	"context"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
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
	// present.BootstrapVar.
	Bootstrap string
	// Limit is how many open transactions and groups behind a partition
	// keeps in detail (txnindex.ListLimit: 0 is txnindex.ListCap).
	Limit int

	// seeds are the bootstrap addresses, in kgo's seed order, and known
	// the brokers of the previous scan (Cluster.Scan sets both): where
	// Metadata goes when kgo's own pick of broker does not answer.
	seeds []string
	known []BrokerStatus
}

// ClusterScan is what one scan of a cluster found.
//
// Partitions holds one entry per partition scanned, ranked: stuck ones
// (LSO below the high watermark) first, hanging before open, then by lag
// seconds and lag offsets; then those whose offsets could not be read;
// then the clear ones (lag 0) by topic and partition.
type ClusterScan struct {
	// limit is ScanOptions.Limit, the lists' length (0: txnindex.ListCap).
	limit     int
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
// diagnose's (diagnosis.Diagnosis) where they mean the same.
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
	Hanging  bool        `json:"hanging"`
	PinnedBy *ClusterTxn `json:"pinned_by"`
	// Open are the first txnindex.ListCap open transactions by first
	// offset (the pinner first), of OpenTotal that DescribeProducers
	// reported; Groups the first ListCap groups behind by name, of
	// GroupsTotal (limits.go).
	Open        []ClusterTxn  `json:"open_transactions"`
	OpenTotal   int           `json:"open_transactions_total"`
	Groups      []GroupBehind `json:"groups_behind"`
	GroupsTotal int           `json:"groups_behind_total"`
	// ShareGroups are the share groups (KIP-932) with a state on the
	// partition, placed against its LSO by their isolation level
	// (DescribeShareGroupOffsets, DescribeConfigs).
	ShareGroups []txnindex.SharePosition `json:"share_groups,omitempty"`
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
	// transaction for the id includes (DescribeTransactions' topics).
	CoordinatorPartitions []txnindex.TopicPartition `json:"coordinator_partitions,omitempty"`
	// coord is the coordinator's description of the id for this producer
	// (DescribeTransactions, not only ListTransactions' state); nil when
	// it gave none.
	coord *txnindex.TxnCoordinatorState

	State        diagnosis.OpenTxnState `json:"state"` // open, expired or hanging
	Hanging      bool                   `json:"hanging"`
	Reason       string                 `json:"reason"`
	AbortCommand string                 `json:"abort_command"`
	PinsLSO      bool                   `json:"pins_lso"`
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
	// Kind is the group's protocol (ListGroups v5's GroupType); Members
	// are the client ids of a KIP-848 consumer group's members assigned
	// the partition (ConsumerGroupDescribe).
	Kind    txnindex.GroupKind `json:"group_kind,omitempty"`
	Members []string           `json:"assigned_members,omitempty"`
}

// AnyHanging reports whether a partition is held by a hanging transaction
// (diagnose's exit status 3).
func (s *ClusterScan) AnyHanging() bool { return s.Hanging > 0 }

// ScanCluster scans a cluster through cl, strictly read-only: every request
// is a Metadata, ListOffsets, DescribeProducers, ListTransactions,
// DescribeTransactions, DescribeConfigs, ListGroups, OffsetFetch,
// ConsumerGroupDescribe or DescribeShareGroupOffsets, sent with
// cl.Broker(id).Request to the broker that must answer it, never joining a
// group. (kgo's sharded Request also splits a ListOffsets into one request
// per leader, measured on kfake, after a Metadata lookup of its own on a
// cold client; but it routes DescribeTransactions and OffsetFetch through
// FindCoordinator, which is not on the read-only list.)
//
// Requests per scan, with B brokers in the Metadata answer, all reachable:
//
//	R = 1 + 2·L + [S > 0]·(Ls + B + Ct + B + Gc + Gk + 2·Gs + [T > 0 ∧ MaxTxnTimeout unset])
//
// where L ≤ B brokers lead a scanned partition (one ListOffsets each for the
// high watermark and for the LSO, however many partitions they lead), S
// partitions are stuck, Ls ≤ min(B, S) brokers lead one (one
// DescribeProducers each), every broker gets one ListTransactions and one
// ListGroups (each lists only what it coordinates), Ct ≤ min(B, T) of them
// coordinate one of the T open transactions (one DescribeTransactions each),
// Gc ≤ B coordinate a group (one OffsetFetch each for all their groups, v8+;
// a broker older than Kafka 3.0 gets one per group instead), Gk ≤ B list a
// KIP-848 consumer group (one ConsumerGroupDescribe each, for its members'
// assignments), Gs ≤ B list a KIP-932 share group (one
// DescribeShareGroupOffsets and one DescribeConfigs of the groups'
// share.isolation.level each), and one DescribeConfigs reads
// transaction.max.timeout.ms. So R ≤ 2 + 10·B whatever the number of
// partitions, and 2 + 7·B on a cluster of classic groups only. A new client also sends ApiVersions (and the
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
		o.Bootstrap = present.BootstrapVar
	}
	start := time.Now()
	s := &scanner{cl: cl, o: o, now: o.Now(), reqs: map[string]int{}, down: map[int32]error{}, sem: map[int32]chan struct{}{}}
	out := &ClusterScan{Time: s.now, Bootstrap: o.Bootstrap, limit: o.Limit}
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
