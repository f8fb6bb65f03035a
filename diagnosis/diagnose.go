// Package diagnosis explains a partition's last stable offset: which
// transaction pins it and since when, how each open transaction classifies
// (open, expired, late, hanging by KIP-664 once the coordinators' word is
// joined, prepared for a two-phase commit, decided but unreplicated), what
// ends it and what aborting it discards. It reads a *txnindex.Log, the
// broker's replay of the partition, and knows nothing of how it was loaded
// or how its report is shown.
package diagnosis

import (
	"cmp"
	"time"

	"github.com/txnscope/txnscope/txnindex"
)

// Broker defaults that bound a transaction's life.
const (
	DefaultTxnTimeout    = 60 * time.Second // transaction.timeout.ms (producer default)
	DefaultMaxTxnTimeout = 15 * time.Minute // transaction.max.timeout.ms (broker default), also find-hanging's default
	// LateTransactionBuffer is what the broker adds to
	// transaction.max.timeout.ms before it calls a transaction late
	// (ProducerStateManager.LATE_TRANSACTION_BUFFER_MS).
	LateTransactionBuffer = 5 * time.Minute
)

// Options tune Diagnose.
type Options struct {
	Now           time.Time     // the clock ages are measured against; zero means the newest timestamp in the log
	TxnTimeout    time.Duration // 0 means DefaultTxnTimeout
	MaxTxnTimeout time.Duration // 0 means DefaultMaxTxnTimeout
	Bootstrap     string        // the brokers for the commands (Remedy.Bootstrap); "" when not known
	Position      int64         // consumer position for the lag split; -1 for none
	// Hints name what settles the questions the files leave open, in the
	// caller's words.
	Hints Hints
	// NoClientDepartures leaves ClientDepartures out: three client
	// decision passes over the log, which a view that shows no client line
	// (the ranking of a log directory's tails, one diagnosis a partition)
	// need not pay.
	NoClientDepartures bool
	// Limit is how many entries each list of the diagnosis holds in
	// detail (ListLimit: 0 is ListCap); the rest are counted in its
	// …Total field (diagnose_cap.go).
	Limit int
}

// Hints say, in the caller's words, how its user supplies what would
// settle a question a partition's files leave open: a sentence of the
// diagnosis names them where it says what would settle it. The zero value
// says it in Kafka's terms.
type Hints struct {
	// Coordinators: how to read the transaction coordinators' word on a
	// late transaction (KIP-664). "" says "DescribeTransactions".
	Coordinators string
	// EverySegment: how to read the segments a replay seeded from a
	// producer snapshot left unread. "" says "a replay from the first
	// segment counts theirs".
	EverySegment string
}

func (h Hints) coordinators() string { return cmp.Or(h.Coordinators, "DescribeTransactions") }

func (h Hints) everySegment() string {
	return cmp.Or(h.EverySegment, "a replay from the first segment counts theirs")
}

// OpenTxnState classifies an open transaction.
type OpenTxnState string

// Classifications.
const (
	StateOpen    OpenTxnState = "open"    // within transaction.timeout.ms
	StateExpired OpenTxnState = "expired" // past transaction.timeout.ms: the coordinator should abort it
	// StateLate is the broker's own rule, decidable from the partition
	// alone: no write for longer than transaction.max.timeout.ms plus
	// LateTransactionBuffer (ProducerStateManager.hasLateTransaction,
	// counted by the PartitionsWithLateTransactionsCount metric). Whether
	// it is hanging takes the coordinator's word.
	StateLate OpenTxnState = "late"
	// StateHanging is KIP-664's, decided by the coordinator's evidence
	// (__transaction_state, DescribeTransactions): the coordinator no
	// longer has this transaction on this partition, so no marker comes.
	StateHanging OpenTxnState = "hanging"
	// StatePrepared is a transaction prepared for a two-phase commit
	// (KIP-939): its coordinator holds it Ongoing with a
	// transaction.timeout.ms of Integer.MAX_VALUE and never times it out;
	// its external transaction manager ends it.
	StatePrepared OpenTxnState = "prepared"
	// StateDecidedUnreplicated is a transaction whose COMMIT or ABORT
	// marker is in the log at or above the high watermark: decided, but
	// the LSO waits for the marker to be replicated (ProducerStateManager
	// keeps it in unreplicatedTxns and firstUnstableOffset counts it).
	StateDecidedUnreplicated OpenTxnState = "decided_unreplicated"
)

