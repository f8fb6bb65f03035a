package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
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

// addLiveFlags defines the cluster flags on fs. bootstrapHelp says what
// --bootstrap is for in the help text.
func addLiveFlags(fs *flag.FlagSet, bootstrapHelp string) *liveFlags {
	return &liveFlags{
		bootstrap:     fs.String("bootstrap", "", bootstrapHelp),
		topic:         fs.String("topic", "", "the topic to watch (with --bootstrap)"),
		partition:     fs.String("partition", "", "partitions to watch, comma-separated (default: all)"),
		from:          fs.Int64("from", -1, "start the window at this offset"),
		last:          fs.Int64("last", 0, "start the window this many offsets below the high watermark"),
		maxBatches:    countFlag(fs, "max-batches", live.DefaultMaxBatches, fmt.Sprintf("batches kept per partition; older ones are dropped (bounds memory, %d bytes a batch)", txnindex.LogBytesPerBatch)),
		poll:          durationFlag(fs, "poll", live.DefaultPoll, "interval between polls of the topic (serve --bootstrap without --topic: between scans of the cluster, "+live.DefaultScanPoll.String()+" unless given)"),
		maxTxnTimeout: durationFlag(fs, "max-transaction-timeout", 0, "transaction.max.timeout.ms for the hanging rule (default: ask the broker, else 15m)"),
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
		MaxTxnTimeout: *f.maxTxnTimeout, Topic: *f.topic, Brokers: live.SplitBrokers(*f.bootstrap)}
	ps, err := f.partitions()
	if err != nil {
		return live.Config{}, err
	}
	cfg.Partitions = ps
	return cfg, f.connect(&cfg)
}

// partitions reads --partition: nil for every partition.
func (f *liveFlags) partitions() ([]int32, error) {
	if *f.partition == "" {
		return nil, nil
	}
	var out []int32
	for _, s := range strings.Split(*f.partition, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil || n < 0 {
			return nil, usagef("--partition: %q is not a partition number", s)
		}
		out = append(out, int32(n))
	}
	return out, nil
}

// serveOptions sets serve's live options from the flags. Without
// --bootstrap and --topic they are not used, and not read: no password
// file or certificate is opened for nothing. fs tells a --poll given from
// its default, which differs without --topic (a scan every
// live.DefaultScanPoll).
func (f *liveFlags) serveOptions(fs *flag.FlagSet, o *server.Options) error {
	if *f.bootstrap == "" && *f.topic == "" {
		return nil
	}
	o.Bootstrap, o.Topic, o.From, o.Last, o.MaxBatches = *f.bootstrap, *f.topic, *f.from, *f.last, *f.maxBatches
	o.MaxTxnTimeout, o.Record = *f.maxTxnTimeout, *f.record
	if flagSet(fs, "poll") {
		o.Poll = *f.poll
	}
	if *f.topic != "" {
		ps, err := f.partitions()
		if err != nil {
			return err
		}
		o.Partitions = ps
	}
	if *f.bootstrap == "" {
		return nil // server.New refuses --topic alone
	}
	var cfg live.Config
	if err := f.connect(&cfg); err != nil {
		return err
	}
	o.DialTimeout, o.SASL, o.TLS = cfg.DialTimeout, cfg.SASL, cfg.TLS
	return nil
}
