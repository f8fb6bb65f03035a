package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// describeProducers asks the partition leader for its producer state
// (KIP-664's DescribeProducers, answered from UnifiedLog.activeProducers).
func (w *Watcher) describeProducers(ctx context.Context, p *partState) ([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, error) {
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = w.cfg.Topic, []int32{p.id}
	req.Topics = append(req.Topics, rt)
	kresp, err := w.cl.Broker(int(p.leader)).Request(ctx, req)
	if err != nil {
		return nil, w.classify(err, "DescribeProducers")
	}
	for _, t := range kresp.(*kmsg.DescribeProducersResponse).Topics {
		for _, rp := range t.Partitions {
			if rp.Partition == p.id {
				if err := w.partErr(rp.ErrorCode, "DescribeProducers", p.id); err != nil {
					return nil, err
				}
				return rp.ActiveProducers, nil
			}
		}
	}
	return nil, fmt.Errorf("live: DescribeProducers response lacks partition %d", p.id)
}

// txnInfo is what the coordinator says about one transactional id.
type txnInfo struct {
	id      string
	state   string
	desc    *kmsg.DescribeTransactionsResponseTransactionState
	listed  bool
	descErr error
}

// coordinators maps producer ids to transactional ids and descriptions.
// ListTransactions goes to every broker because each lists only the
// transactions it coordinates; DescribeTransactions then goes to the broker
// that listed the id, which is its coordinator, so no FindCoordinator is
// needed (it is not on the read-only list).
func (w *Watcher) coordinators(ctx context.Context, pids []int64) (map[int64]*txnInfo, []string, error) {
	out := map[int64]*txnInfo{}
	var notes []string
	for _, b := range w.cl.DiscoveredBrokers() {
		req := kmsg.NewPtrListTransactionsRequest()
		req.ProducerIDFilters = pids
		kresp, err := b.Request(ctx, req)
		if err != nil {
			return nil, nil, w.classify(err, "ListTransactions")
		}
		resp := kresp.(*kmsg.ListTransactionsResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			notes = append(notes, fmt.Sprintf("ListTransactions: %v", err))
			continue
		}
		var ids []string
		for _, ts := range resp.TransactionStates {
			if !slices.Contains(pids, ts.ProducerID) {
				continue // an old broker ignoring the filter
			}
			out[ts.ProducerID] = &txnInfo{id: ts.TransactionalID, state: ts.TransactionState, listed: true}
			ids = append(ids, ts.TransactionalID)
		}
		if len(ids) == 0 {
			continue
		}
		dreq := kmsg.NewPtrDescribeTransactionsRequest()
		dreq.TransactionalIDs = ids
		dk, err := b.Request(ctx, dreq)
		if err != nil {
			return nil, nil, w.classify(err, "DescribeTransactions")
		}
		for i := range dk.(*kmsg.DescribeTransactionsResponse).TransactionStates {
			d := &dk.(*kmsg.DescribeTransactionsResponse).TransactionStates[i]
			for _, ti := range out {
				if ti.id != d.TransactionalID {
					continue
				}
				if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
					ti.descErr = err
					if errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
						notes = append(notes, fmt.Sprintf("DescribeTransactions %q: not authorized (DESCRIBE on the transactional id)", d.TransactionalID))
					}
					continue
				}
				ti.desc, ti.state = d, d.State
			}
		}
	}
	return out, notes, nil
}