// OpenTxnReport is one undecided transaction and what to do about it.
type OpenTxnReport struct {
	ProducerID     txnindex.ProducerID `json:"producer_id"`
	ProducerEpoch  int16               `json:"producer_epoch"`
	FirstOffset    int64               `json:"first_offset"`
	LastOffset     int64               `json:"last_offset"`
	Batches        int                 `json:"batches"`
	Records        int64               `json:"records"`
	Bytes          int64               `json:"bytes"`
	FirstTimestamp int64               `json:"first_timestamp"`
	LastTimestamp  int64               `json:"last_timestamp"`
	AgeMs          int64               `json:"age_ms"`
	State          OpenTxnState        `json:"state"`
	Reason         string              `json:"reason"`
	AbortCommand   string              `json:"abort_command"`
	Discards       Discards            `json:"discards"`
	Seeded         bool                `json:"from_snapshot,omitempty"`
	ClockSkew      bool                `json:"clock_skew,omitempty"`
	PinsLSO        bool                `json:"pins_lso"`
	// Unseen marks a transaction known only from the LSO a capture's
	// responses reported: its producer, batches and records are unknown
	// (-1) and FirstOffset is that LSO.
	Unseen bool `json:"unseen,omitempty"`
	TxnJoin

	// AgeUnknown: no write time of it is known (a seeded transaction
	// whose snapshot entry has no timestamp), so it is not classified by
	// age.
	AgeUnknown bool `json:"age_unknown,omitempty"`
	// Late: the broker's rule (StateLate) holds, whatever the
	// coordinator says.
	Late bool `json:"late,omitempty"`
	// ConfirmCommand, for a late transaction no coordinator evidence
	// decided, is the command that asks the coordinator whether it hangs.
	ConfirmCommand string `json:"confirm_command,omitempty"`
	// AbortBreaks says what aborting a prepared transaction (KIP-939)
	// breaks.
	AbortBreaks string `json:"abort_breaks,omitempty"`
	// BeganBeforeLogStart: its first offset is below the log start; the
	// producer snapshot remembers it (FirstOffset), retention deleted it.
	BeganBeforeLogStart bool `json:"began_before_log_start,omitempty"`
	// BeganInRemoteStorage: with tiered storage (KIP-405), its first
	// offset lies at or above the log start but below the first local
	// segment: in remote storage, not deleted.
	BeganInRemoteStorage bool `json:"began_in_remote_storage,omitempty"`
	// MayHaveBegunBeforeLogStart: without a snapshot, the producer's first
	// surviving batch is this transaction's data with no marker before it,
	// so it may have begun in a segment retention deleted. StartEvidence
	// says what would settle it.
	MayHaveBegunBeforeLogStart bool   `json:"may_have_begun_before_log_start,omitempty"`
	StartEvidence              string `json:"start_evidence,omitempty"`
	// CoordinatorEpoch is the one the producer-id form of the abort
	// command carries, never below any the broker has seen for the
	// producer; CoordinatorEpochSource names the evidence.
	CoordinatorEpoch       int32  `json:"coordinator_epoch"`
	CoordinatorEpochSource string `json:"coordinator_epoch_source,omitempty"`
	// AbortByProducerCommand is the explicit form of the abort (producer
	// id, epoch, coordinator epoch), for when DescribeProducers cannot
	// be used.
	AbortByProducerCommand string `json:"abort_command_by_producer_id,omitempty"`
	// For StateDecidedUnreplicated: the marker, and where the high
	// watermark it is not yet below comes from.
	MarkerOffset        *int64 `json:"marker_offset,omitempty"`
	MarkerType          string `json:"marker_type,omitempty"`
	HighWatermarkSource string `json:"high_watermark_source,omitempty"`
	// For StateDecidedUnreplicated, what ends it in words (no command
	// does: the high watermark passing the marker) and a read-only
	// command that shows the replicas.
	EndsWhen     string `json:"ends_when,omitempty"`
	CheckCommand string `json:"check_command,omitempty"`

	// Remedy is what ends the transaction, in Kafka's terms; the
	// commands above are rendered from it (package present).
	Remedy Remedy `json:"-"`

	// Cut says where the log this transaction began before starts: the
	// log start retention left, or only where reading began ("" for the
	// log start); the runbook's words, not the JSON's.
	Cut string `json:"-"`
}

