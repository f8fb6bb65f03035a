package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// demoWriter (below) lays out batch headers in memory without encoding
// them; only the generated 1M-batch demo uses it, since encoding a million
// batches would cost start-up time for nothing the loader needs to prove.

// demoScenario is a built-in partition: one of the scenario files embedded
// in package scenario, built into a real partition directory (segment bytes,
// indexes, snapshot, checkpoints) and read back through the same loader as
// any user's files.
type demoScenario struct {
	name, title string
	scenario    *scenario.Scenario
}

func demoScenarios() []demoScenario {
	demos, err := scenario.Demos()
	if err != nil {
		panic("embedded demo scenarios do not parse: " + err.Error()) // a build-time bug, caught by tests
	}
	var out []demoScenario
	for _, s := range demos {
		out = append(out, demoScenario{name: s.Name, title: s.Title, scenario: s})
	}
	return out
}

func findDemo(name string) (demoScenario, error) {
	var names []string
	for _, d := range demoScenarios() {
		if d.name == name {
			return d, nil
		}
		names = append(names, d.name)
	}
	sort.Strings(names)
	return demoScenario{}, usagef("unknown demo %q (have %v)", name, names)
}

var demoRoot = struct {
	once sync.Once
	dir  string
	err  error
}{}

// cleanupDemos removes the directory the demos were written to.
func cleanupDemos() {
	if demoRoot.dir != "" {
		os.RemoveAll(demoRoot.dir)
	}
}

// partition builds the scenario's files into a private temporary log
// directory (once per process) and loads them with the loader.
func (d demoScenario) partition() *txnindex.Partition {
	p, err := d.load()
	if err != nil {
		panic("demo " + d.name + ": " + err.Error()) // the embedded demos are tested; this is a bug
	}
	return p.Input
}

func (d demoScenario) load() (*loader.Partition, error) {
	demoRoot.once.Do(func() { demoRoot.dir, demoRoot.err = os.MkdirTemp("", "txnscope-demos-") })
	if demoRoot.err != nil {
		return nil, demoRoot.err
	}
	b, err := d.scenario.Build()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(demoRoot.dir, d.name)
	if _, err := os.Stat(dir); err != nil {
		tmp, err := os.MkdirTemp(demoRoot.dir, d.name+".tmp-")
		if err != nil {
			return nil, err
		}
		if err := b.WriteDir(tmp); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
			return nil, err
		}
	}
	return loader.OpenPartition(filepath.Join(dir, b.Dir))
}

type demoWriter struct {
	p        txnindex.Partition
	next     int64
	pos      int64
	ts       int64
	sequence map[txnindex.ProducerID]int32
}

func (w *demoWriter) add(b txnindex.Batch) {
	b.Segment = int32(len(w.p.Segments) - 1)
	b.SetPosition(w.pos)
	b.BaseTimestamp, b.MaxTimestamp = w.ts, w.ts
	w.ts += 1000
	w.pos += int64(b.Size)
	w.p.Segments[len(w.p.Segments)-1].Size = w.pos
	w.p.Batches = append(w.p.Batches, b)
	w.next = b.LastOffset() + 1
}

func (w *demoWriter) data(pid txnindex.ProducerID, n int, txn bool) {
	if w.sequence == nil {
		w.sequence = map[txnindex.ProducerID]int32{}
	}
	b := txnindex.BatchFields{BaseOffset: w.next, LastOffset: w.next + int64(n) - 1, Magic: 2, ProducerID: pid,
		Records: int32(n), Size: int32(61 + 24*n), BaseSequence: -1, CoordinatorEpoch: -1, Control: txnindex.ControlNone}.Batch()
	if pid >= 0 {
		b.SetBaseSequence(w.sequence[pid])
		w.sequence[pid] += int32(n)
	}
	if txn {
		b.SetAttributes(txnindex.AttrTransactional)
	}
	w.add(b)
}

func (w *demoWriter) marker(pid txnindex.ProducerID, ct txnindex.ControlType) {
	w.add(txnindex.BatchFields{BaseOffset: w.next, LastOffset: w.next, Magic: 2, ProducerID: pid, Records: 1, Size: 78,
		Attributes: txnindex.AttrTransactional | txnindex.AttrControl, BaseSequence: -1, Control: ct, CoordinatorEpoch: 0}.Batch())
}

func (w *demoWriter) roll() {
	w.p.Segments = append(w.p.Segments, txnindex.Segment{Name: fmt.Sprintf("%020d.log", w.next), BaseOffset: w.next})
	w.pos = 0
}
