package txnindex

import (
	"fmt"
	"strings"
	"time"
)

// Broker defaults that bound a transaction's life.
const (
	DefaultTxnTimeout    = 60 * time.Second // transaction.timeout.ms (producer default)
	DefaultMaxTxnTimeout = 15 * time.Minute // transaction.max.timeout.ms (broker default), also find-hanging's default
)

// DiagnoseOptions tune Diagnose.
type DiagnoseOptions struct {
	Now           time.Time     // the clock ages are measured against; zero means the newest timestamp in the log
	TxnTimeout    time.Duration // 0 means DefaultTxnTimeout
	MaxTxnTimeout time.Duration // 0 means DefaultMaxTxnTimeout
	Bootstrap     string        // for the commands; "" prints <bootstrap>
	Position      int64         // consumer position for the lag split; -1 for none
}

// OpenTxnState classifies an open transaction.
type OpenTxnState string

// Classifications.
const (
	StateOpen    OpenTxnState = "open"    // within transaction.timeout.ms
	StateExpired OpenTxnState = "expired" // past transaction.timeout.ms: the coordinator should abort it
	StateHanging OpenTxnState = "hanging" // KIP-664: no write for longer than the max timeout while the partition moved on
)

// OffsetRange is an inclusive range of offsets.
type OffsetRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// OpenTxnReport is one undecided transaction and what to do about it.
type OpenTxnReport struct {
	ProducerID     ProducerID   `json:"producer_id"`
	ProducerEpoch  int16        `json:"producer_epoch"`
	FirstOffset    int64        `json:"first_offset"`
	LastOffset     int64        `json:"last_offset"`
	Batches        int          `json:"batches"`
	Records        int64        `json:"records"`
	Bytes          int64        `json:"bytes"`
	FirstTimestamp int64        `json:"first_timestamp"`
	LastTimestamp  int64        `json:"last_timestamp"`
	AgeMs          int64        `json:"age_ms"`
	State          OpenTxnState `json:"state"`
	Reason         string       `json:"reason"`
	AbortCommand   string       `json:"abort_command"`
	Discards       Discards     `json:"discards"`
	Seeded         bool         `json:"from_snapshot,omitempty"`
	ClockSkew      bool         `json:"clock_skew,omitempty"`
	PinsLSO        bool         `json:"pins_lso"`
	// Unseen marks a transaction known only from the LSO a capture's
	// responses reported: its producer, batches and records are unknown
	// (-1) and FirstOffset is that LSO.
	Unseen bool `json:"unseen,omitempty"`
	TxnJoin
}

// Discards is what aborting a transaction throws away.
type Discards struct {
	Records      int64         `json:"records"`
	Ranges       []OffsetRange `json:"ranges"`
	PrintCommand string        `json:"print_command"`
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
	Topic               string `json:"topic"`
	Partition           int32  `json:"partition"`
	LogStartOffset      int64  `json:"log_start_offset"`
	LogEndOffset        int64  `json:"log_end_offset"`
	HighWatermark       int64  `json:"high_watermark"`
	HighWatermarkSource string `json:"high_watermark_source"`
	LastStableOffset    int64  `json:"last_stable_offset"`
	// LastStableOffsetSource is "log" when the LSO is computed from the
	// batches (ProducerStateManager's rule) and "capture" when it is the
	// one the broker reported in the captured responses.
	LastStableOffsetSource string          `json:"last_stable_offset_source"`
	LSOLagOffsets          int64           `json:"lso_lag_offsets"`
	LSOLagMs               int64           `json:"lso_lag_ms"`
	PinnedBy               *OpenTxnReport  `json:"pinned_by"`
	OpenTransactions       []OpenTxnReport `json:"open_transactions"`
	Lag                    *LagReport      `json:"lag,omitempty"`
	Now                    int64           `json:"now"`
	// Capture is the evidence of a log assembled from captured fetches.
	Capture *CaptureReport `json:"capture,omitempty"`
	DiagnosisJoin
}

