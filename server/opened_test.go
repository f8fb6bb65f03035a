package server

import (
	"context"
	"testing"

	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/logindex"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestOpenedSources: Options.Opened serves what the caller opened, after
// the demos: an input whole and titled as a --load of its path is, a
// partition built in memory by its title, and a listed log directory
// lazily, as --load DIR serves one.
func TestOpenedSources(t *testing.T) {
	dir := buildDemoDir(t)
	ld, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	x, err := logindex.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := gen.NewWriter("mem")
	w.Data(-1, 3, false)
	o := DefaultOptions()
	o.Big = false
	o.Opened = []Opened{
		{ID: "whole", Path: dir, Contents: ld},
		{ID: "mem", Title: "built in memory", Contents: &input.Contents{Partitions: []*input.Partition{{Log: txnindex.Build(w.Partition())}}}},
		{ID: "listed", Index: x},
	}
	s, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		id, topic, title string
		lazy             bool
	}{
		{"whole", "demo-interleaved", "logs/demo-interleaved-0 (log directory)", false},
		{"mem", "mem", "built in memory", false},
		{"listed", "demo-interleaved", "logs (log directory)", true},
	} {
		src := s.cat.find(c.id, c.topic, 0)
		if src == nil {
			t.Errorf("%s: %s-0 not served", c.id, c.topic)
			continue
		}
		if src.title != c.title || (src.lazy != nil) != c.lazy {
			t.Errorf("%s: title %q, lazy %v; want %q, %v", c.id, src.title, src.lazy != nil, c.title, c.lazy)
		}
		if l, ok := s.Log(c.id, c.topic, 0); !ok || len(l.Batches) == 0 {
			t.Errorf("%s: no log served", c.id)
		}
	}
}
