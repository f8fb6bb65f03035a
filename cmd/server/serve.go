package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/txnscope/txnscope/txnindex"
)

// shutdownGrace is how long in-flight requests get on SIGINT/SIGTERM.
const shutdownGrace = 5 * time.Second

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[flags]", "Serve txnscope on the embedded demo scenarios (and, later, --load PATH).")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address; loopback by default")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	var srcs []source
	for _, d := range demoScenarios() {
		srcs = append(srcs, source{id: d.name, title: d.title, log: txnindex.Build(d.partition())})
	}
	// Listen first so a port error surfaces now, not in a goroutine.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: routes(srcs), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "txnscope serving %d demo partitions on http://%s/\n", len(srcs), ln.Addr())
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
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		slog.Warn("shutdown", "err", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// source is one loaded partition.
type source struct {
	id, title string
	log       *txnindex.Log
}