// Hanging reports whether the LSO is pinned by a hanging transaction.
func (d *Diagnosis) Hanging() bool { return d.PinnedBy != nil && d.PinnedBy.State == StateHanging }

// Diagnose explains the partition's LSO: who pins it, since when, how the
// open transactions classify, what command ends each and what that discards.
func (l *Log) Diagnose(o DiagnoseOptions) *Diagnosis {
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
	bootstrap := o.Bootstrap
	if bootstrap == "" {
		bootstrap = "<bootstrap>"
	}
	d := &Diagnosis{
		Topic: l.Topic, Partition: l.Partition, LogStartOffset: l.LogStartOffset, LogEndOffset: l.LogEndOffset,
		HighWatermark: hwm, HighWatermarkSource: hwmSource, LastStableOffset: lso, LastStableOffsetSource: lsoSource,
		LSOLagOffsets: hwm - lso, Now: now, OpenTransactions: []OpenTxnReport{}, Capture: cr,
	}
	for _, ti := range l.Open {
		t := &l.Txns[ti]
		r := OpenTxnReport{
			ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, FirstOffset: t.FirstOffset, LastOffset: t.LastDataOffset,
			Batches: t.Batches, Records: t.Records, Bytes: t.Bytes, FirstTimestamp: t.FirstTimestamp, LastTimestamp: t.LastTimestamp,
			Seeded: t.Seeded, PinsLSO: max(t.FirstOffset, l.LogStartOffset) == lso,
		}
		last := t.LastTimestamp
		r.AgeMs = now - last
		if last < 0 {
			r.AgeMs = 0
		}
		if r.AgeMs < 0 {
			// CreateTime comes from the producer's clock: a timestamp
			// ahead of "now" is skew, not a young transaction.
			r.ClockSkew, r.AgeMs = true, 0
		}
		movedOn := l.LogEndOffset > t.LastDataOffset+1
		switch {
		case time.Duration(r.AgeMs)*time.Millisecond > o.MaxTxnTimeout && movedOn:
			r.State, r.HangingRule = StateHanging, RuleAge
			r.Reason = fmt.Sprintf("producer %d wrote nothing for %s, longer than transaction.max.timeout.ms (%s), while the partition moved on to offset %d: the coordinator will not end it (KIP-664)",
				t.ProducerID, fmtDur(r.AgeMs), o.MaxTxnTimeout, l.LogEndOffset)
		case time.Duration(r.AgeMs)*time.Millisecond > o.TxnTimeout:
			r.State = StateExpired
			r.Reason = fmt.Sprintf("older than transaction.timeout.ms (%s): the coordinator should abort it; if nothing happens within transaction.max.timeout.ms (%s) it is hanging",
				o.TxnTimeout, o.MaxTxnTimeout)
		default:
			r.State = StateOpen
			r.Reason = fmt.Sprintf("last write %s ago, within transaction.timeout.ms (%s)", fmtDur(r.AgeMs), o.TxnTimeout)
		}
		if r.ClockSkew {
			r.Reason += "; its timestamps are ahead of the clock (producer clock skew), so its age is unknown"
		}
		if t.Seeded || t.FirstOffset < l.LogStartOffset {
			// --start-offset needs DescribeProducers to show a
			// transaction starting at exactly that offset; the explicit
			// form works when the start is gone.
			r.AbortCommand = fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic %s --partition %d --producer-id %d --producer-epoch %d --coordinator-epoch %d",
				bootstrap, l.Topic, l.Partition, t.ProducerID, t.ProducerEpoch, l.coordinatorEpoch(t.ProducerID))
		} else {
			r.AbortCommand = fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic %s --partition %d --start-offset %d",
				bootstrap, l.Topic, l.Partition, t.FirstOffset)
		}
		r.Discards = Discards{Records: t.Records, Ranges: l.openTxnRanges(ti)}
		if r.Discards.Ranges == nil {
			r.Discards.Ranges = []OffsetRange{}
		}
		r.Discards.PrintCommand = fmt.Sprintf("kcat -C -b %s -t %s -p %d -o %d -c %d -X isolation.level=read_uncommitted -f '%%o %%k %%s\\n'",
			bootstrap, l.Topic, l.Partition, t.FirstOffset, max(t.LastDataOffset-t.FirstOffset+1, 1))
		d.OpenTransactions = append(d.OpenTransactions, r)
	}
	if cr != nil && cr.BrokerLSO >= 0 && d.LSOLagOffsets > 0 && !slicesContainsPin(d.OpenTransactions) {
		u := l.unseenPinner(cr, hwm, now, o, bootstrap)
		d.OpenTransactions = append(d.OpenTransactions, u)
		d.PinnedBy = &d.OpenTransactions[len(d.OpenTransactions)-1]
		d.LSOLagMs = u.AgeMs
	}
	for i := range d.OpenTransactions {
		if d.PinnedBy == nil && d.OpenTransactions[i].PinsLSO && d.LSOLagOffsets > 0 {
			d.PinnedBy = &d.OpenTransactions[i]
			if d.PinnedBy.FirstTimestamp >= 0 && newest >= 0 {
				d.LSOLagMs = max(newest-d.PinnedBy.FirstTimestamp, 0)
			}
			break
		}
	}
	if o.Position >= 0 {
		d.Lag = l.lag(o.Position)
	}
	return d
}

