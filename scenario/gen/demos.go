package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// Demo is a built-in partition: one of the scenario files embedded in
// package scenario, built into a real partition directory (segment bytes,
// indexes, snapshot, checkpoints) and read back through the same loader as
// any user's files.
type Demo struct {
	Name, Title string
	Scenario    *scenario.Scenario
}

// Demos are the embedded demo scenarios, sorted by name. They are parsed
// on every call; a parse error is a bug in the embedded files (the tests
// parse them all), so it panics.
func Demos() []Demo {
	demos, err := scenario.Demos()
	if err != nil {
		panic("embedded demo scenarios do not parse: " + err.Error())
	}
	var out []Demo
	for _, s := range demos {
		out = append(out, Demo{Name: s.Name, Title: s.Title, Scenario: s})
	}
	return out
}

// FindDemo returns the demo named name, or an error listing the names.
func FindDemo(name string) (Demo, error) {
	var names []string
	for _, d := range Demos() {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return Demo{}, fmt.Errorf("unknown demo %q (have %s)", name, strings.Join(names, ", "))
}

// demoRoot is the private directory the demos are written to, made on
// first use.
var demoRoot = struct {
	once sync.Once
	dir  string
	err  error
}{}

// RemoveDemoFiles removes the directory the demos were written to, when the
// process ends: Open fails after it.
func RemoveDemoFiles() {
	if demoRoot.dir != "" {
		os.RemoveAll(demoRoot.dir)
	}
}

// Partition builds the demo's files and loads them (Open); an error is a
// bug in the embedded demos, which are tested, so it panics.
func (d Demo) Partition() *txnindex.Partition {
	p, err := d.Open()
	if err != nil {
		panic("demo " + d.Name + ": " + err.Error())
	}
	return p.Input
}

// Log opens the demo's files (Open) and builds its log, its producers
// named as the scenario names them ("producer orders transactional id
// 7"), so that the lanes show the names.
func (d Demo) Log() (*loader.Partition, *txnindex.Log, error) {
	lp, err := d.Open()
	if err != nil {
		return nil, nil, err
	}
	l := txnindex.Build(lp.Input)
	l.ProducerNames = map[txnindex.ProducerID]string{}
	for _, p := range d.Scenario.Producers {
		l.ProducerNames[txnindex.ProducerID(p.ID)] = p.Name
	}
	return lp, l, nil
}

// Open builds the scenario's files into a private temporary log directory
// (once per process and demo) and loads them with the loader. The files
// stay, so that records can be decoded from them on demand.
func (d Demo) Open() (*loader.Partition, error) {
	demoRoot.once.Do(func() { demoRoot.dir, demoRoot.err = os.MkdirTemp("", "txnscope-demos-") })
	if demoRoot.err != nil {
		return nil, demoRoot.err
	}
	b, err := d.Scenario.Build()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(demoRoot.dir, d.Name)
	if _, err := os.Stat(dir); err != nil {
		// Written under a temporary name and renamed, so that a
		// concurrent Open never reads a half-written directory.
		tmp, err := os.MkdirTemp(demoRoot.dir, d.Name+".tmp-")
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
