package main

import (
	"context"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/inspect"
)

func runInspect(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "inspect", "[flags] PATH",
		"Show what a PATH holds: segments, batches, indexes, producer snapshots, checkpoints,\n.txnindex mismatches against the log, gaps and damage; for a capture, its fetches.")
	var (
		format  = fs.String("format", "text", "text or json")
		batches = fs.Bool("batches", false, "list every batch header")
		records = fs.Bool("records", false, "decode and list every record (implies --batches)")
	)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usagef("--format must be text or json, not %q", *format)
	}
	if fs.NArg() != 1 {
		return usagef("want exactly one PATH, got %d arguments", fs.NArg())
	}
	ld, err := input.OpenContext(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	v := inspect.New(ld, inspect.Options{Batches: *batches, Records: *records})
	if *format == "json" {
		return jsonid.WriteIndent(e.stdout, v)
	}
	inspect.WriteText(e.stdout, v)
	return ctx.Err()
}
