package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/txnindex"
)

// diagnoseLive answers `diagnose --bootstrap HOST --topic T --partition P`
// without a PATH from the cluster itself, strictly read-only
// (live.Cluster.DiagnosePartition).
func diagnoseLive(ctx context.Context, bootstrap, topic string, partition int, now time.Time, maxTxn time.Duration) (*txnindex.Diagnosis, error) {
	if topic == "" || partition < 0 {
		return nil, usagef("diagnose --bootstrap without PATH needs --topic and --partition")
	}
	c, err := live.NewCluster(live.Config{Brokers: strings.Split(bootstrap, ",")})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.DiagnosePartition(ctx, topic, int32(partition), live.ScanOptions{MaxTxnTimeout: maxTxn, Now: func() time.Time { return now }, Bootstrap: bootstrap})
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
		if t.AbortByProducerCommand != "" {
			fmt.Fprintf(&sb, "    or, naming the producer: %s\n", t.AbortByProducerCommand)
			fmt.Fprintf(&sb, "      (coordinator epoch %d, the largest known; evidence: %s)\n", t.CoordinatorEpoch, t.CoordinatorEpochSource)
		}
	}
	return sb.String()
}
