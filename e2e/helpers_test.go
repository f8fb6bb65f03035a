package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/txnscope/txnscope/internal/cli"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/server"
	"github.com/txnscope/txnscope/txnindex"
)

// TestMain stops the Chromium the browser tests share (startChromium) after
// the last test.
func TestMain(m *testing.M) {
	code := m.Run()
	stopSharedChromium()
	gen.RemoveDemoFiles() // as cli.Main does when the command ends
	os.Exit(code)
}

// The command's exit codes the tests expect of cli.Run.
const (
	exitOK    = 0
	exitUsage = 2
)

// runArgs runs the command line args as the binary does (cli.Run).
func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// catalog is a server and the sources it serves, as the tests address
// them.
type catalog struct{ srv *server.Server }

// source is one partition a server serves.
type source struct {
	id, title, topic string
	partition        int32
	demo             bool
	seeks            []int64 // a demo scenario's consumer seeks
	srv              *server.Server
}

// get is the partition's log as the server serves it (Server.Log).
func (s *source) get() *txnindex.Log {
	l, _ := s.srv.Log(s.id, s.topic, s.partition)
	return l
}

// newCatalog is a server over the demos (the 1M-batch one left out), its
// segment summaries in memory only (nothing written to the user's cache
// directory), changed by set, closed at the test's end.
func newCatalog(t testing.TB, set ...func(*server.Options)) *catalog {
	t.Helper()
	o := server.DefaultOptions()
	o.Big, o.SummaryCacheDir = false, ""
	for _, f := range set {
		f(&o)
	}
	srv, err := server.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &catalog{srv}
}

// list is the sources in the server's order (Server.Sources).
func (c *catalog) list() []*source {
	var out []*source
	for _, s := range c.srv.Sources() {
		for _, p := range s.Partitions {
			src := &source{id: s.ID, title: s.Title, topic: p.Topic, partition: p.Partition, demo: s.Demo, srv: c.srv}
			if d, err := gen.FindDemo(s.ID); err == nil && s.Demo {
				src.seeks = d.Scenario.Seeks
			}
			out = append(out, src)
		}
	}
	return out
}

// find is the source of the partition, nil if the server has none.
func (c *catalog) find(id, topic string, partition int32) *source {
	for _, s := range c.list() {
		if s.id == id && s.topic == topic && s.partition == partition {
			return s
		}
	}
	return nil
}

// opened is the Options change that serves ld, read from path, whole as
// source id (server.Opened).
func opened(id, path string, ld *input.Contents) func(*server.Options) {
	return func(o *server.Options) {
		o.Opened = append(o.Opened, server.Opened{ID: id, Path: path, Contents: ld})
	}
}

// generated is the Options change that serves p, a partition built in
// memory, as source id titled title.
func generated(id, title string, p *txnindex.Partition) func(*server.Options) {
	return func(o *server.Options) {
		o.Opened = append(o.Opened, server.Opened{ID: id, Title: title,
			Contents: &input.Contents{Partitions: []*input.Partition{{Log: txnindex.Build(p)}}}})
	}
}

// loads is the Options change of `--load PATH` for each path.
func loads(paths ...string) func(*server.Options) {
	return func(o *server.Options) { o.Loads = append(o.Loads, paths...) }
}

// served is a real server started as `txnscope serve` runs it (New, then
// Run) on a loopback port.
type served struct {
	addr      string
	out, errb *syncBuffer
	proc      *testfixture.Serving
}

// startServe runs a server with serve's default options, changed by set,
// and waits until it listens. The demos are loaded; the 1M-batch one is
// left out unless set asks for it. Its exit code, as the command's, is 0
// when Run ends without error, else 1 (the error on errb).
func startServe(t *testing.T, set ...func(*server.Options)) *served {
	t.Helper()
	s := &served{out: &syncBuffer{}, errb: &syncBuffer{}}
	o := server.DefaultOptions()
	o.Addr, o.Big = "127.0.0.1:0", false
	for _, f := range set {
		f(&o)
	}
	o.Stdout, o.Stderr = s.out, s.errb
	s.proc = testfixture.StartServing(t, s.errb, func(ctx context.Context, ready func(string)) int {
		o.Listening = ready
		srv, err := server.New(ctx, o)
		if err == nil {
			err = srv.Run(ctx)
		}
		if err != nil {
			fmt.Fprintf(s.errb, "txnscope serve: %v\n", err)
			return 1
		}
		return 0
	})
	s.addr = s.proc.Addr
	return s
}

func (s *served) stop(t *testing.T) int { return s.proc.Stop(t) }

func (s *served) url(p string) string { return "http://" + s.addr + p }

// The HTTP helpers and the buffer the tests here share with server's and
// internal/cli's.
type syncBuffer = testfixture.SyncBuffer

var (
	do          = testfixture.Do
	get         = testfixture.Get
	getPage     = testfixture.GetPage
	getJSONInto = testfixture.GetJSONInto
)
