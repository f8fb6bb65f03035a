// Package cli is txnscope's command table: each subcommand's flags and the
// wiring from them to the packages that do the work (serve's: package
// server, which it hands its flags as server.Options). cmd/txnscope (the
// command users install) and cmd/server (what `go run ./cmd/server` has
// always served) are both this table behind a one-line main.
//
// Usage:
//
//	txnscope [serve] [flags]          serve the timeline (default: the embedded demos)
//	txnscope decide [flags] PATH      print per-offset decisions
//	txnscope diagnose [flags] PATH    explain a stuck LSO
//	txnscope inspect [flags] PATH     show segments, indexes and checkpoints
//	txnscope export [flags]           write a self-contained demo page
//	txnscope scenario build FILE      build a scenario file into a log directory
//	txnscope watch [flags]            watch a topic on a live cluster, read-only
//	txnscope version                  print the module version and VCS revision
//
// Exit codes: 0 success, 1 runtime failure, 2 bad usage, 3 (diagnose,
// watch --once) a partition is pinned by a hanging transaction, or by a late
// one whose coordinator was not read, 4 (watch --once) the engine and the
// broker disagree.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks an error as the caller's mistake: exit code 2, one line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// usageOf is the caller's mistake err tells, if it is one: a usageError,
// or a server.UsageError (serve's flags, checked by server.New).
func usageOf(err error) (string, bool) {
	var ue *usageError
	var se *server.UsageError
	switch {
	case errors.As(err, &ue):
		return ue.msg, true
	case errors.As(err, &se):
		return se.Error(), true
	}
	return "", false
}

// findDemo is gen.FindDemo with an unknown name as the caller's mistake.
func findDemo(name string) (gen.Demo, error) {
	d, err := gen.FindDemo(name)
	if err != nil {
		return gen.Demo{}, usagef("%v", err)
	}
	return d, nil
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what a subcommand may touch of the process.
type env struct {
	stdout, stderr io.Writer
	// ready, if set, is told the address the server listens on (tests).
	ready func(addr string)
}

func commands() []command {
	return []command{
		{"serve", "serve the timeline over HTTP (the default)", runServe},
		{"decide", "print what a consumer receives for every offset, and why", runDecide},
		{"diagnose", "explain who pins the LSO and what to run", runDiagnose},
		{"inspect", "show segments, batches, indexes, snapshots and checkpoints", runInspect},
		{"export", "write a self-contained HTML demo", runExport},
		{"scenario", "build a scenario file into a real partition directory", runScenario},
		{"watch", "watch a topic on a live cluster, read-only: batches, LSO moves, open and hanging transactions, engine vs broker", runWatch},
		{"version", "print the module version and VCS revision of this binary", runVersion},
	}
}

// Main runs the command line args (without the program name) with the
// process's standard streams, stops on SIGINT or SIGTERM, and returns the
// exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, args, &env{stdout: os.Stdout, stderr: os.Stderr})
	stop()
	gen.RemoveDemoFiles()
	return code
}

// Run is Main with the given context and streams, and no signal
// handling: for a program that drives the command, such as the browser
// tests (package e2e), which export pages and build scenarios with it.
// It returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, args, &env{stdout: stdout, stderr: stderr})
}

// run dispatches to a subcommand and maps its error to an exit code.
func run(ctx context.Context, args []string, e *env) int {
	cmds := commands()
	name := "serve"
	if len(args) > 0 && args[0] == "help" {
		// "txnscope help" and "txnscope help COMMAND", as go and git
		// take them.
		if len(args) == 1 {
			topUsage(e.stdout, cmds)
			return exitOK
		}
		args = []string{args[1], "--help"}
	}
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		topUsage(e.stdout, cmds)
		return exitOK
	} else if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		name, args = "version", nil
	}
	for _, c := range cmds {
		if c.name != name {
			continue
		}
		// Every command's stdout goes out with its control characters
		// escaped (termsafe.go); stderr carries the progress line, whose
		// own escape sequences must pass, so its messages are escaped
		// where they are written.
		out := &controlEscaper{w: e.stdout}
		escaped := *e
		escaped.stdout = out
		err := c.run(ctx, &escaped, args)
		out.flush()
		msg, usage := usageOf(err)
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return exitOK
		case usage:
			fmt.Fprintf(e.stderr, "txnscope %s: %s (see 'txnscope %s --help')\n", name, txnindex.EscapeControls(msg), name)
			return exitUsage
		default:
			var ce *codeError
			if errors.As(err, &ce) {
				if ce.err != nil {
					fmt.Fprintf(e.stderr, "txnscope %s: %s\n", name, txnindex.EscapeControls(fmt.Sprint(ce.err)))
				}
				return ce.code
			}
			fmt.Fprintf(e.stderr, "txnscope %s: %s\n", name, txnindex.EscapeControls(err.Error()))
			return exitFailure
		}
	}
	fmt.Fprintf(e.stderr, "txnscope: unknown command %q (want one of serve, decide, diagnose, inspect, export, scenario, watch, version; see 'txnscope --help')\n", name)
	return exitUsage
}

// codeError carries a specific exit code (diagnose's 3).
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return fmt.Sprint(e.err) }

func topUsage(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "txnscope: see what Kafka transactions look like on disk and what read_committed consumers receive.")
	fmt.Fprintln(w, "\nUsage: txnscope [command] [flags]\n\nCommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'txnscope COMMAND --help' for a command's flags. Exit codes: 0 ok, 1 failure, 2 bad usage, 3 hanging, or late with no coordinator read (diagnose, watch --once), 4 engine and broker disagree (watch --once).")
}

// newFlags returns a flag set that reports errors instead of exiting, with
// help text on stdout.
func newFlags(e *env, name, args, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "Usage: %s\n\n%s\n", strings.TrimSpace("txnscope "+name+" "+args), summary)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			return
		}
		fmt.Fprint(e.stdout, "\nFlags:\n")
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parse parses flags, turning flag errors into usage errors. Flags may come
// after positional arguments too (txnscope decide PATH --format ndjson): the
// positionals are collected and set back as the flag set's arguments.
func parse(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err // the flag package has printed the usage
			}
			return usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			pos = append(pos, rest[1:]...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	// Parsing an empty list resets Args to the positionals collected.
	_ = fs.Parse(append([]string{"--"}, pos...))
	return nil
}

// runVersion prints what the Go toolchain stamped into the binary: the
// module version (a tag for go install ...@vX, a pseudo-version for a build
// in a git checkout, "(devel)" when there is none) and, from a checkout,
// the VCS revision, its time and whether the tree was modified.
func runVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "", "Print the module version and VCS revision of this binary (also: txnscope --version).")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintln(e.stdout, versionString())
	return nil
}

func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "txnscope (no build information)"
	}
	s := "txnscope " + bi.Main.Path + " " + bi.Main.Version
	var rev, when, modified string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			when = kv.Value
		case "vcs.modified":
			modified = kv.Value
		}
	}
	if rev != "" {
		s += " revision " + rev
		if modified == "true" {
			s += " (modified)"
		}
		if when != "" {
			s += " " + when
		}
	}
	return s + " " + bi.GoVersion
}
