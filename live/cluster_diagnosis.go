package live

// One partition of a cluster scan in diagnose's shape (diagnosis.Diagnosis):
// `diagnose --bootstrap H --topic T --partition P` without a PATH reads the
// partition from the cluster alone, and the coordinators' word is judged by
// the same KIP-664 rules (txnindex.TxnCoordinators.Match) as a log dir's
// __transaction_state.

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// DiagnosePartition scans the cluster for topic alone and returns
// partition's diagnosis (ScanCluster, strictly read-only: ListOffsets,
// DescribeProducers, ListTransactions, DescribeTransactions, ListGroups,
// OffsetFetch as an admin, ConsumerGroupDescribe, DescribeShareGroupOffsets).
// o.Topics is replaced by the topic.
func (c *Cluster) DiagnosePartition(ctx context.Context, topic string, partition int32, o ScanOptions) (*diagnosis.Diagnosis, error) {
	o.Topics = regexp.MustCompile("^" + regexp.QuoteMeta(topic) + "$")
	s, err := c.Scan(ctx, o)
	if err != nil {
		return nil, err
	}
	for i := range s.Partitions {
		if p := &s.Partitions[i]; p.Topic == topic && p.Partition == partition {
			if p.Err != "" {
				return nil, fmt.Errorf("%s-%d: %s", topic, partition, p.Err)
			}
			return s.Diagnosis(p), nil
		}
	}
	return nil, fmt.Errorf("%s-%d is not in the cluster's Metadata", topic, partition)
}

// Diagnosis is p, a partition of the scan, in diagnose's shape. No log is
// read, so batch and record counts, discards and the log start are -1; the
// groups come with offsets to the LSO, not records.
func (s *ClusterScan) Diagnosis(p *PartitionLag) *diagnosis.Diagnosis {
	d := &diagnosis.Diagnosis{Topic: p.Topic, Partition: p.Partition, LogStartOffset: -1, LogEndOffset: p.HighWatermark,
		HighWatermark: p.HighWatermark, HighWatermarkSource: "ListOffsets", LastStableOffset: p.LastStableOffset,
		LastStableOffsetSource: "ListOffsets", LSOLagOffsets: p.LSOLagOffsets, LSOLagMs: p.LSOLagMs, Now: s.Time.UnixMilli(),
		OpenTransactions: []diagnosis.OpenTxnReport{}, Unreplicated: []diagnosis.OpenTxnReport{}}
	for i := range p.Open {
		d.OpenTransactions = append(d.OpenTransactions, s.openReport(p, &p.Open[i]))
	}
	d.OpenTransactionsTotal = max(p.OpenTotal, len(p.Open))
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
		d.ConsumerGroups = append(d.ConsumerGroups, g.position(p))
	}
	d.ConsumerGroupsTotal = max(p.GroupsTotal, len(p.Groups))
	if p.ShareGroups != nil {
		d.ShareGroups, d.ShareGroupsSource = p.ShareGroups, "DescribeShareGroupOffsets"
	}
	d.GroupsByKind = txnindex.GroupsByKind(d.ConsumerGroups, d.ShareGroups)
	if d.ShareGroups != nil {
		d.ShareGroups, d.ShareGroupsTotal = txnindex.CapList(d.ShareGroups, txnindex.ListLimit(s.limit))
	}
	txnindex.CapKinds(d.GroupsByKind, txnindex.ListLimit(s.limit))
	return d
}

// position is the group in txnindex's shape.
func (g *GroupBehind) position(p *PartitionLag) txnindex.GroupPosition {
	gp := txnindex.GroupPosition{GroupOffset: txnindex.GroupOffset{Group: g.Group, Topic: p.Topic, Partition: p.Partition,
		Offset: g.Committed, LeaderEpoch: -1, CommitTimestamp: -1, ExpireTimestamp: -1, ProducerID: -1,
		Source: fmt.Sprintf("OffsetFetch on broker %d", g.Coordinator), RecordOffset: -1, Kind: g.Kind}, BehindLSO: g.BehindLSO, Blocked: g.Blocked, RecordsToLSO: -1}
	if g.Blocked {
		gp.RecordsToLSO = 0
	} else {
		gp.OffsetsToLSO = p.LastStableOffset - g.Committed
	}
	return gp
}

