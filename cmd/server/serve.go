package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/web"
)

// shutdownGrace is how long in-flight requests get on SIGINT/SIGTERM.
const shutdownGrace = 5 * time.Second

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[flags]", "Serve txnscope on the embedded demo scenarios and every --load PATH.")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address; loopback by default")
	var loads multiFlag
	fs.Var(&loads, "load", "add a log directory, partition directory, segment, capture or dump text (repeatable)")
	big := fs.Bool("big", true, "also offer the generated 1M-batch demo (built on first request)")
	var origins multiFlag
	fs.Var(&origins, "allowed-origin", "an origin (https://host[:port]) whose pages may embed the timeline in an iframe (repeatable; default: this server only)")
	hard := addHardeningFlags(fs) // limits and security: limits.go
	lf := addLiveFlags(fs, "also serve a live cluster's partitions, watched read-only (HOST:PORT[,HOST:PORT]; with --topic)")
	if err := refusePasswordFlag(args); err != nil {
		return err
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	ro := routeOptions{}
	for _, o := range origins {
		c, err := checkOrigin(o)
		if err != nil {
			return err
		}
		ro.allowedOrigins = append(ro.allowedOrigins, c)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	sec, err := hard.check(*addr, e.stderr)
	if err != nil {
		return err
	}
	ro.sec = sec
	ro.upload = hard.uploads()
	cat := demoCatalog(*big)
	for i, path := range loads {
		if err := hard.checkLoadSize(path); err != nil {
			return err
		}
		ld, err := input.Open(path)
		if err == nil {
			err = hard.checkLoaded(path, ld)
		}
		if err != nil {
			return err
		}
		for _, p := range ld.Problems {
			fmt.Fprintf(e.stderr, "warning: %v\n", p)
		}
		cat.add(fmt.Sprintf("load%d", i+1), path, ld)
		if err := hard.checkSources(cat, path); err != nil {
			return err
		}
	}
	if *lf.bootstrap != "" || *lf.topic != "" {
		stop, err := startLive(ctx, e, lf, cat) // live.go
		if err != nil {
			return err
		}
		defer stop()
	}
	// Listen first so a port error surfaces now, not in a goroutine.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	a := api.New(apiCatalog{cat}, newLimitedRecords(faultRecords{cat, loaderRecords{cat}}, hard.maxOpenFiles))
	hard.configure(a)
	srv := hard.server(routesWith(cat, a, ro))
	// Websockets are hijacked: Shutdown does not wait for them, so tell
	// the streams to close.
	srv.RegisterOnShutdown(a.Shutdown)
	fmt.Fprintf(e.stdout, "txnscope serving on http://%s/\n", ln.Addr())
	for _, s := range cat.list() {
		fmt.Fprintf(e.stdout, "  %-12s %s  http://%s%s\n", s.id, s.title, ln.Addr(), web.PartitionPath(s.id, s.topic, s.partition))
	}
	if e.ready != nil {
		e.ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), hard.shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		slog.Warn("shutdown", "err", err)
	}
	if err := waitStreams(sctx, a.Streams); err != nil {
		slog.Warn("shutdown", "err", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// source is one loaded partition. Its log is built on first use, so that a
// large generated demo costs nothing until someone opens it.
type source struct {
	id, title string
	topic     string
	partition int32
	build     func() *txnindex.Log
	files     *loader.Partition  // the files read, when there are any (records are decoded from them)
	live      *api.LivePartition // a partition of a watched cluster (live.go): its log changes
	upload    int                // the upload's number (upload.go); 0 for the demos, --load and live
	problems  []string           // what the loader could not read, shown on the timeline
	once      sync.Once
	mu        sync.Mutex // guards log for built
	log       *txnindex.Log
}

func (s *source) get() *txnindex.Log {
	if s.live != nil {
		return s.live.Log()
	}
	s.once.Do(func() {
		l := s.build()
		s.mu.Lock()
		s.log = l
		s.mu.Unlock()
	})
	return s.log
}

// built returns the log if it has been built, without building it.
func (s *source) built() *txnindex.Log {
	if s.live != nil {
		return s.live.Log()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log
}

// catalog is the loaded sources; it serves both api and web. Uploads add
// and evict sources while requests read it, so the list is copy-on-write:
// a reader takes one snapshot (list) and sees a consistent catalog for the
// whole of its work, never a slice being appended to; writers serialize on
// mu and publish a new slice.
type catalog struct {
	mu      sync.Mutex // serializes writers
	srcs    atomic.Pointer[[]*source]
	uploads int // upload ids handed out; ids are never reused
}

// list returns the sources as they are now. The slice must not be changed.
func (c *catalog) list() []*source {
	if p := c.srcs.Load(); p != nil {
		return *p
	}
	return nil
}

// put adds sources at the end of the catalog.
func (c *catalog) put(srcs ...*source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store(append(slices.Clone(c.list()), srcs...))
}

func (c *catalog) store(srcs []*source) { c.srcs.Store(&srcs) }

// add makes a source of each partition a --load PATH held.
func (c *catalog) add(id, path string, ld *input.Contents) { c.put(sourcesOf(id, path, ld)...) }

// sourcesOf makes a source of each partition ld holds, titled with name
// (a path, or an upload's file name) and the kind.
func sourcesOf(id, name string, ld *input.Contents) []*source {
	var problems []string
	for _, p := range ld.Problems {
		problems = append(problems, p.Error())
	}
	var out []*source
	for _, p := range ld.Partitions {
		l := p.Log
		f := ld.Dir(l.Topic, l.Partition)
		if f == nil && len(ld.Partitions) == 1 {
			f = ld.Segment // a single segment (nil if not kept)
		}
		s := &source{id: id, title: fmt.Sprintf("%s (%s)", name, ld.Kind), topic: l.Topic, partition: l.Partition,
			build: func() *txnindex.Log { return l }, files: f, problems: problems}
		s.get()
		out = append(out, s)
	}
	return out
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint([]string(*m)) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func (c *catalog) find(id, topic string, partition int32) *source {
	for _, s := range c.list() {
		if s.id == id && s.topic == topic && s.partition == partition {
			return s
		}
	}
	return nil
}

// apiCatalog and webCatalog adapt the catalog to the interface each
// package defines for itself.
type apiCatalog struct{ *catalog }

func (c apiCatalog) Sources() []api.Source {
	var out []api.Source
	for _, s := range c.list() {
		out = append(out, api.Source{ID: s.id, Title: s.title, Partitions: []api.PartitionRef{{Topic: s.topic, Partition: s.partition}}})
	}
	return out
}

func (c apiCatalog) Log(id, topic string, partition int32) (*txnindex.Log, bool) {
	if s := c.find(id, topic, partition); s != nil {
		return s.get(), true
	}
	return nil, false
}

type webCatalog struct{ *catalog }

func (c webCatalog) Sources() []web.Source {
	var out []web.Source
	for _, s := range c.list() {
		p := web.Partition{Topic: s.topic, Partition: s.partition}
		if l := s.built(); l != nil {
			p.Summary = web.Summary(l)
		}
		out = append(out, web.Source{ID: s.id, Title: s.title, Partitions: []web.Partition{p}, Problems: s.problems})
	}
	return out
}

func (c webCatalog) Log(id, topic string, partition int32) (*txnindex.Log, bool) {
	return apiCatalog(c).Log(id, topic, partition)
}

var (
	_ api.Catalog = apiCatalog{}
	_ web.Catalog = webCatalog{}
)
