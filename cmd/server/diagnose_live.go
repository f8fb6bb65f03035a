package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/txnindex"
)

// diagnoseLive answers `diagnose --bootstrap HOST --topic T --partition P`
// without a PATH from the cluster itself, strictly read-only: the cluster
// scan (live.ScanCluster) reads the offsets (ListOffsets), the open
// transactions (DescribeProducers), their coordinators (ListTransactions,
// DescribeTransactions) and the groups' committed offsets (ListGroups,
// OffsetFetch as an admin, no group joined), and the coordinators' word is
// then judged by the same KIP-664 rules as a log dir's __transaction_state.
func diagnoseLive(ctx context.Context, bootstrap, topic string, partition int, now time.Time, maxTxn time.Duration) (*txnindex.Diagnosis, error) {
	if topic == "" || partition < 0 {
		return nil, usagef("diagnose --bootstrap without PATH needs --topic and --partition")
	}
	c, err := live.NewCluster(live.Config{Brokers: strings.Split(bootstrap, ",")})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	scan, err := c.Scan(ctx, live.ScanOptions{Topics: regexp.MustCompile("^" + regexp.QuoteMeta(topic) + "$"),
		MaxTxnTimeout: maxTxn, Now: func() time.Time { return now }, Bootstrap: bootstrap})
	if err != nil {
		return nil, err
	}
	for i := range scan.Partitions {
		if p := &scan.Partitions[i]; p.Topic == topic && int(p.Partition) == partition {
			if p.Err != "" {
				return nil, fmt.Errorf("%s-%d: %s", topic, partition, p.Err)
			}
			return liveDiagnosis(p, now), nil
		}
	}
	return nil, fmt.Errorf("%s-%d is not in the cluster's Metadata", topic, partition)
}

// liveDiagnosis is a cluster scan's partition in diagnose's shape.
func liveDiagnosis(p *live.PartitionLag, now time.Time) *txnindex.Diagnosis {
	d := &txnindex.Diagnosis{Topic: p.Topic, Partition: p.Partition, LogStartOffset: -1, LogEndOffset: p.HighWatermark,
		HighWatermark: p.HighWatermark, HighWatermarkSource: "ListOffsets", LastStableOffset: p.LastStableOffset,
		LastStableOffsetSource: "ListOffsets", LSOLagOffsets: p.LSOLagOffsets, LSOLagMs: p.LSOLagMs, Now: now.UnixMilli(),
		OpenTransactions: []txnindex.OpenTxnReport{}}
	for _, t := range p.Open {
		r := txnindex.OpenTxnReport{ProducerID: txnindex.ProducerID(t.ProducerID), ProducerEpoch: t.ProducerEpoch,
			FirstOffset: t.FirstOffset, LastOffset: -1, Batches: -1, Records: -1, Bytes: -1, FirstTimestamp: t.StartTimestamp,
			LastTimestamp: t.LastTimestamp, AgeMs: t.AgeMs, State: t.State, Reason: t.Reason, AbortCommand: t.AbortCommand,
			PinsLSO: t.PinsLSO, Discards: txnindex.Discards{Records: -1, Ranges: []txnindex.OffsetRange{}}}
		judgeLiveCoordinator(&r, p, &t)
		d.OpenTransactions = append(d.OpenTransactions, r)
	}
	for i := range d.OpenTransactions {
		if d.OpenTransactions[i].PinsLSO && d.LSOLagOffsets > 0 {
			d.PinnedBy = &d.OpenTransactions[i]
			break
		}
	}
	// The scan lists the groups at or below the LSO (OffsetFetch); their
	// records to the LSO are not counted (no log is read).
	d.ConsumerGroups, d.GroupsSource = []txnindex.GroupPosition{}, "OffsetFetch"
	for _, g := range p.Groups {
		gp := txnindex.GroupPosition{GroupOffset: txnindex.GroupOffset{Group: g.Group, Topic: p.Topic, Partition: p.Partition,
			Offset: g.Committed, LeaderEpoch: -1, CommitTimestamp: -1, ExpireTimestamp: -1, ProducerID: -1,
			Source: "OffsetFetch", RecordOffset: -1}, BehindLSO: g.BehindLSO, Blocked: g.Blocked, RecordsToLSO: -1}
		if g.Blocked {
			gp.RecordsToLSO = 0
		} else {
			gp.OffsetsToLSO = p.LastStableOffset - g.Committed
		}
		d.ConsumerGroups = append(d.ConsumerGroups, gp)
	}
	return d
}

