package cli

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/progress"
	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// exitHanging is diagnose's exit status when a partition is pinned by a
// hanging transaction, or by a late one whose coordinator was not heard
// (diagnosis.Diagnosis.Alert), so monitors can alert on it.
const exitHanging = 3

func runDiagnose(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "diagnose", "[flags] PATH | --demo NAME | --bootstrap HOST:PORT",
		"Explain each partition's last stable offset: who pins it, since when, how every open transaction\nclassifies (open, expired, late, hanging, prepared), the command that ends it and what that discards.\nWith --bootstrap and no PATH, --demo or --topic: scan every partition of the cluster, stuck ones first.\nExit status 3 when a partition is pinned by a hanging transaction, or by a late one (no write for longer than\ntransaction.max.timeout.ms plus 5m) whose coordinator was not read.")
	var (
		format     = fs.String("format", "text", "text or json")
		position   = fs.Int64("position", -1, "a consumer position: split its lag to the high watermark")
		nowFlag    = fs.String("now", "", "the clock to age transactions against (RFC 3339 or Unix ms); default: now (for --demo, the demo's own time)")
		txnTimeout = durationFlag(fs, "transaction-timeout", diagnosis.DefaultTxnTimeout, "the producers' transaction.timeout.ms: an open transaction with no write for longer is expired, which its coordinator aborts")
		maxTimeout = durationFlag(fs, "max-transaction-timeout", diagnosis.DefaultMaxTxnTimeout, "the brokers' transaction.max.timeout.ms (find-hanging's threshold); with --bootstrap and no PATH the brokers are asked unless this is given")
		bootstrap  = fs.String("bootstrap", "", "bootstrap address to put in the printed commands; without PATH: with --topic T --partition P that partition on the cluster, alone every partition of the cluster (read-only)")
		demo       = fs.String("demo", "", "diagnose a built-in demo scenario instead of PATH")
		topic      = fs.String("topic", "", "only this topic")
		partition  = fs.Int("partition", -1, "only this partition")
		scanF      = addScanFlags(fs) // cluster mode: cluster.go
		fullReplay = fs.Bool("full-replay", false, "read every segment of a partition directory instead of starting, as the broker's recovery does, at its newest producer snapshot")
		limit      = countFlag(fs, "limit", txnindex.ListCap, fmt.Sprintf("how many entries each list (open transactions, groups, …) holds in detail, at most %s; the rest are counted", txnindex.Count(txnindex.MaxListLimit)))
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
	if *limit < 1 || *limit > txnindex.MaxListLimit {
		return usagef("--limit must be 1 to %d, not %d", txnindex.MaxListLimit, *limit)
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
		// As for the whole cluster: the brokers' own
		// transaction.max.timeout.ms unless the flag says otherwise.
		maxTxn := *maxTimeout
		if !flagSet(fs, "max-transaction-timeout") {
			maxTxn = 0
		}
		d, err := diagnoseLive(ctx, scanF, *bootstrap, *topic, *partition, now, maxTxn, *limit)
		if err != nil {
			return err
		}
		if *format == "text" {
			fmt.Fprint(e.stdout, live.Runbook(d))
			if d.Alert() {
				return &codeError{code: exitHanging}
			}
			return nil
		}
		return writeDiagnoses(e, *format, []*diagnosis.Diagnosis{d})
	}
	opts := diagnosis.Options{Now: now, TxnTimeout: *txnTimeout, MaxTxnTimeout: *maxTimeout, Bootstrap: *bootstrap, Position: *position, Limit: *limit}
	keep := func(t string, p int32) bool {
		return (*topic == "" || t == *topic) && (*partition < 0 || int(p) == *partition)
	}
	// A partition directory of a data topic is read from its newest
	// producer snapshot (the same answer as reading it all); a log
	// directory a partition at a time, each so (load.Open).
	q := load.Question{Kind: load.Tail, Position: *position, LogDir: true}
	if *fullReplay {
		q.Kind = load.Whole
	}
	in, err := loadSource(ctx, e, fs, *demo, q, load.Budget{})
	if err != nil {
		return err
	}
	if in.Dir != nil {
		return diagnoseLogDir(ctx, e, in.Dir, opts, *format, keep)
	}
	src := in.Contents
	parts := src.Partitions
	ev, err := internalEvidence(e, src)
	if err != nil {
		return err
	}
	var ds []*diagnosis.Diagnosis
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !keep(p.Log.Topic, p.Log.Partition) {
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
		d := present.Diagnose(p.Log, o)
		diagnosis.Join(p.Log, d, ev)
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		return fmt.Errorf("no partition matches --topic %q --partition %d", *topic, *partition)
	}
	internalLast(ds)
	return writeDiagnoses(e, *format, ds)
}

