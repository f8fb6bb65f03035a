package main

import (
	"bufio"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/txnscope/txnscope/txnindex"
)

// routes is the whole URL surface of the server, in one place.
func routes(srcs []source) http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	r.Get("/", func(w http.ResponseWriter, req *http.Request) {
		// Until the timeline lands (issue 5) the index is the engine's
		// read_committed decisions for each demo, as plain text.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		bw := bufio.NewWriter(w)
		for _, s := range srcs {
			fmt.Fprintf(bw, "== %s: %s\n", s.id, s.title)
			if err := writeText(req.Context(), bw, s.log.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted})); err != nil {
				return
			}
			fmt.Fprintln(bw)
		}
		bw.Flush()
	})
	return r
}
