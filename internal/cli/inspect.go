package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/inspect"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/segsum"
)

func runInspect(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "inspect", "[flags] PATH | --demo NAME",
		"Show what a PATH holds: segments, batches, indexes, producer snapshots, checkpoints,\n.txnindex mismatches against the log, gaps and damage; for a capture, its fetches.")
	var (
		format  = fs.String("format", "text", "text or json")
		batches = fs.Bool("batches", false, "list every batch header")
		records = fs.Bool("records", false, "decode and list every record (implies --batches)")
		demo    = fs.String("demo", "", "inspect a built-in demo scenario's files instead of PATH")
		entries = fs.Int("entries", 20, "text: list at most this many .txnindex and producer snapshot entries a file, and ignored files and .txnindex differences a partition, counting the rest (-1: all; --batches lists all)")
		maxMem  = bytesFlag(fs, "max-memory", segsum.DefaultMaxMemory(), "a partition directory whose whole load would take more than half of this is not inspected (inspect its segments one at a time); default a quarter of this machine's memory")
	)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usagef("--format must be text or json, not %q", *format)
	}
	if *batches || *records {
		*entries = -1 // the dump lists everything
	}
	if *maxMem <= 0 {
		return usagef("--max-memory must be positive, not %d", *maxMem)
	}
	var (
		ld   *input.Contents
		root string // a demo's temporary directory, left out of what is printed
		err  error
	)
	switch {
	case *demo != "" && fs.NArg() > 0:
		return usagef("give either --demo or PATH, not both")
	case *demo != "":
		if root, err = writeDemoDir(*demo); err != nil {
			return err
		}
		defer os.RemoveAll(root)
		ld, err = input.OpenContext(ctx, root)
	case fs.NArg() != 1:
		return usagef("want exactly one PATH (or --demo NAME), got %d arguments", fs.NArg())
	case loader.IsIndexFile(fs.Arg(0)):
		f, err := loader.OpenIndexFile(fs.Arg(0))
		if f == nil {
			return err
		}
		v := inspect.NewFile(f, err)
		if f.Snapshot != nil {
			// Beside its entries, the producer state the broker loads
			// from it: the transactions open there and the LSO they pin.
			if in, err := load.Open(ctx, fs.Arg(0), load.Question{Kind: load.AtSnapshot, Position: -1}, load.Budget{}); err == nil {
				at := inspect.New(in.Contents, inspect.Options{})
				v.Partitions, v.Problems = at.Partitions, append(v.Problems, at.Problems...)
			}
		}
		return writeInspect(ctx, e, *format, v, *entries)
	default:
		// Every batch is read, for the counts per segment, the
		// transactions, the .txnindex mismatches and the gaps: a
		// partition directory whose whole load would take more than
		// half of --max-memory is refused before it begins (on a
		// broker's host that memory may be the broker's); a log
		// directory is read a partition at a time (load.Open).
		var in *load.Input
		in, err = load.Open(ctx, fs.Arg(0), load.Question{Kind: load.Whole, Position: -1, LogDir: true}, load.Budget{MaxMemory: *maxMem})
		if err == nil && in.Dir != nil {
			v, err := inspectLogDir(ctx, in.Dir, inspect.Options{Batches: *batches, Records: *records})
			if err != nil {
				return err
			}
			return writeInspect(ctx, e, *format, v, *entries)
		}
		if err == nil {
			ld = in.Contents
		}
	}
	if err != nil {
		return err
	}
	v := inspect.New(ld, inspect.Options{Batches: *batches, Records: *records})
	if root != "" {
		// The demo's files are named by their place in its log
		// directory, not by the temporary directory they were built in.
		for i := range v.Partitions {
			if rel, err := filepath.Rel(root, v.Partitions[i].Dir); err == nil {
				v.Partitions[i].Dir = rel
			}
		}
		for i, p := range v.Problems {
			v.Problems[i] = strings.ReplaceAll(p, root+string(filepath.Separator), "")
		}
	}
	return writeInspect(ctx, e, *format, v, *entries)
}

func writeInspect(ctx context.Context, e *env, format string, v inspect.Report, entries int) error {
	if format == "json" {
		return jsonid.WriteIndent(e.stdout, v)
	}
	inspect.WriteTextEntries(e.stdout, v, entries)
	return ctx.Err()
}

// inspectLogDir reports a log directory a partition at a time, each read
// whole and let go once reported (a broker's log.dirs entry does not fit in
// memory at once): the report is what inspect of the directory loaded whole
// gives, the partitions in the index's order. A partition too large for
// the directory's budget is left out, a problem saying so.
func inspectLogDir(ctx context.Context, dir *load.LogDir, o inspect.Options) (inspect.Report, error) {
	v := inspect.Report{Kind: input.KindLogDir, Problems: []string{}}
	for _, p := range dir.Problems {
		v.Problems = append(v.Problems, p.Error())
	}
	for _, en := range dir.Partitions() {
		c, err := dir.Open(ctx, en)
		if why, over := load.IsOverBudget(err); over {
			v.Problems = append(v.Problems, why)
			continue
		}
		if err != nil {
			return v, err
		}
		r := inspect.New(c, o)
		v.Partitions = append(v.Partitions, r.Partitions...)
		v.Problems = append(v.Problems, r.Problems...)
		v.CleanShutdown = v.CleanShutdown || r.CleanShutdown
	}
	return v, nil
}

// writeDemoDir builds demo name's scenario into a new temporary log
// directory, with every file a broker would have written (segments,
// indexes, snapshots, checkpoints), and returns it; the caller removes it.
func writeDemoDir(name string) (string, error) {
	d, err := findDemo(name)
	if err != nil {
		return "", err
	}
	if d.Scenario == nil {
		return "", usagef("demo %q is generated in memory and has no files to inspect", name)
	}
	b, err := d.Scenario.Build()
	if err != nil {
		return "", err
	}
	return b.WriteTemp("txnscope-inspect-")
}
