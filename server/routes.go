package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/guard"
	"github.com/txnscope/txnscope/internal/pathname"
	"github.com/txnscope/txnscope/live/metrics"
	"github.com/txnscope/txnscope/static"
	"github.com/txnscope/txnscope/web"
)

// routes is the whole URL surface of the server, in one place. No route has
// a timeout middleware: the websocket stream is long-lived, and the JSON
// handlers stop when the client goes away.
func routes(cat *catalog, a *api.API) http.Handler { return routesWith(cat, a, routeOptions{}) }

// routeOptions are the serve flags that shape the routes.
type routeOptions struct {
	// allowedOrigins may frame the pages (serve --allowed-origin), besides
	// the server itself.
	allowedOrigins []string
	sec            *security     // limits and token (limits.go, package guard); nil in tests that need none
	upload         uploadOptions // POST /api/v1/uploads (upload.go); the zero value disables uploads
	// Live modes (serve --bootstrap): the Prometheus collector behind
	// /metrics, and without --topic the cluster view (cluster_serve.go).
	metrics *metrics.Collector
	// loaded: /metrics is the --load partitions' (metrics_load.go),
	// observed at each scrape.
	loaded  bool
	cluster *clusterServe
	// now is the pages' clock (web.UI.Now); nil is time.Now. Only the
	// browser tests set it.
	now func() time.Time
	// segs draws partition directories segment by segment (segments.go);
	// nil: no strip, no windows.
	segs *segStores
	// mem is the memory budget of the partitions opened whole, on
	// /metrics (catalog_lazy_budget.go); nil: none.
	mem *memBudget
}

// extraMetrics are the server's own collectors beside o.metrics'.
func (o routeOptions) extraMetrics() []prometheus.Collector {
	if o.mem == nil {
		return nil
	}
	return []prometheus.Collector{newBudgetMetrics(o.mem)}
}