// Discards is what aborting a transaction throws away.
type Discards struct {
	Records      int64                  `json:"records"`
	Ranges       []txnindex.OffsetRange `json:"ranges"`
	PrintCommand string                 `json:"print_command"`
}

// LagReport splits the distance from a consumer position to the high
// watermark ("why is lag not zero").
type LagReport struct {
	Position         int64 `json:"position"`
	HighWatermark    int64 `json:"high_watermark"`
	Offsets          int64 `json:"offsets"`            // HWM - position
	ToDeliver        int64 `json:"records_to_deliver"` // records a read_committed consumer will still receive
	ControlMarkers   int64 `json:"control_markers"`
	Aborted          int64 `json:"aborted_records"`
	BehindOpenTxns   int64 `json:"records_behind_open_transactions"`
	Missing          int64 `json:"missing_offsets"`
	LastReachable    int64 `json:"last_reachable_offset"` // last offset a read_committed consumer can reach; -1 if none
	PositionAfterAll int64 `json:"position_after_all"`    // where the consumer's position ends up (the LSO)
}

// Diagnosis is the stuck-LSO report of one partition.
type Diagnosis struct {
	Topic string `json:"topic"`
	// Note says what a partition that is not a data partition is
	// (MetadataLogNote: the KRaft metadata log), "" for the others.
	Note string `json:"note,omitempty"`
	// TopicNameProblem says why Kafka would reject Topic as a topic name
	// (TopicNameProblem), "" for a legal name; the commands of such a
	// topic are a comment that says so (present.TopicCommands).
	TopicNameProblem    string `json:"topic_name_problem,omitempty"`
	Partition           int32  `json:"partition"`
	LogStartOffset      int64  `json:"log_start_offset"`
	LogEndOffset        int64  `json:"log_end_offset"`
	HighWatermark       int64  `json:"high_watermark"`
	HighWatermarkSource string `json:"high_watermark_source"`
	LastStableOffset    int64  `json:"last_stable_offset"`
	// LastStableOffsetSource is "log" when the LSO is computed from the
	// batches (ProducerStateManager's rule) and "capture" when it is the
	// one the broker reported in the captured responses.
	LastStableOffsetSource string `json:"last_stable_offset_source"`
	LSOLagOffsets          int64  `json:"lso_lag_offsets"`
	// LSOLagMs is the time the offsets behind the LSO span: from the
	// pinning transaction's first write to the newest write of the
	// partition. It says how much of the log consumers wait for, not how
	// long they have waited (LSOHeldMs).
	LSOLagMs int64 `json:"lso_lag_ms"`
	// LSOLagAtLeast: LSOLagMs is a lower bound (the holder's first write
	// was deleted; it is measured from its last one).
	LSOLagAtLeast bool `json:"lso_lag_at_least,omitempty"`
	// LSOHeldMs is how long the LSO has been held at Now: since the
	// pinning transaction's first write (HeldAt). -1 when nothing pins
	// it or no write time of the pinner is known.
	LSOHeldMs int64 `json:"lso_held_ms"`
	// LSOHeldAtLeast: LSOHeldMs is a lower bound (measured from a later
	// write than the first, or the time a capture saw that LSO).
	LSOHeldAtLeast   bool            `json:"lso_held_at_least,omitempty"`
	PinnedBy         *OpenTxnReport  `json:"pinned_by"`
	OpenTransactions []OpenTxnReport `json:"open_transactions"`
	// Unreplicated are the decided transactions whose marker is at or
	// above the high watermark (StateDecidedUnreplicated).
	Unreplicated []OpenTxnReport `json:"unreplicated_transactions"`
	// MarkerRemoved are the transactions the replay of the surviving
	// batches leaves open but the broker decided (StateMarkerRemoved): on
	// a compacted log the cleaner removed their markers. They hold no LSO.
	MarkerRemoved []OpenTxnReport `json:"compacted_transactions"`
	// The lists hold the first DiagnoseOptions.Limit entries (by first
	// offset; the pinner always); these count them all.
	ListTotals
	// Compaction is the log cleaner's evidence on the partition; nil when
	// nothing shows it (or for a capture).
	Compaction *CompactionReport `json:"compaction"`
	// TxnIndexMismatches are the differences between the .txnindex files
	// on disk and the ones rebuilt from the batches, each explained.
	TxnIndexMismatches []txnindex.MismatchReport `json:"txnindex_mismatches"`
	// UnlistedAborted is what read_committed consumers receive of aborted
	// transactions that no .txnindex entry the broker serves lists (a
	// lost file or entry): the broker leaves them out of the aborted
	// lists of its fetch responses. Nil when there is none.
	UnlistedAborted *txnindex.UnlistedAborted `json:"unlisted_aborted,omitempty"`
	// TxnIndexRejected lists the .txnindex files holding an entry whose
	// version Kafka refuses: a broker that loads the partition with its
	// segment's .index there fails to start (LogLoader catches only
	// NoSuchFileException and CorruptIndexException from sanityCheck).
	// The decisions are those of the broker that starts once the
	// segment is recovered, its .txnindex rebuilt.
	TxnIndexRejected []txnindex.RejectedTxnIndex `json:"txnindex_rejected,omitempty"`
	Lag              *LagReport                  `json:"lag,omitempty"`
	Now              int64                       `json:"now"`
	// Capture is the evidence of a log assembled from captured fetches.
	Capture *CaptureReport `json:"capture,omitempty"`
	// Replay says which segments were read (loader.OpenPartitionTail).
	Replay *txnindex.ReplayReport `json:"replay,omitempty"`
	// AfterRestart is what the next restart of the broker would change:
	// set when the directory holds a producer snapshot at the log start,
	// which the running broker keeps and a restart deletes.
	AfterRestart *RestartReport `json:"after_restart,omitempty"`
	// RecoveryTruncates is what the broker's next start after an unclean
	// shutdown takes from the log: set when a segment it recovers is
	// damaged before batches that were read.
	RecoveryTruncates *TruncationReport `json:"recovery_truncates,omitempty"`
	// OffsetsUnknown says why the offsets are -1: no .log segment was in
	// the partition directory.
	OffsetsUnknown *OffsetsUnknownReport `json:"offsets_unknown,omitempty"`
	// Tiered is the tiered-storage evidence (KIP-405): LogStartOffset is
	// then the partition's, below the first local segment.
	Tiered *TieredReport `json:"tiered_storage,omitempty"`
	// TopicUnknown: Topic is only a label (a segment read alone); the
	// commands name it through a shell variable (present.TopicVar).
	TopicUnknown bool `json:"topic_unknown,omitempty"`
	// ClientDepartures is what the clients that depart from Kafka's rule
	// deliver, asked for read_committed, that the Java consumer does not
	// (Log.ClientDepartures); nil when no client departs, and for a
	// capture. Like the cleaner's marks, it covers the batches read: on a
	// log seeded from a producer snapshot, those from the snapshot on.
	ClientDepartures *txnindex.ClientsReport `json:"client_departures,omitempty"`
	DiagnosisJoin
	// limit is the lists' length (DiagnoseOptions.Limit), for Join's
	// groups; 0 is ListCap.
	limit int
}