// coordinator fills v.Open from the engine's open transactions joined with
// DescribeProducers and the coordinators, and applies KIP-664's
// find-hanging rule (kafka-internals.md §6.2): a producer with a current
// transaction whose last write is older than transaction.max.timeout.ms is
// hanging if ListTransactions does not know its id, DescribeTransactions
// has no description, or the description is for another producer or lacks
// this partition: the coordinator will then never write its marker here.
//
// prods and perr are this poll's DescribeProducers answer (pollOnce); perr
// is nil or ErrDenied.
func (w *Watcher) coordinator(ctx context.Context, p *partState, v *PartitionView, u *Update,
	prods []kmsg.DescribeProducersResponseTopicPartitionActiveProducer, perr error) error {
	known := perr == nil
	if perr != nil {
		u.Notes = append(u.Notes, perr.Error()+": no producer or coordinator state; open transactions are judged from the log alone")
	}
	var err error
	byPID, pids := openPIDs(prods, v.Diagnosis)
	var coord map[int64]*txnInfo
	if len(pids) > 0 {
		var notes []string
		coord, notes, err = w.coordinators(ctx, pids)
		if err != nil {
			if !errors.Is(err, ErrDenied) {
				return err
			}
			notes = append(notes, err.Error())
		}
		u.Notes = append(u.Notes, notes...)
	}
	now := w.cfg.Now()
	seen := map[int64]bool{}
	add := func(o OpenTxn, logReason string) {
		ap, ok := byPID[o.ProducerID]
		if ok {
			seen[o.ProducerID] = true
			o.LastTimestamp = ap.LastTimestamp
			if o.FirstOffset < 0 {
				o.FirstOffset = ap.CurrentTxnStartOffset
			}
		}
		o.AgeMs = max(now.UnixMilli()-o.LastTimestamp, 0)
		if ti := coord[o.ProducerID]; ti != nil {
			o.TransactionalID, o.CoordinatorState = ti.id, ti.state
			if ti.desc != nil {
				for _, t := range ti.desc.Topics {
					for _, part := range t.Partitions {
						o.CoordinatorTopic = append(o.CoordinatorTopic, fmt.Sprintf("%s-%d", t.Topic, part))
					}
				}
			}
		}
		if ok && time.Duration(o.AgeMs)*time.Millisecond > w.maxTxn {
			o.Hanging, o.Reason = w.hanging(p, o.ProducerID, coord[o.ProducerID])
			if !o.Hanging {
				o.Reason = fmt.Sprintf("no write for %s, longer than transaction.max.timeout.ms (%s, %s), but %s", fmtAge(o.AgeMs), txnindex.Duration(w.maxTxn), w.maxTxnSrc, o.Reason)
			} else {
				o.Reason = fmt.Sprintf("hanging (KIP-664): no write for %s, longer than transaction.max.timeout.ms (%s, %s), and %s", fmtAge(o.AgeMs), txnindex.Duration(w.maxTxn), w.maxTxnSrc, o.Reason)
			}
		} else if ok {
			o.Reason = fmt.Sprintf("open, last write %s ago, within transaction.max.timeout.ms (%s)", fmtAge(o.AgeMs), txnindex.Duration(w.maxTxn))
		} else if !known {
			o.Hanging, o.Reason = o.EngineState == string(diagnosis.StateHanging), logReason+" (from the log alone)"
			o.Late = o.EngineState == string(diagnosis.StateLate)
		} else {
			o.Reason = "open in the log; DescribeProducers did not list it (it may have just ended)"
		}
		o.AbortCommand = present.NewTopicCommands(w.Bootstrap(), w.cfg.Topic, p.id).AbortStart(o.FirstOffset)
		v.Open = append(v.Open, o)
	}
	if d := v.Diagnosis; d != nil {
		for _, t := range d.OpenTransactions {
			add(OpenTxn{ProducerID: int64(t.ProducerID), ProducerEpoch: t.ProducerEpoch, FirstOffset: t.FirstOffset, LastOffset: t.LastOffset,
				LastTimestamp: t.LastTimestamp, EngineState: string(t.State), PinsLSO: t.PinsLSO}, t.Reason)
		}
	}
	// Producers the broker reports open that the engine's window does not
	// show (they began after the HWM the view was built at, or before
	// the window without a seed).
	for _, pid := range pids {
		if !seen[pid] {
			ap := byPID[pid]
			add(OpenTxn{ProducerID: pid, ProducerEpoch: int16(ap.ProducerEpoch), FirstOffset: ap.CurrentTxnStartOffset, LastOffset: -1, EngineState: "not in window"}, "")
		}
	}
	// After the EngineStates above were taken: they are the log's alone.
	w.joinDiagnosis(v.Diagnosis, p, byPID, coord)
	return nil
}

