package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/inspect"
	"github.com/txnscope/txnscope/scenario/gen"
)

// TestInspectLogDirOneAtATime: `inspect LOGDIR` reads the directory a
// partition at a time and prints what inspect of the directory loaded whole
// prints (inspect.New over input.OpenContext): real log dirs (internal
// topics, checkpoints), the join's log dir and a generated one with
// snapshots at each roll, with and without --batches.
func TestInspectLogDirOneAtATime(t *testing.T) {
	gd := t.TempDir()
	if _, err := gen.WriteLogDir(gd, gen.LogOptions{SegmentBytes: 32 << 10, TotalBytes: 4 * 32 << 10}, 2); err != nil {
		t.Fatal(err)
	}
	dirs := []string{
		filepath.Join("..", "..", "testdata", "realdata", "DonaldY_kafka-2.7.1", "kafka-logs"),
		filepath.Join("..", "..", "testdata", "realdata", "BiggerBrain_kafka", "data"),
		writeJoinLogDir(t),
		gd,
	}
	for _, dir := range dirs {
		for _, o := range []inspect.Options{{}, {Batches: true}} {
			args := []string{"inspect", "--format", "json"}
			if o.Batches {
				args = append(args, "--batches")
			}
			code, got, errOut := runArgs(t, append(args, dir)...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", dir, code, errOut)
			}
			c, err := input.OpenContext(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := jsonid.WriteIndent(&want, inspect.New(c, o)); err != nil {
				t.Fatal(err)
			}
			var r inspect.Report
			if err := json.Unmarshal([]byte(got), &r); err != nil || len(r.Partitions) == 0 {
				t.Fatalf("%s: %d partitions, %v", dir, len(r.Partitions), err)
			}
			if got != want.String() {
				t.Errorf("%s (batches %v): a partition at a time\n%s\nloaded whole\n%s", dir, o.Batches, got, want.String())
			}
		}
	}
}