// Hanging reports whether the LSO is pinned by a hanging transaction.
func (d *Diagnosis) Hanging() bool { return d.PinnedBy != nil && d.PinnedBy.State == StateHanging }

// Alert reports whether an operator must act on the LSO: it is pinned by a
// hanging transaction, or by a late one whose coordinator was not heard
// (no evidence decided whether it hangs: HangingRule is empty).
func (d *Diagnosis) Alert() bool {
	p := d.PinnedBy
	return p != nil && (p.State == StateHanging || p.State == StateLate && p.HangingRule == "")
}

// plog is a partition's log with the diagnosis's questions to it.
type plog struct{ *txnindex.Log }

// Diagnose explains the partition's LSO: who pins it, since when, how the
// open transactions classify, what command ends each and what that discards.
func Diagnose(l *txnindex.Log, o Options) *Diagnosis { return plog{l}.diagnose(o) }

func (l plog) diagnose(o Options) *Diagnosis {
	if o.TxnTimeout <= 0 {
		o.TxnTimeout = DefaultTxnTimeout
	}
	if o.MaxTxnTimeout <= 0 {
		o.MaxTxnTimeout = DefaultMaxTxnTimeout
	}
	now := o.Now.UnixMilli()
	newest := int64(-1)
	for i := range l.Batches {
		newest = max(newest, l.Batches[i].MaxTimestamp)
	}
	if l.Replay.Seeded() {
		newest = max(newest, l.Replay.SkippedMaxTimestamp)
	}
	if o.Now.IsZero() {
		now = newest
	}
	lso, lsoSource := l.LastStableOffset, "log"
	hwm, hwmSource := l.HighWatermark, l.HighWatermarkSource
	cr := l.captureEvidence(o.Position)
	if cr != nil {
		if cr.BrokerLSO >= 0 {
			lso, lsoSource = cr.BrokerLSO, "capture"
			hwm, hwmSource = cr.BrokerHWM, "capture"
		}
		// A capture tells about the time it covers: ages are measured at
		// its end, not against a later clock that knows nothing of what
		// happened since.
		if cr.LastMs > 0 && (o.Now.IsZero() || now > cr.LastMs) {
			now = cr.LastMs
		}
	}
	// The clients' passes are the costliest part, and read only the log:
	// they run while the rest of the diagnosis is put together.
	// A panic in them reaches the caller as it would on this goroutine.
	var clients chan departures
	if cr == nil && !o.NoClientDepartures {
		clients = make(chan departures, 1)
		go func() {
			var r departures
			defer func() {
				r.panicked = recover()
				clients <- r
			}()
			r.report = l.ClientDepartures()
		}()
	}
	bootstrap := o.Bootstrap
	// On a compacted log, a transaction the replay leaves open may be one
	// the broker decided long ago, its marker removed by the cleaner: it
	// is reported apart and the LSO is the broker's without it.
	var removed map[int]string
	var compaction *CompactionReport
	if cr == nil {
		compaction = l.compaction(o.Hints)
		for _, ti := range l.Open {
			if ev := l.removedMarkerEvidence(&l.Txns[ti], compaction); ev != "" {
				if removed == nil {
					removed = map[int]string{}
				}
				removed[ti] = ev
			}
		}
		if removed != nil {
			lso = l.lsoWithout(removed)
		}
	}
	d := &Diagnosis{
		Topic: l.Topic, Partition: l.Partition, LogStartOffset: l.LogStartOffset, LogEndOffset: l.LogEndOffset,
		HighWatermark: hwm, HighWatermarkSource: hwmSource, LastStableOffset: lso, LastStableOffsetSource: lsoSource,
		LSOLagOffsets: hwm - lso, Now: now, Note: txnindex.MetadataLogNote(l.Topic), TopicNameProblem: txnindex.TopicNameProblem(l.Topic), OpenTransactions: []OpenTxnReport{}, Unreplicated: []OpenTxnReport{}, Capture: cr,
		MarkerRemoved: []OpenTxnReport{}, Compaction: compaction, TxnIndexMismatches: l.MismatchReports(),
		UnlistedAborted: l.UnlistedAborted(), TxnIndexRejected: l.RejectedTxnIndexes(),
		Replay: l.Replay,
	}
	d.limit = txnindex.ListLimit(o.Limit)
	pin := -1 // the earliest transaction at the LSO past the limit
	for _, ti := range l.Open {
		if ev, ok := removed[ti]; ok {
			if d.MarkerRemovedTotal++; len(d.MarkerRemoved) < d.limit {
				d.MarkerRemoved = append(d.MarkerRemoved, l.markerRemovedReport(ti, ev))
			}
			continue
		}
		if d.OpenTransactionsTotal++; len(d.OpenTransactions) < d.limit {
			d.OpenTransactions = append(d.OpenTransactions, l.openTxnReport(ti, lso, now, o, bootstrap))
		} else if l.pinsLSO(ti, lso) && (pin < 0 || l.Txns[ti].FirstOffset < l.Txns[pin].FirstOffset) {
			pin = ti
		}
	}
	if l.pinMissing(d.OpenTransactions, pin) {
		d.OpenTransactions = append(d.OpenTransactions, l.openTxnReport(pin, lso, now, o, bootstrap))
	}
	if cr == nil {
		d.Unreplicated = l.unreplicated(lso, hwm, hwmSource, bootstrap)
		d.AfterRestart = l.restartReport()
		d.RecoveryTruncates = l.truncationReport()
	}
	if cr != nil && cr.BrokerLSO >= 0 && d.LSOLagOffsets > 0 && !slicesContainsPin(d.OpenTransactions) {
		u := l.unseenPinner(cr, hwm, now, o, bootstrap)
		d.OpenTransactions = append(d.OpenTransactions, u)
		d.OpenTransactionsTotal++
		d.PinnedBy = &d.OpenTransactions[len(d.OpenTransactions)-1]
		d.LSOLagMs = u.AgeMs
	}
	if d.PinnedBy == nil && d.LSOLagOffsets > 0 {
		// The true holder: of every transaction whose (clamped) first
		// offset is the LSO, the earliest, whether open or decided but
		// unreplicated; not whichever comes first in Log.Open.
		for _, ts := range [][]OpenTxnReport{d.OpenTransactions, d.Unreplicated} {
			for i := range ts {
				if ts[i].PinsLSO && (d.PinnedBy == nil || ts[i].FirstOffset < d.PinnedBy.FirstOffset) {
					d.PinnedBy = &ts[i]
				}
			}
		}
		if p := d.PinnedBy; p != nil && newest >= 0 {
			switch {
			case p.FirstTimestamp >= 0:
				// For one that began before the log start this is its
				// first surviving write: a lower bound.
				d.LSOLagMs, d.LSOLagAtLeast = max(newest-p.FirstTimestamp, 0), p.BeganBeforeLogStart || p.BeganInRemoteStorage
			case p.LastTimestamp >= 0:
				// Its first write was deleted with its segment: the
				// LSO has been held at least since its last one.
				d.LSOLagMs, d.LSOLagAtLeast = max(newest-p.LastTimestamp, 0), true
			}
		}
	}
	d.LSOHeldMs, d.LSOHeldAtLeast = d.HeldAt(now)
	if o.Position >= 0 {
		d.Lag = l.lag(o.Position)
	}
	l.offsetsUnknown(d)
	l.tieredReport(d)
	d.TopicUnknown = l.TopicUnknown
	d.capLists()
	d.TxnIndexMismatchesTotal += l.MismatchesOmitted
	if clients != nil {
		r := <-clients
		if r.panicked != nil {
			panic(r.panicked)
		}
		d.ClientDepartures = r.report
	}
	return d
}

