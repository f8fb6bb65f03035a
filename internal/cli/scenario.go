package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/scenario"
)

func runScenario(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "scenario", "build FILE --out DIR",
		"Build a scenario file (docs/scenarios.md) into a real Kafka log directory under DIR:\n.log segments, .index, .timeindex, .txnindex, .snapshot and checkpoint files.")
	out := fs.String("out", "", "log directory to create (must not hold the partition already)")
	if len(args) == 0 || args[0] != "build" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return parse(fs, args)
		}
		return usagef("want \"scenario build FILE --out DIR\"")
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 || *out == "" {
		return usagef("want \"scenario build FILE --out DIR\"")
	}
	s, err := scenario.ParseFile(fs.Arg(0))
	if err != nil {
		// Printed after "txnscope scenario: ", the package's own prefix
		// would say "scenario" twice.
		return errors.New(strings.TrimPrefix(err.Error(), "scenario: "))
	}
	b, err := s.Build()
	if err != nil {
		return err
	}
	if err := b.WriteDir(*out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s (%d files): %s\n", b.Dir, len(b.Files), b.Log)
	return ctx.Err()
}
