package main

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/static"
	"github.com/txnscope/txnscope/web"
)

// routes is the whole URL surface of the server, in one place. No route has
// a timeout middleware: the websocket stream is long-lived, and the JSON
// handlers stop when the client goes away.
func routes(cat *catalog, a *api.API) http.Handler {
	ui := web.New(webCatalog{cat})
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)

	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })

	// Pages (package web).
	r.Get("/", ui.Index().ServeHTTP)
	r.Get("/sources/{id}/partitions/{topic}/{partition}", ui.Timeline().ServeHTTP)

	// Embedded assets, cache-busted by a content hash in the query.
	r.Handle(static.Prefix+"*", static.Handler())

	// JSON and NDJSON (package api); docs/protocol.md describes them.
	r.Route("/api/v1", func(r chi.Router) {
		r.Get("/sources", a.Sources().ServeHTTP)
		r.Get("/sources/{id}/partitions", a.Partitions().ServeHTTP)
		r.Route("/sources/{id}/partitions/{topic}/{partition}", func(r chi.Router) {
			r.Get("/decisions", a.Decisions().ServeHTTP)
			r.Get("/batches/{offset}", a.Batch().ServeHTTP)
			r.Get("/diagnosis", a.Diagnosis().ServeHTTP)
		})
	})

	// The decision stream: a websocket, outside any timeout.
	r.Get("/ws/v1/sources/{id}/partitions/{topic}/{partition}", a.Stream().ServeHTTP)
	return r
}
