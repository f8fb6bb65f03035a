package server

import (
	"context"
	"os"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/live"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/view"
)

// diagnosing gives c a Diagnoser of its own, as New gives the server's
// catalog the server's: the pages, the API and the loads' evidence need
// one.
func diagnosing(c *catalog) *catalog {
	c.diags = view.NewDiagnoser()
	return c
}

// The helpers the server's tests share. The fixtures (kfake clusters, log
// dirs) come from internal/testfixture, as internal/cli's and e2e's do, so
// that a page and the command are tested on one story.

// realdata holds the real files the tests read (testdata/realdata/README.md).
const realdata = "../testdata/realdata"

// testOptions are serve's default options on a loopback port without the
// 1M-batch demo, changed by set.
func testOptions(set ...func(*Options)) Options {
	o := DefaultOptions()
	o.Addr, o.Big = "127.0.0.1:0", false
	for _, f := range set {
		f(&o)
	}
	return o
}

// serveErr is New's error for testOptions(set...), nil when the server
// starts (it is then closed).
func serveErr(t *testing.T, set ...func(*Options)) error {
	t.Helper()
	s, err := New(context.Background(), testOptions(set...))
	if err == nil {
		s.Close()
	}
	return err
}

// writeScenario builds the scenario file name into the log directory dir,
// as `txnscope scenario build NAME --out DIR` does.
func writeScenario(t *testing.T, name, dir string) {
	t.Helper()
	sc, err := scenario.ParseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sc.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
}

// The HTTP helpers and the buffer the tests here share with internal/cli's
// and e2e's.
type syncBuffer = testfixture.SyncBuffer

var (
	do          = testfixture.Do
	get         = testfixture.Get
	getPage     = testfixture.GetPage
	getJSONInto = testfixture.GetJSONInto
)

// recordPoll writes the fetch exchanges of one poll of topic's partition 0
// at addr to file, a raw capture, as `txnscope watch --once --record FILE`
// does.
func recordPoll(t *testing.T, addr, topic, file string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	w, err := live.Dial(ctx, live.Config{Brokers: []string{addr}, Topic: topic, Partitions: []int32{0}, From: -1, Record: f})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Poll(ctx); err != nil {
		w.Close()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