func routesWith(cat *catalog, a *api.API, o routeOptions) http.Handler {
	var wc web.Catalog = webCatalog{cat}
	if o.segs != nil {
		wc = segWebCatalog{webCatalog{cat}, o.segs} // the segment strip and windows (segments.go)
	}
	ui := web.New(wc, cat.diags) // the diagnoses the API shares (api.New)
	ui.UploadLimit = o.upload.MaxBytes
	ui.Now = o.now
	r := chi.NewRouter()
	r.Use(o.middlewares()...) // recover, strict headers, token, timeout: package guard
	// Routes on the names themselves: a topic "a;b", ".." or "~x"
	// (package pathname, which web's paths are written by).
	r.Use(pathname.Routing)

	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	// Prometheus text (live/metrics), behind the token like every route.
	switch {
	case o.metrics != nil && o.loaded:
		r.Get("/metrics", loadedMetrics(cat, o.metrics, o.extraMetrics()...).ServeHTTP)
	case o.metrics != nil:
		r.Get("/metrics", o.metrics.Handler(o.extraMetrics()...).ServeHTTP)
	default:
		r.Get("/metrics", noMetrics)
	}

	// Pages (package web). Only the server itself and the allowed origins
	// may frame them.
	//
	// The websocket the embedded page opens comes from the page's own
	// origin (this server), so gorilla's same-origin check passes inside a
	// cross-origin iframe; api has no hook to widen that check, and none
	// is needed for embedding.
	csp := guard.FrameAncestors(o.allowedOrigins)
	r.Group(func(r chi.Router) {
		r.Use(csp)
		if o.cluster != nil {
			// The cluster view is the index; the loaded sources
			// (demos, --load, opened partitions) move to /sources.
			r.Get("/", o.cluster.index().ServeHTTP)
			r.Get("/sources", ui.Index().ServeHTTP)
			// Opens the live timeline of a partition's tail.
			r.Get("/cluster/{topic}/{partition}", o.cluster.open().ServeHTTP)
		} else {
			r.Get("/", ui.Index().ServeHTTP)
		}
		// The pages that open the decision stream start computing it while
		// the browser loads the page (api/prewarm.go).
		r.With(a.Prewarm).Get("/sources/{id}/partitions/{topic}/{partition}", ui.Timeline().ServeHTTP)
		// The diagnosis panel alone, which the page swaps in when the
		// consumer position changes.
		r.Get("/sources/{id}/partitions/{topic}/{partition}/diagnosis", ui.DiagnosisPanel().ServeHTTP)
		// The same offsets as every client variant decides them, side by
		// side (web/clients.go).
		r.Get("/sources/{id}/partitions/{topic}/{partition}/clients", ui.Clients().ServeHTTP)
		// The summary above the timeline alone (its numbers and problems
		// list), which the page swaps in when a lazily loaded partition's
		// whole log replaces the tail it was drawn from.
		r.Get("/sources/{id}/partitions/{topic}/{partition}/summary", ui.SummaryFragment().ServeHTTP)
		// The timeline alone, for an iframe; ?step=N and ?autoplay=1 add
		// the lesson panel (web/lesson.go).
		r.With(a.Prewarm).Get("/embed/{id}/{topic}/{partition}", ui.LessonEmbed().ServeHTTP)
		r.With(a.Prewarm).Get("/lessons/{id}/{topic}/{partition}", ui.Lesson().ServeHTTP)
		r.Get("/lessons", ui.Lessons().ServeHTTP) // every partition's lesson, quiz and embed
	})

	// Embedded assets, cache-busted by a content hash in the query.
	r.Handle(static.Prefix+"*", static.Handler())

	// JSON and NDJSON (package api); docs/protocol.md describes them.
	r.Route("/api/v1", func(r chi.Router) {
		r.Get("/sources", a.Sources().ServeHTTP)
		r.Get("/sources/{id}/partitions", a.Partitions().ServeHTTP)
		partition := func(r chi.Router) {
			r.Get("/decisions", a.Decisions().ServeHTTP)
			r.Get("/counts", a.Counts().ServeHTTP)
			r.Get("/batches/{offset}", a.Batch().ServeHTTP)
			r.Get("/diagnosis", a.Diagnosis().ServeHTTP)
			r.Get("/fetches", a.Fetches().ServeHTTP)
			r.Get("/compare", a.Compare().ServeHTTP)
		}
		r.Route("/sources/{id}/partitions/{topic}/{partition}", func(r chi.Router) {
			partition(r)
			// The same routes over one segment's window, for the page
			// of a partition too large to load whole (api.SegmentLogs).
			r.Route("/segments/{segment}", partition)
			// A partition directory drawn segment by segment
			// (api/segments.go, segments.go): its overview from
			// per-segment summaries, and an offset window's decisions
			// from the segments in view.
			r.Get("/segments", a.SegmentOverview().ServeHTTP)
			r.Get("/window", a.SegmentWindow().ServeHTTP)
		})
		// A dropped file becomes a new source (api/upload.go, upload.go).
		// It is the one route that changes the server's state, so it
		// also refuses cross-origin browser requests (CSRF); the token,
		// when set, is checked by the stack above like everywhere else.
		up := api.NewUploads(uploadCatalog{cat, o.upload.maxUploads, o.upload.maxSources, o.upload.maxMemory}, o.upload.UploadLimits)
		r.With(guard.SameOrigin(o.allowedOrigins)).Post("/uploads", up.ServeHTTP)
	})

	// The decision stream: a websocket, outside any timeout.
	r.Get("/ws/v1/sources/{id}/partitions/{topic}/{partition}", a.Stream().ServeHTTP)
	return r
}

// checkOrigin validates an --allowed-origin: scheme://host[:port], nothing
// more, so that it cannot break out of the CSP header.
func checkOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, " ;,'\"") {
		return "", usagef("--allowed-origin %q: want an origin such as https://docs.example.com", s)
	}
	return u.Scheme + "://" + u.Host, nil
}

// middlewares is the stack every route runs behind, outermost first:
// panics are recovered before anything else can fail, the security headers
// are on every answer (the 401 and the 500 included), the token is checked
// before any handler sees the request, and the per-request timeout wraps
// the handlers only.
func (o routeOptions) middlewares() []func(http.Handler) http.Handler {
	mw := []func(http.Handler) http.Handler{guard.Recover, guard.Headers(o.allowedOrigins)}
	if o.sec != nil && o.sec.checkHost {
		mw = append(mw, guard.Hosts(o.sec.addrHost, o.allowedOrigins))
	}
	if o.sec != nil && o.sec.token != nil {
		mw = append(mw, o.sec.token.Middleware)
	}
	if o.sec != nil && o.sec.requestTimeout > 0 {
		mw = append(mw, guard.Timeout(o.sec.requestTimeout, "--request-timeout"))
	}
	return mw
}

// security is what the serve flags add to the routes (limits.go).
type security struct {
	token          *guard.Token  // nil: no --auth-token-file
	requestTimeout time.Duration // 0: none
	// checkHost refuses a Host header that is not loopback, addrHost or an
	// allowed origin's (DNS rebinding); off with --listen-public.
	checkHost bool
	addrHost  string
}