// judgeLiveCoordinator applies KIP-664's rules to what DescribeTransactions
// said, whatever the transaction's age, as a log dir's join does: the
// described state and partitions become a coordinator state for
// txnindex's Match.
func judgeLiveCoordinator(r *txnindex.OpenTxnReport, p *live.PartitionLag, t *live.ClusterTxn) {
	r.TransactionalID, r.CoordinatorState, r.CoordinatorPartitions = t.TransactionalID, t.CoordinatorState, t.CoordinatorPartitions
	if r.State == txnindex.StateHanging {
		r.HangingRule = txnindex.RuleAge
	}
	st, ok := txnindex.ParseTxnStatus(t.CoordinatorState)
	if t.TransactionalID == "" || !ok || t.StartTimestamp < 0 && !st.Complete() && st != txnindex.TxnStatusEmpty && st != txnindex.TxnStatusDead {
		// Not described (or not listed): the scan's own judgement stands.
		return
	}
	r.CoordinatorSource = fmt.Sprintf("DescribeTransactions on broker %d", t.Coordinator)
	cs := txnindex.TxnCoordinatorState{TransactionalID: t.TransactionalID, ProducerID: txnindex.ProducerID(t.ProducerID),
		ProducerEpoch: t.ProducerEpoch, PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, State: st,
		TimeoutMs: t.TimeoutMs, StartTimestamp: t.StartTimestamp, Source: "DescribeTransactions", Offset: -1}
	for _, s := range t.CoordinatorPartitions {
		i := strings.LastIndexByte(s, '-')
		n, err := strconv.ParseInt(s[i+1:], 10, 32)
		if i < 0 || err != nil {
			return // not a name the scan wrote: claim nothing
		}
		cs.Partitions = append(cs.Partitions, txnindex.TopicPartition{Topic: s[:i], Partition: int32(n)})
	}
	cs.SortPartitions()
	m := txnindex.NewTxnCoordinators([]txnindex.TxnCoordinatorState{cs}, false).Match(p.Topic, p.Partition, r.ProducerID, r.ProducerEpoch)
	r.HangingRule = m.Rule
	if !m.Known {
		return
	}
	switch {
	case m.Hanging:
		r.State = txnindex.StateHanging
		r.Reason = fmt.Sprintf("hanging whatever its age (KIP-664 rule %s): %s; last write %s ago", m.Rule, m.Reason, time.Duration(r.AgeMs)*time.Millisecond)
	default:
		r.Reason += fmt.Sprintf("; not hanging (KIP-664 rule %s): %s", m.Rule, m.Reason)
	}
}

// liveRunbook is the runbook of a diagnosis read from a cluster: no log
// was read, so there are no batch counts or discard ranges to print.
func liveRunbook(d *txnindex.Diagnosis) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s-%d (read from the cluster)\n", d.Topic, d.Partition)
	fmt.Fprintf(&sb, "  high watermark %d, last stable offset %d (ListOffsets)\n", d.HighWatermark, d.LastStableOffset)
	if p := d.PinnedBy; p != nil {
		fmt.Fprintf(&sb, "  STUCK: the LSO is %d offsets (%s) behind the high watermark, pinned by producer %d epoch %d's transaction from offset %d (%s)\n",
			d.LSOLagOffsets, time.Duration(d.LSOLagMs)*time.Millisecond, p.ProducerID, p.ProducerEpoch, p.FirstOffset, p.State)
	} else {
		sb.WriteString("  clear: no open transaction holds the LSO below the high watermark\n")
	}
	sb.WriteString(d.JoinRunbook())
	for i, t := range d.OpenTransactions {
		fmt.Fprintf(&sb, "\n  open transaction %d: producer %d epoch %d, from offset %d, last write %s ago\n",
			i+1, t.ProducerID, t.ProducerEpoch, t.FirstOffset, (time.Duration(t.AgeMs) * time.Millisecond).Round(time.Second))
		fmt.Fprintf(&sb, "    %s: %s\n", t.State, t.Reason)
		sb.WriteString(t.CoordinatorRunbook())
		fmt.Fprintf(&sb, "    to end it:  %s\n", t.AbortCommand)
	}
	return sb.String()
}
