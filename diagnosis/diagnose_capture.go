package diagnosis

import (
	"fmt"
	"time"

	"github.com/txnscope/txnscope/txnindex"
)

// A capture is evidence of a different kind than a partition directory: it
// holds what the broker *told* one consumer, not what the log holds. Two
// facts shape its diagnosis:
//
//   - The broker computes the LSO and sends it in every Fetch response (v4+,
//     whatever the isolation level: Kafka's Partition.fetchRecords fills
//     lastStableOffset from the leader's offset snapshot). That value is the
//     truth; the LSO the captured batches alone imply is not, because
//   - a read_committed fetch never returns a batch at or above the LSO
//     (LocalLog.read is bounded by the LSO for READ_COMMITTED), so the
//     transaction that pins it is never on the wire. Its first offset is
//     still known exactly: the LSO *is* the first offset of the earliest
//     open transaction (ProducerStateManager.firstUndecidedOffset).
//
// So a capture's diagnosis takes the LSO and high watermark from the last
// response, names the pinning transaction from the captured batches when a
// read_uncommitted consumer saw it, and otherwise reports it as unseen at
// the LSO, aged by how long the broker kept reporting that LSO: a lower
// bound of the transaction's age, since the LSO cannot rest on one offset
// longer than the transaction there stays open.

// CaptureReport is what the captured responses say about the partition's
// LSO over time, and how far the consumer got.
type CaptureReport struct {
	Isolation string `json:"isolation"` // the captured consumer's isolation level
	Fetches   int    `json:"fetches"`
	FirstMs   int64  `json:"first_ms"` // capture times of the first and last response; 0 if unknown
	LastMs    int64  `json:"last_ms"`
	// BrokerLSO is the LSO in the last response that carried one (-1 for
	// none); BatchesLSO the LSO the captured batches alone imply.
	BrokerLSO  int64 `json:"broker_last_stable_offset"`
	BatchesLSO int64 `json:"batches_last_stable_offset"`
	// BrokerHWM is the high watermark of the same response: the log
	// beyond the captured batches is real even though no batch shows it.
	BrokerHWM int64 `json:"broker_high_watermark"`
	// BrokerLogStart is the log start offset of the same response (Fetch
	// v5+; -1 when unknown). An LSO equal to it may be clamped: the broker
	// raises a first unstable offset below the log start to the log start
	// (UnifiedLog.maybeIncrementFirstUnstableOffset).
	BrokerLogStart int64 `json:"broker_log_start_offset"`
	// HighestPosition is the furthest fetch offset the consumer asked for.
	HighestPosition int64 `json:"highest_position"`
	// History is the responses in capture order, a run per stretch that
	// reported the same LSO and high watermark.
	History []LSORun `json:"history"`
	// Position answers "did the consumer ever get past this offset" for the
	// --position given.
	Position *PositionCheck `json:"position,omitempty"`
}

// LSORun is consecutive responses that reported the same LSO and HWM.
type LSORun struct {
	FromMs           int64                `json:"from_ms"`
	ToMs             int64                `json:"to_ms"`
	Fetches          int                  `json:"fetches"`
	FetchOffsets     txnindex.OffsetRange `json:"fetch_offsets"`
	LastStableOffset int64                `json:"last_stable_offset"`
	HighWatermark    int64                `json:"high_watermark"`
	Batches          int                  `json:"batches"` // batches returned in the run
	// Aborted is every distinct aborted-transactions entry the run's
	// responses carried; null when every list was null (read_uncommitted).
	Aborted []AbortedJSON `json:"aborted"`
}

// AbortedJSON is one aborted-transactions entry of a Fetch response.
type AbortedJSON struct {
	ProducerID  txnindex.ProducerID `json:"producer_id"`
	FirstOffset int64               `json:"first_offset"`
}

// PositionCheck says whether the consumer ever fetched beyond an offset.
type PositionCheck struct {
	Offset   int64 `json:"offset"`
	Passed   bool  `json:"passed"`
	PassedMs int64 `json:"passed_ms,omitempty"` // first response to a fetch beyond Offset
	// LastFetchOffset is where the consumer stood at the end of the capture.
	LastFetchOffset int64 `json:"last_fetch_offset"`
}

// captureEvidence summarises l.Fetches; nil for a log not from a capture.
func (l plog) captureEvidence(position int64) *CaptureReport {
	if len(l.Fetches) == 0 {
		return nil
	}
	cr := &CaptureReport{Fetches: len(l.Fetches), BrokerLSO: -1, BrokerHWM: -1, BrokerLogStart: -1, BatchesLSO: l.LastStableOffset, HighestPosition: -1, History: []LSORun{}}
	iso := txnindex.ReadUncommitted
	lastFetch := int64(-1)
	for i := range l.Fetches {
		f := &l.Fetches[i]
		r := &f.Response
		if f.Isolation == txnindex.ReadCommitted || r.AbortedTransactions != nil {
			iso = txnindex.ReadCommitted
		}
		if f.Time != 0 {
			if cr.FirstMs == 0 {
				cr.FirstMs = f.Time
			}
			cr.LastMs = f.Time
		}
		if f.Offset >= 0 {
			cr.HighestPosition = max(cr.HighestPosition, f.Offset)
			lastFetch = f.Offset
			if position >= 0 && f.Offset > position && cr.Position == nil {
				cr.Position = &PositionCheck{Offset: position, Passed: true, PassedMs: f.Time}
			}
		}
		if r.Err != txnindex.FetchOK {
			continue
		}
		if r.LastStableOffset >= 0 {
			cr.BrokerLSO, cr.BrokerHWM, cr.BrokerLogStart = r.LastStableOffset, r.HighWatermark, r.LogStartOffset
		}
		n := len(cr.History)
		if n == 0 || cr.History[n-1].LastStableOffset != r.LastStableOffset || cr.History[n-1].HighWatermark != r.HighWatermark {
			cr.History = append(cr.History, LSORun{FromMs: f.Time, LastStableOffset: r.LastStableOffset, HighWatermark: r.HighWatermark,
				FetchOffsets: txnindex.OffsetRange{From: f.Offset, To: f.Offset}})
			n++
		}
		run := &cr.History[n-1]
		run.ToMs = f.Time
		run.Fetches++
		run.Batches += len(r.Batches)
		run.FetchOffsets.From = min(run.FetchOffsets.From, f.Offset)
		run.FetchOffsets.To = max(run.FetchOffsets.To, f.Offset)
		if r.AbortedTransactions != nil && run.Aborted == nil {
			run.Aborted = []AbortedJSON{}
		}
	next:
		for _, a := range r.AbortedTransactions {
			for _, have := range run.Aborted {
				if have.ProducerID == a.ProducerID && have.FirstOffset == a.FirstOffset {
					continue next
				}
			}
			run.Aborted = append(run.Aborted, AbortedJSON(a))
		}
	}
	cr.Isolation = iso.String()
	if position >= 0 && cr.Position == nil {
		cr.Position = &PositionCheck{Offset: position}
	}
	if cr.Position != nil {
		cr.Position.LastFetchOffset = lastFetch
	}
	return cr
}

