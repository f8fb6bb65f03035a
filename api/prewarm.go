package api

import (
	"net/http"
	"strconv"
)

// Prewarm wraps the handler of a page that will open the decision stream
// (the timeline, the embed, the lesson): it starts, in the background, the
// encoding that the page's websocket will ask for, with the options the
// page's URL carries (isolation, position, max_bytes, variant: the names
// the stream takes, normalised by the same parser, so the cache key is the
// one the stream looks up). The browser spends 100–300 ms parsing the page
// and loading its script before the websocket opens; on the 1M-batch demo
// the first encoding is a full pass of about that length, so the stream's
// meta message no longer waits for it after the socket opens.
//
// At most one prewarm runs at a time and an encoding already cached is not
// recomputed: a flood of page views with distinct options costs at most one
// full pass at a time, the same as the streams themselves (fullPasses).
func (a *API) Prewarm(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, topic := r.PathValue("id"), r.PathValue("topic")
		p, perr := strconv.ParseInt(r.PathValue("partition"), 10, 32)
		o, oerr := queryOptions(r)
		if perr == nil && oerr == nil && a.warming.CompareAndSwap(false, true) {
			go func() {
				defer a.warming.Store(false)
				// The page's handler builds a log that is built on first
				// request concurrently; both wait for the same build.
				if l, ok := a.cat.Log(id, topic, int32(p)); ok {
					a.cache.get(l, o)
				}
			}()
		}
		next.ServeHTTP(w, r)
	})
}
