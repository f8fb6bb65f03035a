package cli

import (
	"context"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/live"
)

// diagnoseLive answers `diagnose --bootstrap HOST --topic T --partition P`
// without a PATH from the cluster itself, strictly read-only
// (live.Cluster.DiagnosePartition), reached with the connection flags
// (--dial-timeout, SASL, TLS) as cluster mode is.
func diagnoseLive(ctx context.Context, f *scanFlags, bootstrap, topic string, partition int, now time.Time, maxTxn time.Duration, limit int) (*diagnosis.Diagnosis, error) {
	if topic == "" || partition < 0 {
		return nil, usagef("diagnose --bootstrap --topic without PATH needs --partition too (without --topic it scans every partition of the cluster)")
	}
	cfg := live.Config{Brokers: live.SplitBrokers(bootstrap)}
	if err := f.connect(&cfg); err != nil {
		return nil, err
	}
	c, err := live.NewCluster(cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.DiagnosePartition(ctx, topic, int32(partition), live.ScanOptions{MaxTxnTimeout: maxTxn, Now: func() time.Time { return now }, Bootstrap: bootstrap, Limit: limit})
}
