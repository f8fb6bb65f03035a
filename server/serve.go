package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/live/metrics"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
	"github.com/txnscope/txnscope/web"
)

// Server is txnscope's HTTP server: the embedded demos and what Options
// load, the pages (package web) and the API (package api) over them on
// one route table (routes.go), within Options' limits.
type Server struct {
	o       Options
	cat     *catalog
	api     *api.API
	diags   *view.Diagnoser // the pages', the API's and /metrics' diagnoses, and the loads' evidence for them
	handler http.Handler

	cancel context.CancelFunc // ends the background work (Close)
	mu     sync.Mutex         // guards stops
	stops  []func()           // the live watchers' and scans' stop, each waiting for its end
	closed sync.Once
}

// UsageError is an Options value New refuses: the caller's mistake, told
// in the terms of the serve flag it names (the command exits 2 on it).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// New checks o, loads the demos and every Options.Loads path, and, with
// Options.Bootstrap, connects to the cluster and takes its first poll or
// scan, so that a bad path, a dead cluster or bad credentials fail here,
// before Run listens. ctx bounds that loading and the server's background
// work after it (the ranking of a log directory, the polls of a live
// cluster): they stop when ctx ends or Close is called.
func New(ctx context.Context, o Options) (*Server, error) {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	ro := routeOptions{now: o.Now}
	for _, org := range o.AllowedOrigins {
		c, err := checkOrigin(org)
		if err != nil {
			return nil, err
		}
		ro.allowedOrigins = append(ro.allowedOrigins, c)
	}
	sec, err := o.check(o.Stderr) // limits.go
	if err != nil {
		return nil, err
	}
	if o.MaxMemory <= 0 {
		return nil, usagef("--max-memory must be positive, not %d", o.MaxMemory)
	}
	ro.sec = sec
	ro.upload = o.uploads()
	ctx, cancel := context.WithCancel(ctx)
	s := &Server{o: o, cancel: cancel, diags: view.NewDiagnoser()}
	if err := s.load(ctx, &ro); err != nil {
		s.Close()
		return nil, err
	}
	ro.segs = newSegStores(s.cat, o.MaxMemory, o.SummaryCacheDir) // segments.go: the segment routes and the pages' strip
	s.api = api.New(apiCatalog{s.cat}, newLimitedRecords(faultRecords{s.cat, windowRecords{loaderRecords{s.cat}, ro.segs}}, o.MaxOpenFiles), s.diags)
	o.configure(s.api)
	// One budget, half of --max-memory, for the partitions opened
	// whole, the segment windows and the stream's kept encodings
	// (catalog_lazy_budget.go).
	s.api.SetCacheBytes(s.cat.mem.encodingBytes())
	s.cat.mem.share(ro.segs, s.api.CacheBytes, s.api.Forget)
	s.api.SetSegmented(ro.segs)
	s.handler = routesWith(s.cat, s.api, ro)
	return s, nil
}

// load fills the catalog: the demos, the loads, the in-memory partitions
// and the live cluster, and sets the /metrics the routes serve.
func (s *Server) load(ctx context.Context, ro *routeOptions) error {
	o := &s.o
	cat := demoCatalog(o.Big)
	cat.open, cat.mem, cat.diags = o.OpenFull, newMemBudget(o.MaxMemory), s.diags
	ro.mem = cat.mem
	s.cat = cat
	cat.names = map[string]string{}
	for i, n := range loadNames(o.Loads) {
		cat.names[o.Loads[i]] = n
	}
	for i, path := range o.Loads {
		id := fmt.Sprintf("load%d", i+1)
		// A log.dirs entry is listed now, ranked in the background, each
		// partition opened when asked for (catalog_lazy.go); a partition
		// over --max-source-bytes or --max-source-batches is listed
		// alone, drawn segment by segment as a log directory's partition
		// over them is (catalog_lazydir.go); the rest is read whole
		// (load.Open, load.Choose).
		in, err := load.Open(ctx, path, load.Question{Kind: load.Whole, Position: -1, LogDir: true, Segments: true}, o.budget())
		if why, over := load.IsOverBudget(err); over {
			return fmt.Errorf("--load %s: %s", path, why)
		}
		if err != nil {
			return err
		}
		switch {
		case in.Plan.Path == load.ReadLogDir:
			err = loadLogDir(ctx, o, cat, id, path, in.Dir)
		case in.Dir != nil:
			err = loadPartitionDir(ctx, cat, o, id, path, in.Dir, in.Plan.Why)
		default:
			for _, p := range in.Contents.Problems {
				fmt.Fprintf(o.Stderr, "warning: %v\n", p)
			}
			cat.add(id, path, in.Contents)
			err = o.checkSources(cat, path)
		}
		if err != nil {
			return err
		}
	}
	for _, op := range o.Opened {
		cat.addOpened(op, o.budget()) // opened.go
		if err := o.checkSources(cat, cmp.Or(op.Path, op.ID)); err != nil {
			return err
		}
	}
	switch {
	case o.Bootstrap != "" && o.Topic == "":
		ro.metrics = metrics.New(metrics.Options{})
		cs, stop, err := startCluster(ctx, o, cat, ro.metrics) // cluster_serve.go
		if err != nil {
			return err
		}
		s.onClose(stop)
		ro.cluster = cs
	case o.Bootstrap != "" || o.Topic != "":
		ro.metrics = metrics.New(metrics.Options{})
		cfg, err := o.liveConfig(o.Topic, o.Partitions, o.Last)
		if err != nil {
			return err
		}
		stop, err := startLive(ctx, o.Stderr, cfg, o.Record, cat, ro.metrics) // live.go
		if err != nil {
			return err
		}
		s.onClose(stop)
	case len(o.Loads) > 0 || len(cat.indexes) > 0:
		ro.metrics, ro.loaded = metrics.New(metrics.Options{}), true
	}
	return nil
}

