package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
)

// diagnoseSource loads diagnose's PATH. A partition directory of a data
// topic is read the way broker recovery reads it, from its newest producer
// snapshot and only the segments after it (loader.OpenPartitionTail, with
// the same answer as reading it all); the diagnosis says which segments were
// read, or why all were. --full-replay, and every other input, load as the
// other commands do.
func diagnoseSource(ctx context.Context, e *env, fs argLister, demo string, position int64, full bool) (*input.Contents, error) {
	if demo != "" || fs.NArg() != 1 || full {
		return sourceContentsContext(ctx, e, fs, demo)
	}
	path := fs.Arg(0)
	topic, _, _, err := loader.ParsePartitionDir(filepath.Base(filepath.Clean(path)))
	if st, serr := os.Stat(path); err != nil || serr != nil || !st.IsDir() || isInternalTopic(topic) {
		// The internal topics are read whole: their records are the
		// evidence (internalEvidence), not only their transactions.
		return sourceContentsContext(ctx, e, fs, demo)
	}
	if logs, _ := filepath.Glob(filepath.Join(path, "*.log")); len(logs) == 0 {
		return sourceContentsContext(ctx, e, fs, demo)
	}
	p, err := loader.OpenPartitionTail(ctx, path, loader.DefaultScanOptions, loader.TailOptions{Position: position})
	if err != nil {
		return nil, err
	}
	c := &input.Contents{Kind: input.KindPartitionDir, Dirs: []*loader.Partition{p}, Partitions: []*input.Partition{{Log: p.Build()}}}
	for _, d := range p.Damage {
		c.Problems = append(c.Problems, d)
		fmt.Fprintf(e.stderr, "warning: %v\n", d)
	}
	return c, nil
}