// openReport is one open transaction of p as diagnose reports it, with the
// evidence DescribeProducers gives: the last write time (the age the scan
// judged by) and the producer's coordinator epoch, which the producer-id
// form of the abort must carry (the broker fences a lower one).
func (s *ClusterScan) openReport(p *PartitionLag, t *ClusterTxn) diagnosis.OpenTxnReport {
	r := diagnosis.OpenTxnReport{ProducerID: txnindex.ProducerID(t.ProducerID), ProducerEpoch: t.ProducerEpoch,
		FirstOffset: t.FirstOffset, LastOffset: -1, Batches: -1, Records: -1, Bytes: -1, FirstTimestamp: t.StartTimestamp,
		LastTimestamp: t.LastTimestamp, AgeMs: t.AgeMs, State: t.State, Reason: t.Reason, AbortCommand: t.AbortCommand,
		PinsLSO: t.PinsLSO, Discards: diagnosis.Discards{Records: -1, Ranges: []txnindex.OffsetRange{}}}
	r.CoordinatorEpoch, r.CoordinatorEpochSource = producerCoordinatorEpoch(t.CoordinatorEpoch, p.Leader)
	r.AbortByProducerCommand = present.NewTopicCommands(s.Bootstrap, p.Topic, p.Partition).AbortProducer(t.ProducerID, t.ProducerEpoch, r.CoordinatorEpoch)
	judgeCoordinator(&r, p, t, time.Duration(s.MaxTxnTimeoutMs)*time.Millisecond)
	return r
}

// producerCoordinatorEpoch is the coordinator epoch DescribeProducers
// reported for a producer (ProducerStateEntry.coordinatorEpoch, of its
// last marker on the partition, UnifiedLog.activeProducers) and its
// evidence; -1 (none yet) becomes kafka-transactions.sh's 0.
func producerCoordinatorEpoch(ce int32, leader int32) (int32, string) {
	if ce < 0 {
		return 0, fmt.Sprintf("none: DescribeProducers on broker %d knows no marker of this producer; 0, as kafka-transactions.sh uses", leader)
	}
	return ce, fmt.Sprintf("DescribeProducers on broker %d (the leader's producer state, which its .snapshot files persist)", leader)
}

// judgeCoordinator applies KIP-664's rules to what DescribeTransactions
// said, as a log dir's join does (txnindex's Match, through joinLive: a
// transaction younger than transaction.max.timeout.ms is not judged
// hanging by a coordinator read after the partition). Where the
// coordinator did not describe the transaction, the scan's own judgement
// (judge) stands.
func judgeCoordinator(r *diagnosis.OpenTxnReport, p *PartitionLag, t *ClusterTxn, maxTxn time.Duration) {
	r.TransactionalID, r.CoordinatorState = t.TransactionalID, t.CoordinatorState
	for _, tp := range t.CoordinatorPartitions {
		r.CoordinatorPartitions = append(r.CoordinatorPartitions, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
	}
	if r.State == diagnosis.StateHanging {
		r.HangingRule = txnindex.RuleAge
	}
	if t.coord == nil {
		return
	}
	r.CoordinatorPartitions = nil // JoinMatch writes them from the described state
	m := txnindex.NewTxnCoordinators([]txnindex.TxnCoordinatorState{*t.coord}, false).Match(p.Topic, p.Partition, r.ProducerID, r.ProducerEpoch)
	joinLive(r, m, maxTxn)
}

// Runbook is the text of a diagnosis DiagnosePartition read from a cluster
// (`diagnose --bootstrap --topic --partition` without a PATH): no log was
// read, so it has no batch counts or discard ranges, only what ListOffsets,
// DescribeProducers and the coordinators said.
func Runbook(d *diagnosis.Diagnosis) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (read from the cluster)\n", txnindex.PartitionName(d.Topic, d.Partition))
	fmt.Fprintf(&sb, "  high watermark %d, last stable offset %d (ListOffsets)\n", d.HighWatermark, d.LastStableOffset)
	if p := d.PinnedBy; p != nil {
		fmt.Fprintf(&sb, "  STUCK: the LSO is %s (%s) behind the high watermark, pinned by producer %d epoch %d's transaction from offset %d (%s)\n",
			txnindex.Plural(d.LSOLagOffsets, "offset", "offsets"), txnindex.DurationMs(d.LSOLagMs), p.ProducerID, p.ProducerEpoch, p.FirstOffset, p.State)
	} else {
		sb.WriteString("  clear: no open transaction holds the LSO below the high watermark\n")
	}
	sb.WriteString(present.JoinRunbook(d))
	for i, t := range d.OpenTransactions {
		fmt.Fprintf(&sb, "\n  open transaction %d: producer %d epoch %d, from offset %d, last write %s ago\n",
			i+1, t.ProducerID, t.ProducerEpoch, t.FirstOffset, txnindex.DurationMs(t.AgeMs))
		fmt.Fprintf(&sb, "    %s: %s\n", t.State, t.Reason)
		sb.WriteString(present.CoordinatorLine(&t))
		fmt.Fprintf(&sb, "    to end it: %s\n", t.AbortCommand)
		if t.AbortByProducerCommand != "" {
			fmt.Fprintf(&sb, "    or, naming the producer: %s\n", t.AbortByProducerCommand)
			fmt.Fprintf(&sb, "      (coordinator epoch %d, the largest known; evidence: %s)\n", t.CoordinatorEpoch, t.CoordinatorEpochSource)
		}
	}
	if n := txnindex.More(d.OpenTransactions, d.OpenTransactionsTotal); n > 0 {
		fmt.Fprintf(&sb, "\n  %s\n", txnindex.MoreText(n, "open transaction", "open transactions"))
	}
	return sb.String()
}