// lsoSince is when the broker started reporting the capture's final LSO
// (the start of the trailing stretch of responses that all reported it),
// and the high watermark at that moment; ok is false without timestamps.
func (cr *CaptureReport) lsoSince() (ms, hwm int64, ok bool) {
	since, hw := int64(0), int64(-1)
	for i := len(cr.History) - 1; i >= 0 && cr.History[i].LastStableOffset == cr.BrokerLSO; i-- {
		since, hw = cr.History[i].FromMs, cr.History[i].HighWatermark
	}
	return since, hw, since != 0
}

// unseenPinner is the report of the transaction that pins the broker's LSO
// when no captured batch belongs to it: a read_committed consumer never
// receives it. What is known: it starts exactly at the LSO, and it has
// been open at least as long as the broker kept reporting that LSO.
func (l plog) unseenPinner(cr *CaptureReport, hwm, now int64, o Options, bootstrap string) OpenTxnReport {
	lso := cr.BrokerLSO
	r := OpenTxnReport{ProducerID: -1, ProducerEpoch: -1, FirstOffset: lso, LastOffset: -1, Batches: -1, Records: -1, Bytes: -1,
		FirstTimestamp: -1, LastTimestamp: -1, PinsLSO: true, Unseen: true}
	since, hwmThen, timed := cr.lsoSince()
	if timed {
		r.AgeMs = max(now-since, 0)
	}
	what := fmt.Sprintf("a transaction starts at offset %d (the LSO the broker reported); this %s capture holds none of its batches", lso, cr.Isolation)
	if cr.Isolation == txnindex.ReadCommitted.String() {
		what += ", as a read_committed fetch never returns batches at or above the LSO"
	}
	movedOn := hwm > hwmThen
	age := time.Duration(r.AgeMs) * time.Millisecond
	switch {
	case !timed:
		r.State = StateOpen
		r.Reason = what + "; the capture has no timestamps, so its age is unknown"
	case age > o.MaxTxnTimeout && movedOn:
		r.State = StateHanging
		r.Reason = fmt.Sprintf("%s; the broker reported that LSO for %s, longer than transaction.max.timeout.ms (%s), while the high watermark moved from %d to %d: no transaction may stay open that long, the coordinator will not end it (KIP-664)",
			what, fmtDur(r.AgeMs), txnindex.Duration(o.MaxTxnTimeout), hwmThen, hwm)
	case age > o.TxnTimeout:
		r.State = StateExpired
		r.Reason = fmt.Sprintf("%s; the broker reported that LSO for %s, longer than transaction.timeout.ms (%s): the coordinator should abort it",
			what, fmtDur(r.AgeMs), txnindex.Duration(o.TxnTimeout))
	default:
		r.State = StateOpen
		r.Reason = fmt.Sprintf("%s; the broker reported that LSO for %s (at least that old), within transaction.timeout.ms (%s)", what, fmtDur(r.AgeMs), txnindex.Duration(o.TxnTimeout))
	}
	r.Reason += "; to name its producer, capture a read_uncommitted consumer or run kafka-transactions.sh describe-producers"
	// kafka-transactions.sh resolves the producer of --start-offset itself,
	// through DescribeProducers' currentTxnStartOffset.
	r.Remedy = l.remedy(bootstrap)
	r.Remedy.Abort, r.Remedy.StartOffset = true, lso
	if cr.BrokerLogStart > 0 && lso == cr.BrokerLogStart {
		// The LSO sits on the log start: the broker clamps a first
		// unstable offset below the log start up to it, so the
		// transaction may have begun before it, and abort --start-offset
		// must name DescribeProducers' CurrentTransactionStartOffset,
		// which may not be the LSO (no transaction need start there).
		r.MayHaveBegunBeforeLogStart = true
		r.StartEvidence = fmt.Sprintf("the LSO %d equals the log start offset the broker reported: the broker raises the first unstable offset to the log start, so this transaction may have begun before it (retention deleted the start); describe-producers shows its CurrentTransactionStartOffset", lso)
		r.Remedy.StartUnknown = true
	}
	// None of its batches was captured: what to print is somewhere
	// between the LSO and the high watermark.
	r.Discards = Discards{Records: -1, Ranges: []txnindex.OffsetRange{}}
	r.Remedy.PrintUnseen, r.Remedy.PrintCount = true, max(hwm-lso, 1)
	return r
}
