package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/live/metrics"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/logindex"
	"github.com/txnscope/txnscope/segsum"
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
	maxMemory := fs.Int64("max-memory", segsum.DefaultMaxMemory(), "memory the segment routes (…/segments, …/window) may take: the segments scanned for them hold at most half, least recently used first out, the rest is the garbage collector's headroom; default a quarter of this machine's memory")
	sumCache := fs.String("summary-cache-dir", defaultSummaryCache(), "directory for the per-segment summaries of the segment routes, so a restart need not rescan (never the log dir); empty: memory only")
	lf := addLiveFlags(fs, "also serve a live cluster, read-only (HOST:PORT[,HOST:PORT]): with --topic its partitions' timelines, without it every partition by LSO lag (cluster.go)")
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
	cat.names = map[string]string{}
	for i, n := range loadNames(loads) {
		cat.names[loads[i]] = n
	}
	for i, path := range loads {
		id := fmt.Sprintf("load%d", i+1)
		if logindex.IsLogDir(path) && !loader.IsKfakeDir(path) {
			// A log.dirs entry: listed now, ranked in the background,
			// each partition opened when asked for (catalog_lazy.go).
			if err := loadLogDir(ctx, e, cat, hard, id, path); err != nil {
				return err
			}
			continue
		}
		part := isPartitionDir(path)
		if err := hard.checkLoadSize(path); err != nil {
			if !part {
				return err
			}
			// One partition over --max-source-bytes: opened lazily and
			// drawn segment by segment, as a log directory's partition
			// over it is (catalog_lazydir.go).
			if err := loadPartitionDir(ctx, cat, hard, id, path, nil); err != nil {
				return err
			}
			continue
		}
		ld, err := input.OpenContext(ctx, path)
		if err != nil {
			return err
		}
		if err := hard.checkLoaded(path, ld); err != nil {
			if !part || len(ld.Partitions) != 1 {
				return err
			}
			// Over --max-source-batches: the same, the batches read
			// dropped and their segment files closed.
			for _, d := range ld.Dirs {
				for _, sf := range d.Segments {
					sf.Log.Close()
				}
			}
			name := filepath.Base(filepath.Clean(path))
			if err := loadPartitionDir(ctx, cat, hard, id, path, hard.limits().BatchesError(name, len(ld.Partitions[0].Log.Batches))); err != nil {
				return err
			}
			continue
		}
		for _, p := range ld.Problems {
			fmt.Fprintf(e.stderr, "warning: %v\n", p)
		}
		cat.add(id, path, ld)
		if err := hard.checkSources(cat, path); err != nil {
			return err
		}
	}
	if *lf.bootstrap != "" && *lf.topic == "" {
		ro.metrics = metrics.New(metrics.Options{})
		cs, stop, err := startCluster(ctx, e, fs, lf, cat, ro.metrics) // cluster_serve.go
		if err != nil {
			return err
		}
		defer stop()
		ro.cluster = cs
	} else if *lf.bootstrap != "" || *lf.topic != "" {
		ro.metrics = metrics.New(metrics.Options{})
		stop, err := startLive(ctx, e, lf, cat, ro.metrics) // live.go
		if err != nil {
			return err
		}
		defer stop()
	} else if len(loads) > 0 {
		ro.metrics, ro.loaded = metrics.New(metrics.Options{}), true
	}
	// Listen first so a port error surfaces now, not in a goroutine.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *maxMemory <= 0 {
		return usagef("--max-memory must be positive, not %d", *maxMemory)
	}
	ro.segs = newSegStores(cat, *maxMemory, *sumCache) // segments.go: the segment routes and the pages' strip
	a := api.New(apiCatalog{cat}, newLimitedRecords(faultRecords{cat, windowRecords{loaderRecords{cat}, ro.segs}}, hard.maxOpenFiles))
	hard.configure(a)
	a.SetSegmented(ro.segs)
	srv := hard.server(routesWith(cat, a, ro))
	// Websockets are hijacked: Shutdown does not wait for them, so tell
	// the streams to close.
	srv.RegisterOnShutdown(a.Shutdown)
	fmt.Fprintf(e.stdout, "txnscope serving on http://%s/\n", ln.Addr())
	for _, s := range cat.list() {
		if s.lazy != nil && cat.index(s.id) != nil {
			continue // a log directory's thousands: the index lists them
		}
		fmt.Fprintf(e.stdout, "  %-12s %s  http://%s%s\n", s.id, s.title, ln.Addr(), web.PartitionPath(s.id, s.topic, s.partition))
	}
	for id, x := range cat.indexes {
		fmt.Fprintf(e.stdout, "  %-12s %s (log directory): %s listed, ranked by LSO lag in the background  http://%s/\n", id, x.Root, txnindex.Plural(len(x.Entries), "partition", "partitions"), ln.Addr())
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

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint([]string(*m)) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

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
