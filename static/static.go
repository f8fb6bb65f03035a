// Package static holds the browser assets (JavaScript, CSS) embedded in the
// binary, so that txnscope works offline and needs no CDN or front-end
// build. It is a leaf: it imports nothing from this module.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"sync"
)

// FS holds js/ and css/.
//
//go:embed js css
var FS embed.FS

// js/contract.js is generated from the Go constants the scripts share with
// the server (internal/gencontract); make test checks that it is fresh.
//
//go:generate go run ../internal/gencontract -out js/contract.js

// TimelineScripts are the timeline's classic scripts, in the order they
// must run: the served pages link them in this order (defer keeps it) and
// the static export inlines them in this order. Each adds to one namespace
// object (window.txnscopeTimeline) that the later ones use; contract.js
// comes first, timeline.js (which starts the timeline) last. ES modules
// would not load from the export's file:// URL.
var TimelineScripts = []string{
	"js/contract.js",
	"js/timeline-state.js",    // the namespace, the elements, the options and view from the URL
	"js/timeline-lanes.js",    // the rows of the plot: producers folded, capped, filtered
	"js/timeline-axes.js",     // layout, the offset and time axes, the view
	"js/timeline-stream.js",   // stream decoding into typed arrays, lookups
	"js/timeline-draw.js",     // the canvas, the batch list
	"js/timeline-overview.js", // the proportional overview: more decisions than pixels
	"js/timeline-markers.js",  // marker lines and labels, captured fetches
	"js/timeline-minimap.js",  // the whole log under the plot
	"js/timeline-detail.js",   // tooltip, reasons, the detail panel
	"js/timeline-input.js",    // mouse, keys, controls
	"js/timeline-segments.js", // one segment's window as part of one timeline
	"js/timeline.js",          // window.txnscope and the start
}

// HeadScripts run in <head> on every page, before the body is drawn and
// before the page's other scripts: format.js (window.txnscopeFormat, the
// one number and duration format) and theme.js (the light or dark theme,
// set before the first paint).
var HeadScripts = []string{"js/format.js", "js/theme.js"}

// Prefix is the URL path the assets are served under.
const Prefix = "/static/"

var (
	hashOnce sync.Once
	hashes   map[string]string // asset name -> short content hash
)

func loadHashes() {
	hashes = map[string]string{}
	fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := FS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		hashes[p] = hex.EncodeToString(sum[:6])
		return nil
	})
}

// Path returns the cache-busted URL of asset name (e.g. "js/timeline.js"):
// the content hash is in the query, so a new build is fetched at once and
// an unchanged asset is cached for good.
func Path(name string) string {
	hashOnce.Do(loadHashes)
	return Prefix + name + "?v=" + hashes[name]
}

// Handler serves the assets under Prefix. A request whose v matches the
// asset's hash may be cached forever; anything else must revalidate.
func Handler() http.Handler {
	hashOnce.Do(loadHashes)
	files := http.FileServer(http.FS(FS))
	return http.StripPrefix(strings.TrimSuffix(Prefix, "/"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		h, ok := hashes[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("v") == h {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	}))
}
