package main

import (
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/genlogdir"
	"github.com/txnscope/txnscope/logindex"
)

// TestLazyPartTailFirst: while a partition's full load has not finished,
// its page gets the tail (pinned where the snapshot says, offsets before
// the roll not read) and a note that says so; once the load is done, the
// whole log with its files for record decoding.
func TestLazyPartTailFirst(t *testing.T) {
	dir := t.TempDir()
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: 1, Stuck: []string{"t0-0"}}); err != nil {
		t.Fatal(err)
	}
	x, err := logindex.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	lz := &lazyPart{x: x, e: x.Entries[0]}
	// A full load that has started and not finished (a partition of many
	// GiB): the start is taken, nothing loads.
	lz.start.Do(func() { lz.done, lz.began = make(chan struct{}), time.Now() })
	tail := lz.get()
	if tail == nil || lz.built() != nil || lz.filesOf(tail) != nil {
		t.Fatalf("tail %v, built %v", tail != nil, lz.built() != nil)
	}
	if tail.LastStableOffset != 0 || len(tail.Batches) == 0 || tail.Batches[0].BaseOffset == 0 {
		t.Errorf("tail: LSO %d (want 0, the snapshot's open transaction), first batch at %d (want the roll)", tail.LastStableOffset, tail.Batches[0].BaseOffset)
	}
	if p := strings.Join(lz.problemList(), " "); !strings.Contains(p, "loading the whole partition") || !strings.Contains(p, "the last 1 of 2 segments") || !strings.Contains(p, "Reload for all of it") {
		t.Errorf("problems while loading: %q", p)
	}
	lz.load()
	full := lz.get()
	if full == tail || full != lz.built() || lz.filesOf(full) == nil || full.Batches[0].BaseOffset != 0 || full.LastStableOffset != 0 {
		t.Errorf("after the load: the full log is not served")
	}
	if p := lz.problemList(); len(p) != 0 {
		t.Errorf("problems after the load: %q", p)
	}
}
