package main

import (
	"context"
	"fmt"
	"time"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

// exitHanging is diagnose's exit status when a partition is pinned by a
// hanging transaction, so monitors can alert on it.
const exitHanging = 3

func runDiagnose(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "diagnose", "[flags] PATH | --demo NAME | --bootstrap HOST:PORT",
		"Explain each partition's last stable offset: who pins it, since when, how every open transaction\nclassifies (open, expired, hanging), the command that ends it and what that discards.\nWith --bootstrap and no PATH, --demo or --topic: scan every partition of the cluster, stuck ones first.\nExit status 3 when a partition is pinned by a hanging transaction.")
	var (
		format     = fs.String("format", "text", "text or json")
		position   = fs.Int64("position", -1, "a consumer position: split its lag to the high watermark")
		nowFlag    = fs.String("now", "", "the clock to age transactions against (RFC 3339 or Unix ms); default: now (for --demo, the demo's own time)")
		txnTimeout = fs.Duration("transaction-timeout", txnindex.DefaultTxnTimeout, "transaction.timeout.ms")
		maxTimeout = fs.Duration("max-transaction-timeout", txnindex.DefaultMaxTxnTimeout, "transaction.max.timeout.ms (find-hanging's threshold)")
		bootstrap  = fs.String("bootstrap", "", "bootstrap address to put in the printed commands; without PATH: with --topic T --partition P that partition on the cluster, alone every partition of the cluster (read-only)")
		demo       = fs.String("demo", "", "diagnose a built-in demo scenario instead of PATH")
		topic      = fs.String("topic", "", "only this topic")
		partition  = fs.Int("partition", -1, "only this partition")
		scanF      = addScanFlags(fs) // cluster mode: cluster.go
		fullReplay = fs.Bool("full-replay", false, "read every segment of a partition directory instead of starting at its newest producer snapshot (input.OpenTail)")
	)
	if err := refusePasswordFlag(args); err != nil {
		return err
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usagef("--format must be text or json, not %q", *format)
	}
	now := time.Now()
	if *nowFlag != "" {
		t, err := parseTime(*nowFlag)
		if err != nil {
			return usagef("--now: %v", err)
		}
		now = t
	}
	if *bootstrap != "" && fs.NArg() == 0 && *demo == "" && *topic == "" {
		return diagnoseCluster(ctx, e, fs, scanF, *bootstrap, *format, now, *maxTimeout)
	} else if err := scanF.unused(fs); err != nil {
		return err
	}
	if *bootstrap != "" && fs.NArg() == 0 && *demo == "" {
		d, err := diagnoseLive(ctx, scanF, *bootstrap, *topic, *partition, now, *maxTimeout)
		if err != nil {
			return err
		}
		if *format == "text" {
			fmt.Fprint(e.stdout, live.Runbook(d))
			if d.Hanging() {
				return &codeError{code: exitHanging}
			}
			return nil
		}
		return writeDiagnoses(e, *format, []*txnindex.Diagnosis{d})
	}
	src, err := diagnoseSource(ctx, e, fs, *demo, *position, *fullReplay)
	if err != nil {
		return err
	}
	parts := src.Partitions
	ev, err := internalEvidence(e, src)
	if err != nil {
		return err
	}
	opts := txnindex.DiagnoseOptions{Now: now, TxnTimeout: *txnTimeout, MaxTxnTimeout: *maxTimeout, Bootstrap: *bootstrap, Position: *position}
	out := struct {
		Partitions []*txnindex.Diagnosis `json:"partitions"`
	}{}
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if (*topic != "" && p.Log.Topic != *topic) || (*partition >= 0 && int(p.Log.Partition) != *partition) {
			continue
		}
		o := opts
		if (p.Fetches != nil || *demo != "") && *nowFlag == "" {
			// A capture is aged at its own end (Diagnose clamps a later
			// clock to it), a demo by its own time ("20 minutes later"),
			// not by how long ago its fixed timestamps were: zero lets
			// Diagnose take the newest write.
			o.Now = time.Time{}
		}
		d := p.Log.Diagnose(o)
		p.Log.Join(d, ev)
		out.Partitions = append(out.Partitions, d)
	}
	if len(out.Partitions) == 0 {
		return fmt.Errorf("no partition matches --topic %q --partition %d", *topic, *partition)
	}
	internalLast(out.Partitions)
	return writeDiagnoses(e, *format, out.Partitions)
}

// diagnoseSource loads diagnose's PATH: a partition directory of a data
// topic from its newest producer snapshot (input.OpenTail, with the same
// answer as reading it all); with --full-replay, and for a demo, as the
// other commands load.
func diagnoseSource(ctx context.Context, e *env, fs argLister, demo string, position int64, full bool) (*input.Contents, error) {
	open := func(ctx context.Context, path string) (*input.Contents, error) {
		return input.OpenTail(ctx, path, position)
	}
	if full {
		open = input.OpenContext
	}
	return loadSource(ctx, e, fs, demo, open)
}

func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	var ms int64
	if _, err := fmt.Sscanf(s, "%d", &ms); err == nil && fmt.Sprint(ms) == s {
		return time.UnixMilli(ms), nil
	}
	return time.Time{}, fmt.Errorf("want RFC 3339 (2026-12-02T15:04:05Z) or Unix milliseconds, got %q", s)
}
