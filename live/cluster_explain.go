package live

// ScanCluster's second round (cluster.go), for stuck partitions only:
// DescribeProducers, the coordinators' transactions and KIP-664's
// find-hanging rule.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

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
	seen := map[int64]bool{}
	for _, aps := range prods {
		for _, ap := range aps {
			if !seen[ap.ProducerID] {
				seen[ap.ProducerID] = true
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
	var (
		members map[string]map[string][]string
		shares  *shareRead
	)
	wg.Go(func() { s.offsetFetch(ctx, groups, stuck) })
	wg.Go(func() { members = s.assignedMembers(ctx, groups, stuck) })
	wg.Go(func() { shares = s.readShares(ctx, groups, stuck) })
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
		for i := range p.Groups {
			g := &p.Groups[i]
			g.Members = members[g.Group][fmt.Sprintf("%s-%d", p.Topic, p.Partition)]
		}
		p.ShareGroups = shares.place(p.Topic, p.Partition, p.LastStableOffset)
	}
}

// describeProducers asks each leader of stuck partitions for their producer
// state (KIP-664), one request per leader, and keeps the producers with a
// current transaction, by first offset: of the partitions it asked about,
// each once, and of each at most txnindex.ListCap, counted in OpenTotal
// (openOf).
func (s *scanner) describeProducers(ctx context.Context, stuck []*PartitionLag) map[*PartitionLag][]kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
	out := map[*PartitionLag][]kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}
	var mu sync.Mutex
	ids, m := byLeader(stuck)
	eachBroker(ids, func(b int32) {
		ps := m[b]
		req := kmsg.NewPtrDescribeProducersRequest()
		byTopic(ps, func(topic string) {
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic = topic
			req.Topics = append(req.Topics, rt)
		}, func(i int, p *PartitionLag) {
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, p.Partition)
		})
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
				out[p], p.OpenTotal = openOf(rp.ActiveProducers, s.o.Limit)
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
	return diagnosis.DefaultMaxTxnTimeout, "default"
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
			Coordinator: -1, StartTimestamp: -1, State: diagnosis.StateOpen,
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
				t.CoordinatorPartitions = describedPartitions(d)
				if cs, ok := describedState(d, fmt.Sprintf("DescribeTransactions on broker %d", t.Coordinator)); ok {
					t.coord = &cs
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
			t.State = diagnosis.StateExpired
			t.Reason = fmt.Sprintf("no write for %s, longer than transaction.max.timeout.ms (%s, %s), but %s: whether it hangs is unknown",
				fmtAge(t.AgeMs), txnindex.Duration(maxTxn), src, unknown)
		case age > maxTxn:
			var why string
			t.Hanging, why = w.hanging(ps, ap.ProducerID, ti)
			if t.Hanging {
				t.State = diagnosis.StateHanging
				t.Reason = fmt.Sprintf("hanging (KIP-664): no write for %s, longer than transaction.max.timeout.ms (%s, %s), and %s", fmtAge(t.AgeMs), txnindex.Duration(maxTxn), src, why)
			} else {
				t.State = diagnosis.StateExpired
				t.Reason = fmt.Sprintf("no write for %s, longer than transaction.max.timeout.ms (%s, %s), but %s", fmtAge(t.AgeMs), txnindex.Duration(maxTxn), src, why)
			}
		case t.StartTimestamp > 0 && t.TimeoutMs > 0 && now-t.StartTimestamp > int64(t.TimeoutMs):
			t.State = diagnosis.StateExpired
			t.Reason = fmt.Sprintf("started %s ago, longer than its transaction.timeout.ms (%s): the coordinator should abort it",
				fmtAge(now-t.StartTimestamp), txnindex.DurationMs(int64(t.TimeoutMs)))
		default:
			// The state (open) is printed beside the reason; the
			// reason says why.
			t.Reason = fmt.Sprintf("last write %s ago, within transaction.max.timeout.ms (%s)", fmtAge(t.AgeMs), txnindex.Duration(maxTxn))
			if unknown != "" && ti == nil {
				t.Reason += "; " + unknown
			}
		}
		t.AbortCommand = present.NewTopicCommands(s.o.Bootstrap, p.Topic, p.Partition).AbortStart(t.FirstOffset)
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
