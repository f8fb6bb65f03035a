package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/txnscope/txnscope/live"
)

// passwordEnv is where watch reads a SASL password when no file is given.
// A password is never a flag value: flags show in ps and shell history.
const passwordEnv = "TXNSCOPE_SASL_PASSWORD"

// Exit status of watch --once when the engine and the broker disagree.
const exitMismatch = 4

func runWatch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "watch", "--bootstrap HOST:PORT[,HOST:PORT] --topic T [flags]",
		"Watch a topic on a running cluster, strictly read-only (Metadata, ListOffsets, Fetch, DescribeProducers,\n"+
			"ListTransactions, DescribeTransactions, DescribeConfigs; ListGroups, OffsetFetch, ConsumerGroupDescribe and\n"+
			"DescribeShareGroupOffsets while an LSO lags):\n"+
			"every batch, marker and LSO move as it happens, open transactions with their transactional ids, hanging\n"+
			"ones by KIP-664's rule, the consumer groups a lagging LSO holds up, and every difference between\n"+
			"txnscope's engine and the broker's own answer.\n\n"+
			"The SASL password comes from --sasl-password-file or the "+passwordEnv+" environment variable, never a flag.\n"+
			"With --once: exit 3 if a transaction is hanging, or late while DescribeProducers did not answer; 4 if the engine and the broker disagree.")
	lf := addLiveFlags(fs, "comma-separated HOST:PORT list of brokers (required)")
	var (
		once   = fs.Bool("once", false, "print the first update and exit")
		format = fs.String("format", "text", "text or json (one object per update and line)")
	)
	if err := refusePasswordFlag(args); err != nil {
		return err
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := lf.config()
	if err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usagef("--format must be text or json, not %q", *format)
	}
	record := lf.record
	if *record != "" {
		f, err := os.Create(*record)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.Record = f
	}

	w, err := live.Dial(ctx, cfg)
	if err != nil {
		if *record != "" {
			os.Remove(*record) // nothing recorded: leave no empty capture behind
		}
		if ctx.Err() != nil {
			return nil // interrupted while connecting
		}
		return err
	}
	defer w.Close()
	pr := live.NewPrinter(e.stdout, *format == "json")
	if *once {
		u, err := w.Poll(ctx)
		if err != nil {
			return err
		}
		if err := pr.Print(u); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		return onceStatus(u)
	}
	var perr error
	err = w.Run(ctx, func(u live.Update) {
		if perr == nil {
			perr = pr.Print(u)
		}
	})
	if perr != nil {
		return perr
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return w.Close() // interrupted: a normal end
	}
	return err
}

// onceStatus maps the single update of --once to an exit status.
func onceStatus(u live.Update) error {
	if len(u.Mismatches) > 0 {
		return &codeError{code: exitMismatch, err: fmt.Errorf("the engine and the broker disagree (%d differences)", len(u.Mismatches))}
	}
	for _, p := range u.Partitions {
		for _, o := range p.Open {
			if o.Hanging || o.Late {
				return &codeError{code: exitHanging}
			}
		}
	}
	return nil
}

// watchSASL builds the SASL settings; the password is read from a file or
// the environment and never appears in a message.
func watchSASL(mech, user, passFile string) (*live.SASL, error) {
	if mech == "" {
		if user != "" || passFile != "" {
			return nil, usagef("--sasl-user and --sasl-password-file need --sasl-mechanism")
		}
		return nil, nil
	}
	switch strings.ToUpper(mech) {
	case live.MechanismPlain, live.MechanismSCRAMSHA256, live.MechanismSCRAMSHA512:
	default:
		return nil, usagef("--sasl-mechanism must be plain, scram-sha-256 or scram-sha-512, not %q", mech)
	}
	if user == "" {
		return nil, usagef("--sasl-mechanism needs --sasl-user")
	}
	var pass string
	if passFile != "" {
		b, err := os.ReadFile(passFile)
		if err != nil {
			return nil, fmt.Errorf("reading the SASL password file: %w", err)
		}
		pass = strings.TrimRight(string(b), "\r\n")
	} else {
		pass = os.Getenv(passwordEnv)
	}
	if pass == "" {
		return nil, usagef("--sasl-mechanism needs a password: --sasl-password-file FILE or $%s", passwordEnv)
	}
	return &live.SASL{Mechanism: strings.ToUpper(mech), User: user, Password: pass}, nil
}

func watchTLS(on bool, ca, cert, key, name string) (*tls.Config, error) {
	if !on && ca == "" && cert == "" && key == "" && name == "" {
		return nil, nil
	}
	if (cert == "") != (key == "") {
		return nil, usagef("--tls-cert and --tls-key go together")
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: name}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", ca)
		}
	}
	if cert != "" {
		kp, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		c.Certificates = []tls.Certificate{kp}
	}
	return c, nil
}