// onClose adds stop to what Close runs.
func (s *Server) onClose(stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stops = append(s.stops, stop)
}

// Handler is the whole URL surface, the route table (routes.go) behind its
// middleware: what Run serves, and what a test drives with httptest.
func (s *Server) Handler() http.Handler { return s.handler }

// Sources lists the partitions served, as GET /api/v1/sources does.
func (s *Server) Sources() []api.Source { return apiCatalog{s.cat}.Sources() }

// Log is the log the pages and the API serve for a partition, built on
// first use as a request builds it; false when there is none.
func (s *Server) Log(id, topic string, partition int32) (*txnindex.Log, bool) {
	return apiCatalog{s.cat}.Log(id, topic, partition)
}

// Close stops the background work: the rankings of log directories, and
// the polls of a live cluster, waiting for them to end (a recording is
// flushed and closed). Run calls it when it returns; a caller of Handler
// alone calls it when done. It may be called more than once.
func (s *Server) Close() {
	s.closed.Do(func() {
		s.cancel()
		s.mu.Lock()
		stops := s.stops
		s.mu.Unlock()
		for _, stop := range stops {
			stop()
		}
	})
}

// Run listens on Options.Addr, prints the address and the sources served
// on Options.Stdout, and serves until ctx ends; then it shuts down
// gracefully: in-flight requests and the websocket streams' close frames
// get Options.ShutdownGrace, and the background work is stopped (Close).
// Run is called once.
func (s *Server) Run(ctx context.Context) error {
	defer s.Close()
	// Listen first so a port error surfaces now, not in a goroutine.
	ln, err := net.Listen("tcp", s.o.Addr)
	if err != nil {
		return err
	}
	srv := s.o.server(s.handler)
	// Websockets are hijacked: Shutdown does not wait for them, so tell
	// the streams to close.
	srv.RegisterOnShutdown(s.api.Shutdown)
	s.printServed(ln.Addr())
	if s.o.Listening != nil {
		s.o.Listening(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.o.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		slog.Warn("shutdown", "err", err)
	}
	if err := waitStreams(sctx, s.api.Streams); err != nil {
		slog.Warn("shutdown", "err", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// printServed writes the address served and a link to each source.
func (s *Server) printServed(addr net.Addr) {
	w := s.o.Stdout
	fmt.Fprintf(w, "txnscope serving on http://%s/\n", addr)
	var shown []*source
	width := 12 // the ids one column wide, the titles aligned after it
	for _, src := range s.cat.list() {
		if src.lazy != nil && s.cat.index(src.id) != nil {
			continue // a log directory's thousands: the index lists them
		}
		shown = append(shown, src)
		width = max(width, len(src.id))
	}
	for id := range s.cat.indexes {
		width = max(width, len(id))
	}
	for _, src := range shown {
		fmt.Fprintf(w, "  %-*s %s  http://%s%s\n", width, src.id, src.title, addr, web.PartitionPath(src.id, src.topic, src.partition))
	}
	for id, x := range s.cat.indexes {
		fmt.Fprintf(w, "  %-*s %s (log directory): %s listed, ranked by LSO lag in the background  http://%s/\n", width, id, x.Root, txnindex.Plural(len(x.Entries), "partition", "partitions"), addr)
	}
}

// waitStreams waits, up to ctx, for the websocket streams to send their
// close frames after Shutdown: http.Server does not track hijacked
// connections, so without this the process could exit before a client is
// told 1001 (going away).
func waitStreams(ctx context.Context, open func() int64) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for open() > 0 {
		select {
		case <-ctx.Done():
			return errors.New("websocket streams still open at the end of the shutdown grace")
		case <-t.C:
		}
	}
	return nil
}
