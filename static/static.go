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