func slicesContainsPin(ts []OpenTxnReport) bool {
	for i := range ts {
		if ts[i].PinsLSO {
			return true
		}
	}
	return false
}

// coordinatorEpoch is the epoch of the producer's last marker, 0 if none
// (kafka-transactions.sh raises a missing or negative one to 0).
func (l *Log) coordinatorEpoch(pid ProducerID) int32 {
	ce := int32(0)
	for i := range l.Batches {
		b := &l.Batches[i]
		if b.ProducerID == pid && b.IsEndTxnMarker() && b.CoordinatorEpoch() > ce {
			ce = b.CoordinatorEpoch()
		}
	}
	return ce
}

// lag splits HWM - position by what a read_committed consumer does with it.
// Counts are records: a whole batch counts its recordsCount, a batch cut by
// the position counts the offsets past it, capped at its records.
func (l *Log) lag(pos int64) *LagReport {
	r := &LagReport{Position: pos, HighWatermark: l.HighWatermark, Offsets: max(l.HighWatermark-pos, 0), LastReachable: -1}
	// A batch that straddles the position is decided whole (the fetch
	// returns it whole), but only its offsets from the position on are
	// lag: the counts' range clips it.
	c := NewCounts(pos, l.HighWatermark-1)
	for d := range l.Decisions(ConsumeOptions{From: pos, Isolation: ReadCommitted}) {
		c.Add(&d)
	}
	r.ToDeliver, r.ControlMarkers, r.Aborted, r.BehindOpenTxns, r.Missing = c.Delivered, c.ControlMarkers, c.Aborted, c.Pending, c.Missing
	r.LastReachable = c.LastReached
	r.PositionAfterAll = max(pos, l.LastStableOffset)
	return r
}

// fmtDur renders an age: Go's form below two days ("20m0s"), days and
// hours above it ("335d 18h"), which is what a hanging transaction's age
// usually is.
func fmtDur(ms int64) string {
	d := (time.Duration(ms) * time.Millisecond).Round(time.Second)
	if d < 48*time.Hour {
		return d.String()
	}
	return fmt.Sprintf("%dd %dh", d/(24*time.Hour), (d%(24*time.Hour))/time.Hour)
}