// departures is what the goroutine counting the clients' departures ends
// with: the report, or the value it panicked with.
type departures struct {
	report   *txnindex.ClientsReport
	panicked any
}

// HeldAt is how long the LSO has been held at nowMs: since the pinning
// transaction's first write; from its first surviving write, or its last
// write, when its first is not known (a lower bound); a pinner known only
// from a capture keeps the capture's measure (how long the broker reported
// that LSO), a lower bound too. -1 when nothing pins the LSO or no write
// time of the pinner is known. Every view asks this one function with its
// one clock, so that an index row, a page and the CLI cannot disagree.
func (d *Diagnosis) HeldAt(nowMs int64) (ms int64, atLeast bool) {
	p := d.PinnedBy
	switch {
	case p == nil:
		return -1, false
	case p.Unseen:
		return d.LSOLagMs, true
	case p.FirstTimestamp >= 0:
		return max(nowMs-p.FirstTimestamp, 0), p.BeganBeforeLogStart
	case p.LastTimestamp >= 0:
		return max(nowMs-p.LastTimestamp, 0), true
	}
	return -1, false
}

func slicesContainsPin(ts []OpenTxnReport) bool {
	for i := range ts {
		if ts[i].PinsLSO {
			return true
		}
	}
	return false
}

// lag splits HWM - position by what a read_committed consumer does with it.
// Counts are records: a whole batch counts its recordsCount, a batch cut by
// the position counts the offsets past it, capped at its records.
func (l plog) lag(pos int64) *LagReport {
	r := &LagReport{Position: pos, HighWatermark: l.HighWatermark, Offsets: max(l.HighWatermark-pos, 0), LastReachable: -1}
	// A batch that straddles the position is decided whole (the fetch
	// returns it whole), but only its offsets from the position on are
	// lag: the counts' range clips it.
	c := txnindex.NewCounts(pos, l.HighWatermark-1)
	for d := range l.Decisions(txnindex.ConsumeOptions{From: pos, Isolation: txnindex.ReadCommitted}) {
		c.Add(&d)
	}
	r.ToDeliver, r.ControlMarkers, r.Aborted, r.BehindOpenTxns, r.Missing = c.Delivered, c.ControlMarkers, c.Aborted, c.Pending, c.Missing
	r.LastReachable = c.LastReached
	r.PositionAfterAll = max(pos, l.LastStableOffset)
	return r
}

// fmtDur renders an age in the one duration format (Duration).
func fmtDur(ms int64) string { return txnindex.DurationMs(ms) }