// hanging applies the coordinator half of find-hanging and says why.
func (w *Watcher) hanging(p *partState, pid int64, ti *txnInfo) (bool, string) {
	switch {
	case ti == nil:
		return true, fmt.Sprintf("no coordinator lists producer %d (ListTransactions): nothing will ever end its transaction", pid)
	case ti.desc == nil:
		return true, fmt.Sprintf("the coordinator has no description of %q (DescribeTransactions%s)", ti.id, errSuffix(ti.descErr))
	case ti.desc.ProducerID != pid:
		return true, fmt.Sprintf("%q now belongs to producer %d, not %d: its coordinator will not end this one", ti.id, ti.desc.ProducerID, pid)
	}
	for _, t := range ti.desc.Topics {
		if t.Topic == w.cfg.Topic && slices.Contains(t.Partitions, p.id) {
			return false, fmt.Sprintf("the coordinator of %q still tracks %s-%d (state %s) and should abort it", ti.id, w.cfg.Topic, p.id, ti.state)
		}
	}
	return true, fmt.Sprintf("the coordinator's transaction for %q (state %s) does not include %s-%d: it will never write a marker there", ti.id, ti.state, w.cfg.Topic, p.id)
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// fmtAge is an age in the one duration format (txnindex.Duration).
func fmtAge(ms int64) string { return txnindex.DurationMs(ms) }

// describedPartitions are the partitions a DescribeTransactions answer
// says the transaction includes (its topics and their partitions).
func describedPartitions(d *kmsg.DescribeTransactionsResponseTransactionState) []txnindex.TopicPartition {
	var out []txnindex.TopicPartition
	for _, t := range d.Topics {
		for _, p := range t.Partitions {
			out = append(out, txnindex.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	return out
}

// seedsFrom are the transactions DescribeProducers reports open from before
// start, with what broker recovery keeps of a snapshot entry
// (ProducerStateManager.loadProducerEntry): the first offset
// (currentTxnFirstOffset), the epoch, the last write time and the
// coordinator epoch. DescribeProducers answers them from the same
// ProducerStateEntry (UnifiedLog.activeProducers).
func seedsFrom(prods []kmsg.DescribeProducersResponseTopicPartitionActiveProducer, start int64) []txnindex.OngoingTxn {
	var out []txnindex.OngoingTxn
	for _, ap := range prods {
		if ap.CurrentTxnStartOffset >= 0 && ap.CurrentTxnStartOffset < start {
			out = append(out, txnindex.OngoingTxn{ProducerID: txnindex.ProducerID(ap.ProducerID), ProducerEpoch: int16(ap.ProducerEpoch),
				FirstOffset: ap.CurrentTxnStartOffset, LastTimestamp: ap.LastTimestamp, CoordinatorEpoch: ap.CoordinatorEpoch})
		}
	}
	return out
}

// producerState is the leader's DescribeProducers answer in the shape of a
// producer snapshot, the evidence the diagnosis takes from one: every
// producer's epoch, last write time and coordinator epoch (the one the
// producer-id form of an abort must carry). nil when it could not be read.
// A window that does not start at the log start says so (Window), so that
// a transaction begun before it reads as not read, not deleted.
func producerState(p *partState, prods []kmsg.DescribeProducersResponseTopicPartitionActiveProducer, err error) *txnindex.SnapshotInfo {
	if err != nil {
		return nil
	}
	s := &txnindex.SnapshotInfo{Name: fmt.Sprintf("DescribeProducers@%d", p.leader), Offset: -1, Window: !p.atLogStart,
		Source: fmt.Sprintf("DescribeProducers answer of broker %d", p.leader), Producers: map[txnindex.ProducerID]txnindex.SnapshotProducer{}}
	for _, ap := range prods {
		// LastOffset is not in the answer (only the last sequence): -1.
		s.Producers[txnindex.ProducerID(ap.ProducerID)] = txnindex.SnapshotProducer{Epoch: int16(ap.ProducerEpoch), LastOffset: -1,
			Timestamp: ap.LastTimestamp, CoordinatorEpoch: ap.CoordinatorEpoch, CurrentTxnFirstOffset: ap.CurrentTxnStartOffset}
	}
	return s
}

// describedState is a DescribeTransactions answer as the coordinator state
// txnindex's Match judges, as a log dir's __transaction_state value is;
// false for a state name Kafka does not define (claim nothing).
func describedState(d *kmsg.DescribeTransactionsResponseTransactionState, source string) (txnindex.TxnCoordinatorState, bool) {
	st, ok := txnindex.ParseTxnStatus(d.State)
	if !ok {
		return txnindex.TxnCoordinatorState{}, false
	}
	cs := txnindex.TxnCoordinatorState{TransactionalID: d.TransactionalID, ProducerID: txnindex.ProducerID(d.ProducerID),
		ProducerEpoch: d.ProducerEpoch, PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, State: st,
		TimeoutMs: d.TimeoutMillis, StartTimestamp: d.StartTimestamp, Source: source, Offset: -1,
		Partitions: describedPartitions(d)}
	cs.SortPartitions()
	return cs, true
}

// joinDiagnosis judges the diagnosis's open transactions by their
// coordinators' word as a log dir's join does (txnindex Match on the
// DescribeTransactions answers), so that the live diagnosis names the
// transactional id, the coordinator state and the KIP-664 rule in the
// words of an offline one. Only transactions DescribeProducers reports
// open are judged. The partition and the coordinator are read at two
// moments, so a transaction that ended between the reads would look
// abandoned (its coordinator already Complete*): KIP-664's find-hanging
// therefore asks only about transactions idle past
// transaction.max.timeout.ms, and a younger one gets its transactional id
// and state here, not a "hanging" verdict.
func (w *Watcher) joinDiagnosis(d *diagnosis.Diagnosis, p *partState, open map[int64]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, coord map[int64]*txnInfo) {
	if d == nil || len(coord) == 0 {
		return
	}
	var states []txnindex.TxnCoordinatorState
	for pid, ti := range coord {
		if errors.Is(ti.descErr, kerr.TransactionalIDNotFound) {
			// ListTransactions listed the id for this producer, and its
			// coordinator answers that it does not know it: what the
			// broker answers for an expired (Dead) id, KIP-664's step 2.
			states = append(states, txnindex.TxnCoordinatorState{TransactionalID: ti.id, ProducerID: txnindex.ProducerID(pid),
				ProducerEpoch: -1, PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, State: txnindex.TxnStatusDead,
				StartTimestamp: -1, Source: "DescribeTransactions (TRANSACTIONAL_ID_NOT_FOUND)", Offset: -1})
			continue
		}
		if ti.desc == nil || ti.descErr != nil {
			continue
		}
		if cs, ok := describedState(ti.desc, "DescribeTransactions"); ok && !slices.ContainsFunc(states, func(s txnindex.TxnCoordinatorState) bool { return s.TransactionalID == cs.TransactionalID }) {
			states = append(states, cs)
		}
	}
	// Not Complete: an id the coordinators did not describe is the
	// watcher's rule's to judge (hanging), not evidence here.
	cs := txnindex.NewTxnCoordinators(states, false)
	for i := range d.OpenTransactions {
		r := &d.OpenTransactions[i]
		if _, ok := open[int64(r.ProducerID)]; !ok || r.Unseen {
			continue
		}
		m := cs.Match(w.cfg.Topic, p.id, r.ProducerID, r.ProducerEpoch)
		if !m.Known || m.Coordinator == nil {
			continue
		}
		joinLive(r, m, w.maxTxn)
	}
}

// joinLive applies a coordinator match read live to r as a log dir's join
// does (txnindex's JoinMatch), except that a "hanging" verdict is not
// applied to a transaction younger than maxTxn: the partition was read
// before the coordinator, and such a transaction may have ended in
// between (find-hanging asks only about older ones).
func joinLive(r *diagnosis.OpenTxnReport, m txnindex.CoordinatorMatch, maxTxn time.Duration) {
	if m.Known && m.Hanging && m.Coordinator != nil && time.Duration(r.AgeMs)*time.Millisecond <= maxTxn {
		r.TransactionalID, r.CoordinatorState, r.CoordinatorSource = m.TransactionalID, m.Coordinator.State.String(), m.Coordinator.Source
		for _, tp := range m.Coordinator.Partitions {
			r.CoordinatorPartitions = append(r.CoordinatorPartitions, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
		}
		r.Reason += fmt.Sprintf("; the coordinator then said %s, but it was read after the partition and the transaction is younger than transaction.max.timeout.ms (%s), so it may have ended in between: not judged hanging (find-hanging asks only about older ones)",
			m.Coordinator.State, maxTxn)
		return
	}
	r.JoinMatch(m)
}