// diagnoseLogDir diagnoses a log directory a partition per core at a time,
// each as `diagnose PARTITIONDIR` would (from its newest producer snapshot,
// unless --full-replay), joined with what the internal topics say, read
// first one partition at a time: memory holds a partition per core and the
// diagnoses, whatever the directory's size (load.LogDir). A partition
// that cannot be read is said on stderr and the others are still diagnosed;
// the exit status is then 1 unless one is hanging (3).
func diagnoseLogDir(ctx context.Context, e *env, ld *load.LogDir, opts diagnosis.Options, format string, keep func(string, int32) bool) error {
	for _, p := range ld.Problems {
		fmt.Fprintf(e.stderr, "warning: %v\n", p)
	}
	entries := ld.Partitions()
	total := 0
	for _, en := range entries {
		if keep(en.Topic, en.Partition) {
			total++
		}
	}
	var done atomic.Int64
	var current atomic.Value
	current.Store("the internal topics, for the join")
	start := time.Now()
	line := progress.Start(e.stderr, progress.Delay, func() string {
		return fmt.Sprintf("reading %s: %s of %s, %s, %s", ld.Index.Root, txnindex.Count(int64(done.Load())), txnindex.Plural(total, "partition", "partitions"), current.Load(), txnindex.Duration(time.Since(start)))
	})
	defer line.Stop("")
	var warnMu sync.Mutex
	warn := func(c *input.Contents) {
		warnMu.Lock()
		defer warnMu.Unlock()
		for _, p := range c.Problems {
			fmt.Fprintf(e.stderr, "warning: %v\n", p)
		}
	}
	in, err := ld.Evidence(ctx)
	if err != nil {
		return err
	}
	for _, d := range in.Damage() {
		fmt.Fprintf(e.stderr, "warning: %v\n", d)
	}
	ev := in.Evidence()
	// The partitions are read by a pool of workers, one partition each at
	// a time (a large partition's scan uses every core itself; a log dir
	// of thousands of small ones is read that many at once), and their
	// diagnoses put back in the index's order.
	type result struct {
		ds  []*diagnosis.Diagnosis
		err error
	}
	results := make([]result, len(entries))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(entries) || ctx.Err() != nil {
					return
				}
				en := entries[i]
				if !keep(en.Topic, en.Partition) {
					continue
				}
				current.Store(en.Name)
				c, err := ld.Open(ctx, en)
				done.Add(1)
				if err != nil {
					results[i].err = err
					continue
				}
				warn(c)
				for _, p := range c.Partitions {
					d := present.Diagnose(p.Log, opts)
					diagnosis.Join(p.Log, d, ev)
					results[i].ds = append(results[i].ds, d)
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	var ds []*diagnosis.Diagnosis
	failed := 0
	for i, en := range entries {
		if r := results[i]; r.err != nil {
			failed++
			fmt.Fprintf(e.stderr, "error: %s: %v\n", en.Name, r.err)
		}
		ds = append(ds, results[i].ds...)
	}
	line.Stop("")
	if len(ds) == 0 && failed == 0 {
		return fmt.Errorf("no partition of %s matches the --topic and --partition given", ld.Index.Root)
	}
	internalLast(ds)
	err = writeDiagnoses(e, format, ds)
	if err == nil && failed > 0 {
		err = fmt.Errorf("%s of %s could not be read (see above)", txnindex.Plural(failed, "partition", "partitions"), ld.Index.Root)
	}
	return err
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
