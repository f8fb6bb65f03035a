package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/live/metrics"
)

// liveFlags are the cluster flags `watch` and `serve --bootstrap` share.
type liveFlags struct {
	bootstrap, topic, partition *string
	from, last                  *int64
	maxBatches                  *int
	poll, maxTxnTimeout         *time.Duration
	*connFlags                  // dial timeout, SASL, TLS: cluster.go
	record                      *string
}

// addLiveFlags defines the cluster flags on fs. required names what
// --bootstrap is for in the help text.
func addLiveFlags(fs *flag.FlagSet, bootstrapHelp string) *liveFlags {
	return &liveFlags{
		bootstrap:     fs.String("bootstrap", "", bootstrapHelp),
		topic:         fs.String("topic", "", "the topic to watch (with --bootstrap)"),
		partition:     fs.String("partition", "", "partitions to watch, comma-separated (default: all)"),
		from:          fs.Int64("from", -1, "start the window at this offset"),
		last:          fs.Int64("last", 0, "start the window this many offsets below the high watermark"),
		maxBatches:    fs.Int("max-batches", live.DefaultMaxBatches, "batches kept per partition; older ones are dropped (bounds memory, ~100 bytes a batch)"),
		poll:          fs.Duration("poll", live.DefaultPoll, "interval between polls of the cluster (serve without --topic: between scans, default "+live.DefaultScanPoll.String()+")"),
		maxTxnTimeout: fs.Duration("max-transaction-timeout", 0, "transaction.max.timeout.ms for the hanging rule (default: ask the broker, else 15m)"),
		connFlags:     addConnFlags(fs),
		record:        fs.String("record", "", "write the fetch responses received to FILE (raw capture; replay with --load FILE)"),
	}
}

// refusePasswordFlag refuses a password on the command line without
// echoing it: flags show in ps and in shell history.
func refusePasswordFlag(args []string) error {
	for _, a := range args {
		if n := strings.TrimLeft(a, "-"); a != n && (n == "sasl-password" || strings.HasPrefix(n, "sasl-password=")) {
			return usagef("a password is never taken as a flag value (ps and shell history show it): use --sasl-password-file FILE or $%s", passwordEnv)
		}
	}
	return nil
}

// config validates the flags and builds the watcher's configuration
// (without Record, which the caller opens).
func (f *liveFlags) config() (live.Config, error) {
	if *f.bootstrap == "" || *f.topic == "" {
		return live.Config{}, usagef("--bootstrap and --topic are required")
	}
	if *f.from >= 0 && *f.last > 0 {
		return live.Config{}, usagef("--from and --last exclude each other")
	}
	if *f.last < 0 {
		return live.Config{}, usagef("--last must be positive")
	}
	cfg := live.Config{From: *f.from, Last: *f.last, MaxBatches: *f.maxBatches, Poll: *f.poll,
		MaxTxnTimeout: *f.maxTxnTimeout, Topic: *f.topic, Brokers: splitBootstrap(*f.bootstrap)}
	if *f.partition != "" {
		cfg.Partitions = []int32{}
		for _, s := range strings.Split(*f.partition, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
			if err != nil || n < 0 {
				return live.Config{}, usagef("--partition: %q is not a partition number", s)
			}
			cfg.Partitions = append(cfg.Partitions, int32(n))
		}
	}
	return cfg, f.connect(&cfg)
}

// liveSourceID is the source id of the watched partitions in serve mode.
const liveSourceID = "live"

// startLive dials the cluster, takes a first poll (so that every watched
// partition has a log before the server listens, and a dead cluster, bad
// credentials, a missing topic or a denied ACL fail the command at once),
// adds the partitions to the catalog as source "live" and starts polling.
// stop ends the polling and flushes the recording. m, when not nil, gets
// every poll (/metrics).
func startLive(ctx context.Context, e *env, f *liveFlags, cat *catalog, m *metrics.Collector) (stop func(), err error) {
	cfg, err := f.config()
	if err != nil {
		return nil, err
	}
	var rec *os.File
	if *f.record != "" {
		if rec, err = os.Create(*f.record); err != nil {
			return nil, err
		}
		cfg.Record = rec
	}
	fail := func(err error) (func(), error) {
		if rec != nil {
			rec.Close()
			os.Remove(*f.record) // nothing useful recorded: leave no capture behind
		}
		return nil, err
	}
	w, err := live.Dial(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	u, err := w.Poll(ctx)
	if err != nil {
		w.Close()
		return fail(err)
	}
	feed := api.NewLiveFeed(w.Bootstrap(), cfg.Topic)
	apply := func(u live.Update) {
		feed.Apply(u)
		if m != nil {
			m.ObserveUpdate(u, time.Since(u.Time)) // Update.Time is when the poll started
		}
	}
	apply(u)
	title := fmt.Sprintf("live: %s on %s", cfg.Topic, w.Bootstrap())
	for _, pv := range u.Partitions {
		cat.put(&source{id: liveSourceID, title: title, topic: cfg.Topic, partition: pv.Partition, live: feed.Partition(pv.Partition)})
	}
	for _, n := range u.Notes {
		fmt.Fprintf(e.stderr, "note: %s\n", n)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := w.Run(ctx, apply)
		if ctx.Err() == nil {
			// A fatal error (credentials, ACLs, the topic deleted): the
			// page keeps the last view and says why it stopped.
			slog.Error("live: watching stopped", "err", err)
			feed.Fail(err)
		}
		if err := w.Close(); err != nil {
			slog.Error("live: closing the recording", "err", err)
		}
		if rec != nil {
			if err := rec.Close(); err != nil {
				slog.Error("live: closing the recording", "err", err)
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// Subscribe implements api.Feed for the live sources of the catalog.
func (c apiCatalog) Subscribe(id, topic string, partition int32) (<-chan struct{}, func(), bool) {
	s := c.find(id, topic, partition)
	if s != nil && s.lazy != nil {
		return s.lazy.subscribe() // the full load landing (catalog_lazy.go)
	}
	if s == nil || s.live == nil {
		return nil, nil, false
	}
	ch, cancel := s.live.Subscribe()
	return ch, cancel, true
}

// Live implements api.Feed.
func (c apiCatalog) Live(id, topic string, partition int32) (api.LiveStatus, bool) {
	s := c.find(id, topic, partition)
	if s == nil || s.live == nil {
		return api.LiveStatus{}, false
	}
	return s.live.Status(), true
}

var _ api.Feed = apiCatalog{}