// Runbook renders the diagnosis as a short runbook.
func (d *Diagnosis) Runbook() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s-%d\n", d.Topic, d.Partition)
	fmt.Fprintf(&sb, "  log start %d, log end %d, high watermark %d (%s), last stable offset %d\n",
		d.LogStartOffset, d.LogEndOffset, d.HighWatermark, d.HighWatermarkSource, d.LastStableOffset)
	if d.PinnedBy == nil {
		if len(d.OpenTransactions) == 0 {
			sb.WriteString("  clear: no open transaction; read_committed consumers can read to the high watermark\n")
		} else {
			sb.WriteString("  clear: open transactions exist but none holds the LSO below the high watermark\n")
		}
	} else {
		p := d.PinnedBy
		if p.Unseen {
			fmt.Fprintf(&sb, "  STUCK: the LSO is %d offsets (at least %s) behind the high watermark, pinned by a transaction the capture did not see, from offset %d (%s)\n",
				d.LSOLagOffsets, fmtDur(d.LSOLagMs), p.FirstOffset, p.State)
		} else {
			fmt.Fprintf(&sb, "  STUCK: the LSO is %d offsets (%s) behind the high watermark, pinned by producer %d epoch %d's transaction from offset %d (%s)\n",
				d.LSOLagOffsets, fmtDur(d.LSOLagMs), p.ProducerID, p.ProducerEpoch, p.FirstOffset, p.State)
		}
	}
	d.runbookPinned(&sb)
	if c := d.Capture; c != nil {
		c.runbook(&sb)
	}
	for i, t := range d.OpenTransactions {
		if t.Unseen {
			fmt.Fprintf(&sb, "\n  open transaction %d: unseen producer, from offset %d\n", i+1, t.FirstOffset)
		} else {
			fmt.Fprintf(&sb, "\n  open transaction %d: producer %d epoch %d, offsets %d-%d, %d batches, %d records, %d bytes\n",
				i+1, t.ProducerID, t.ProducerEpoch, t.FirstOffset, t.LastOffset, t.Batches, t.Records, t.Bytes)
		}
		fmt.Fprintf(&sb, "    %s: %s\n", t.State, t.Reason)
		t.runbookCoordinator(&sb)
		fmt.Fprintf(&sb, "    to end it:  %s\n", t.AbortCommand)
		if t.Unseen {
			fmt.Fprintf(&sb, "    aborting discards its records, somewhere in offsets %d-%d (not in the capture)", t.FirstOffset, d.HighWatermark-1)
		} else {
			fmt.Fprintf(&sb, "    aborting discards %d records at offsets", t.Discards.Records)
			for _, r := range t.Discards.Ranges {
				fmt.Fprintf(&sb, " %d-%d", r.From, r.To)
			}
		}
		fmt.Fprintf(&sb, "\n    to see them first: %s\n", t.Discards.PrintCommand)
	}
	if l := d.Lag; l != nil {
		fmt.Fprintf(&sb, "\n  lag from position %d to the high watermark %d: %d offsets\n", l.Position, l.HighWatermark, l.Offsets)
		fmt.Fprintf(&sb, "    %d records still to deliver, %d control markers, %d aborted records, %d records waiting behind open transactions, %d offsets missing\n",
			l.ToDeliver, l.ControlMarkers, l.Aborted, l.BehindOpenTxns, l.Missing)
		fmt.Fprintf(&sb, "    a read_committed consumer can reach offset %d; its position stops at %d\n", l.LastReachable, l.PositionAfterAll)
	}
	return sb.String()
}

// openTxnRanges is the offset ranges of transaction ti's data, walking
// only the batches between its first and last data offsets (where all its
// data lies) instead of the whole log: the diagnosis asks for open
// transactions only, and is recomputed every second for a wall clock, so
// walking the 1M-batch demo's every transaction cost 95% of it. The test's
// oracle (txnRanges) walks the whole log.
func (l *Log) openTxnRanges(ti int) []OffsetRange {
	t := &l.Txns[ti]
	var rs []OffsetRange
	for i := l.batchAtOrAfter(t.FirstOffset); i < len(l.Batches) && l.Batches[i].BaseOffset <= t.LastDataOffset; i++ {
		b := &l.Batches[i]
		if b.ProducerID != t.ProducerID || b.IsControl() || l.TxnOf(i) != t {
			continue
		}
		if n := len(rs); n > 0 && rs[n-1].To+1 == b.BaseOffset {
			rs[n-1].To = b.LastOffset()
		} else {
			rs = append(rs, OffsetRange{b.BaseOffset, b.LastOffset()})
		}
	}
	return rs
}
