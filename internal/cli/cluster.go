package cli

// Cluster mode (docs/cluster-mode.md): `diagnose --bootstrap`
// without a path, a demo or a topic, and `serve --bootstrap` without
// --topic. The scan is live.Cluster's; this file only wires flags to it.

import (
	"context"
	"flag"
	"regexp"
	"time"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/live"
)

// connFlags are how txnscope reaches a cluster: the request bound, SASL and
// TLS, shared by watch, serve --bootstrap and diagnose --bootstrap.
type connFlags struct {
	dialTimeout                     *time.Duration
	mech, user, passFile            *string
	useTLS                          *bool
	tlsCA, tlsCert, tlsKey, tlsName *string
}

func addConnFlags(fs *flag.FlagSet) *connFlags {
	return &connFlags{
		dialTimeout: durationFlag(fs, "dial-timeout", live.DefaultDialTimeout, "bound on connecting and on each request"),
		mech:        fs.String("sasl-mechanism", "", "plain, scram-sha-256 or scram-sha-512"),
		user:        fs.String("sasl-user", "", "SASL user name"),
		passFile:    fs.String("sasl-password-file", "", "file holding the SASL password (default: $"+passwordEnv+")"),
		useTLS:      fs.Bool("tls", false, "connect with TLS using the system's roots (implied by the other --tls flags)"),
		tlsCA:       fs.String("tls-ca", "", "PEM file of the CA certificates to trust"),
		tlsCert:     fs.String("tls-cert", "", "PEM client certificate (with --tls-key)"),
		tlsKey:      fs.String("tls-key", "", "PEM client key (with --tls-cert)"),
		tlsName:     fs.String("tls-server-name", "", "server name to verify instead of the bootstrap host"),
	}
}

// connect validates the flags into cfg's DialTimeout, SASL and TLS.
func (f *connFlags) connect(cfg *live.Config) error {
	cfg.DialTimeout = *f.dialTimeout
	sasl, err := watchSASL(*f.mech, *f.user, *f.passFile)
	if err != nil {
		return err
	}
	cfg.SASL = sasl
	cfg.TLS, err = watchTLS(*f.useTLS, *f.tlsCA, *f.tlsCert, *f.tlsKey, *f.tlsName)
	return err
}

// scanFlags are what cluster mode adds to diagnose: which topics to scan
// and how to reach the cluster.
type scanFlags struct {
	topics   *string
	internal *bool
	*connFlags
}

func addScanFlags(fs *flag.FlagSet) *scanFlags {
	return &scanFlags{
		topics:    fs.String("topics", "", "with --bootstrap and no PATH: scan only the topics this regular expression matches"),
		internal:  fs.Bool("internal", false, "with --bootstrap and no PATH: also scan __consumer_offsets and __transaction_state"),
		connFlags: addConnFlags(fs),
	}
}

// options builds the scan options from the flags.
func (f *scanFlags) options() (live.ScanOptions, error) {
	o := live.ScanOptions{Internal: *f.internal}
	if *f.topics != "" {
		re, err := regexp.Compile(*f.topics)
		if err != nil {
			return o, usagef("--topics: %v", err)
		}
		o.Topics = re
	}
	return o, nil
}

// unused refuses the cluster-mode flags outside cluster mode, where they
// would be ignored.
func (f *scanFlags) unused(fs *flag.FlagSet) error {
	for _, n := range []string{"topics", "internal"} {
		if flagSet(fs, n) {
			return usagef("--%s scans a cluster: it needs --bootstrap and no PATH, --demo or --topic", n)
		}
	}
	return nil
}

// flagSet reports whether name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// diagnoseCluster is `diagnose --bootstrap HOST:PORT` with no PATH, --demo
// or --topic: one scan of the whole cluster (live.Cluster.Scan), printed
// ranked (text) or as JSON whose "partitions" has one entry per partition,
// clear ones included. Exit status 3 when a partition is held by a hanging
// transaction, as for a single partition.
func diagnoseCluster(ctx context.Context, e *env, fs *flag.FlagSet, f *scanFlags, bootstrap, format string, now time.Time, maxTxn time.Duration) error {
	o, err := f.options()
	if err != nil {
		return err
	}
	cfg := live.Config{Brokers: live.SplitBrokers(bootstrap)}
	if err := f.connect(&cfg); err != nil {
		return err
	}
	// The default --max-transaction-timeout is Kafka's default; in
	// cluster mode the broker's own setting (DescribeConfigs) is better,
	// so only an explicit flag overrides it.
	if flagSet(fs, "max-transaction-timeout") {
		o.MaxTxnTimeout = maxTxn
	}
	if flagSet(fs, "now") {
		o.Now = func() time.Time { return now }
	}
	c, err := live.NewCluster(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	scan, err := c.Scan(ctx, o)
	if err != nil {
		return err
	}
	if format == "json" {
		err = jsonid.WriteIndent(e.stdout, scan)
	} else {
		err = scan.WriteText(e.stdout)
	}
	if err != nil {
		return err
	}
	if scan.AnyHanging() {
		return &codeError{code: exitHanging}
	}
	return nil
}
