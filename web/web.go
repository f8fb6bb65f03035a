// Package web serves txnscope's human-facing pages: the index of loaded
// sources (sorted by LSO lag), the timeline of one partition with its
// stuck-LSO diagnosis panel (diag.go), the panel alone, the embed, the
// lesson step-through and quiz (lesson.go), and the self-contained pages of
// `txnscope export`. Handlers build view models (view.go) and templ
// components render them. The timeline's canvas is drawn in the browser by
// the scripts of static.TimelineScripts (static/js/timeline*.js) from the
// websocket stream that package api serves; a page only carries the
// stream's URL (an export inlines the stream's data instead), and web does
// not import api (imports_test.go): what both need lives in package view
// (diagnosis query and cache) and txnindex (lanes, decision labels). Its API
// is internal to txnscope.
package web

//go:generate go tool templ generate

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/pathname"
	"github.com/txnscope/txnscope/static"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// Source is one loaded input and its partitions.
type Source struct {
	ID         string
	Title      string
	Partitions []Partition
	// Problems are what the loader could not read (a truncated tail, a
	// bad CRC), each naming the file and byte; the timeline lists them so
	// that a person sees the partition is drawn from part of the input.
	Problems []string
	// Demo lists the source with the demos, apart from loaded data.
	Demo bool
	// Index is the progress of the lazily loaded log directory the source
	// belongs to (all its partitions share it); nil for other sources.
	Index *LogDirView
	// Path is the full path a loaded source was read from, shown only as
	// the title's tooltip ("" for demos, uploads and live sources).
	Path string
	// Tail, while a partition too large to wait for is shown from its
	// tail (its whole load under way), says what was read.
	Tail *TailRead
	// Seeks are the offsets a scenario's consumer seeks to (`seek 7`), in
	// order: the pages play the first unless the URL names a position.
	Seeks []int64
}

// TailRead is the part of a partition a tail view read: Read of its
// Total segments.
type TailRead struct {
	Read, Total int
}

// Partition names one partition of a source. Summary, when set, is a
// one-line description for the index (a partition built lazily has none
// until it is opened).
type Partition struct {
	Topic     string
	Partition int32
	Summary   string
	// Scan is a lazily loaded partition's tail scan; nil for the others.
	Scan *Scan
}

// Catalog is what the pages need from whoever loaded the data.
type Catalog interface {
	Sources() []Source
	Log(id, topic string, partition int32) (*txnindex.Log, bool)
}

// UI holds the page handlers.
type UI struct {
	cat   Catalog
	diags *view.Diagnoser // shared with the diagnosis API, so that a page and its API agree
	// UploadLimit is the largest file the index page accepts as a drop
	// (POST /api/v1/uploads); 0 hides the drop zone (uploads disabled).
	// Set it before serving.
	UploadLimit int64
	// Now is the server's clock, which pages age partitions against
	// unless they are demos or the query names a time (clock.go); nil is
	// time.Now. The browser tests fix it, so that their screenshots do not
	// change with the day they were taken on. Set it before serving.
	Now func() time.Time
}

// New returns the page handlers over cat, diagnosing through diags: the
// index, the timeline page and its panel share one computation per (log,
// options, second) with the diagnosis API given the same Diagnoser.
func New(cat Catalog, diags *view.Diagnoser) *UI { return &UI{cat: cat, diags: diags} }

// now reads the server's clock (UI.Now).
func (u *UI) now() time.Time {
	if u.Now != nil {
		return u.Now()
	}
	return time.Now()
}

// Index serves "/": every partition of every source, sorted by LSO lag
// (largest first), with who pins each LSO. Only partitions already built
// are diagnosed; the query takes the options of view.ParseDiagnoseQuery.
func (u *UI) Index() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := view.ParseDiagnoseQuery(r.URL.Query(), u.now()); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		v := indexRows(u.cat.Sources(), func(s Source, p Partition) PartitionRow {
			// Each row on its source's clock, as its page measures it
			// (view.DiagnoseClock: a demo by its own time).
			o, _, _ := view.DiagnoseClock(r.URL.Query(), u.now(), s.Demo)
			var d *diagnosis.Diagnosis
			if l := u.builtLog(s, p); l != nil {
				d = u.diags.Diagnose(l, o)
			} else if p.Scan != nil {
				d = p.Scan.Diagnosis // a lazy partition's tail, nil until scanned
			}
			return partitionRow(s, p, d, clockMs(o, d))
		})
		v.Upload = uploadView(u.UploadLimit)
		render(w, r, IndexPage(v))
	})
}

// Timeline serves /sources/{id}/partitions/{topic}/{partition}: the
// timeline and the stuck-LSO diagnosis panel (query as view.ParseDiagnoseQuery).
func (u *UI) Timeline() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, ok := u.timelinePage(w, r); ok {
			render(w, r, TimelinePage(v))
		}
	})
}

// SummaryFragment serves …/{partition}/summary: the summary above the
// timeline alone (numbers, pinned sentence, lesson links, the problems
// list), rendered from the view model the page itself is rendered from and
// with the page's query. A page drawn from a lazily loaded partition's tail
// swaps it in when the stream says the whole log has landed ("loaded",
// static/js/diagnosis.js): the tail's counts and its "the timeline shows
// its tail" problem are then stale.
func (u *UI) SummaryFragment() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, ok := u.timelinePage(w, r); ok {
			render(w, r, summary(v))
		}
	})
}

// timelinePage builds the view model of a partition's page from the
// request's path and query. When it cannot (a bad partition, no such
// partition, a bad query, a segment redirect) it has answered the request
// itself and returns false.
func (u *UI) timelinePage(w http.ResponseWriter, r *http.Request) (TimelineView, bool) {
	id, topic := r.PathValue("id"), r.PathValue("topic")
	p, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	if err != nil {
		http.Error(w, "partition is not a number", http.StatusBadRequest)
		return TimelineView{}, false
	}
	l, ok := u.cat.Log(id, topic, int32(p))
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		render(w, r, NotFoundPage("No partition "+topic+"-"+strconv.FormatInt(p, 10)+" in source "+strconv.Quote(id)+"."))
		return TimelineView{}, false
	}
	if u.seekRedirect(w, r, id) {
		return TimelineView{}, false
	}
	title, path, problems := "", "", []string(nil)
	var tail *TailRead
	for _, s := range u.cat.Sources() {
		// A log directory's partitions share the source id; each
		// has its own problems.
		if s.ID == id && (len(s.Partitions) != 1 || s.Partitions[0].Topic == topic && s.Partitions[0].Partition == int32(p)) {
			title, path, problems, tail = s.Title, s.Path, s.Problems, s.Tail
		}
	}
	o, bootstrap, clock, err := u.diagnoseOptions(r, id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return TimelineView{}, false
	}
	// A partition directory: the segment strip, and for one too
	// large to load whole, one segment's window (segments.go).
	l, strip, ok := u.windowOf(w, r, id, topic, int32(p), l)
	if !ok {
		return TimelineView{}, false
	}
	v := timelineView(id, title, l)
	v.Problems, v.Origin, v.Path = problems, requestOrigin(r), path
	dl := l // the log diagnosed: for a segment's window, the LSO's (segments.go)
	if v.Strip = strip; v.streamSegment(strip) {
		v.Problems = nil // why the tail was shown: the window replaces it
		dl = u.lsoWindow(r, id, topic, int32(p), strip, l)
		v.Pinned = timelineView(id, title, dl).Pinned
	} else if tail != nil {
		v.readTail(tail)
	}
	v.Diag = diagnosisViewFor(u.diags.Diagnose(dl, o), cmdFill{bootstrap, topicName(r)}, clock)
	v.Diag.ClientsHref = clientsHref(id, topic, int32(p))
	return v, true
}

// seekRedirect answers a request for a partition whose scenario seeks its
// consumer (the seek demo's `seek 7`) and whose query names no position
// with a redirect to the same URL at ?position= the first seek, so that
// the page, its lesson and its embed play the consumer the scenario
// describes (and the URL says so); it reports whether it did. An empty
// ?position= is the log start.
func (u *UI) seekRedirect(w http.ResponseWriter, r *http.Request, id string) bool {
	q := r.URL.Query()
	if q.Has("position") {
		return false
	}
	for _, s := range u.cat.Sources() {
		if s.ID == id && len(s.Seeks) > 0 {
			q.Set("position", strconv.FormatInt(s.Seeks[0], 10))
			http.Redirect(w, r, r.URL.EscapedPath()+"?"+q.Encode(), http.StatusFound)
			return true
		}
	}
	return false
}

// PartitionPath is the timeline URL of a partition.
func PartitionPath(id, topic string, partition int32) string {
	return "/sources/" + pathname.Segment(id) + "/partitions/" + pathname.Segment(topic) + "/" + strconv.Itoa(int(partition))
}

// render renders c fully before sending it, so a template error becomes a
// 500 rather than half a page (what templ.Handler does by default).
func render(w http.ResponseWriter, r *http.Request, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		slog.Error("web: render", "path", r.URL.Path, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

// Embed serves /embed/{id}/{topic}/{partition}: the timeline alone, without
// the site header, summary or diagnosis, filling its (i)frame. The query
// takes the timeline's own parameters (from, to, isolation, ...), which
// the script reads. The route itself is LessonEmbed, which answers with
// this page unless ?step=, ?autoplay=1 or ?quiz=1 asks for the lesson
// panel.
func (u *UI) Embed() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, topic := r.PathValue("id"), r.PathValue("topic")
		p, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
		if err != nil {
			http.Error(w, "partition is not a number", http.StatusBadRequest)
			return
		}
		l, ok := u.cat.Log(id, topic, int32(p))
		if !ok {
			http.Error(w, "no partition "+topic+"-"+strconv.FormatInt(p, 10)+" in source "+strconv.Quote(id), http.StatusNotFound)
			return
		}
		if u.seekRedirect(w, r, id) {
			return
		}
		// A partition too large to load whole: one segment's window,
		// as its page shows (segments.go), ?segment=BASE choosing it.
		l, strip, ok := u.windowOf(w, r, id, topic, int32(p), l)
		if !ok {
			return
		}
		v := timelineView(id, "", l)
		v.Chrome = chromeNone
		v.streamSegment(strip)
		render(w, r, TimelinePage(v))
	})
}

// StaticPage renders the self-contained timeline of l for `txnscope export`:
// the CSS and scripts inlined, data (HTML-safe JSON, see timeline.js's
// embedded data source) in the page, no URL of a server. d may be nil.
func StaticPage(ctx context.Context, w io.Writer, id, title string, l *txnindex.Log, d *diagnosis.Diagnosis, data []byte) error {
	v, err := staticTimelineView(id, title, l, d, data)
	if err != nil {
		return err
	}
	return TimelinePage(v).Render(ctx, w)
}

// staticTimelineView is the timeline view of the self-contained pages
// (StaticPage, StaticLessonPage): data and assets inlined, no server URL.
func staticTimelineView(id, title string, l *txnindex.Log, d *diagnosis.Diagnosis, data []byte) (TimelineView, error) {
	v := timelineView(id, title, l)
	if d != nil {
		clock := clockExport
		if d.Now == newestWrite(l) {
			clock = clockLog
		}
		v.Diag = diagnosisView(d, "", clock)
		// An export of a stuck partition is read for its diagnosis: it
		// comes first, above the lesson and the timeline.
		v.DiagFirst = v.Diag.Stuck
	}
	v.Chrome = chromeStatic
	v.WSPath, v.APIPath = "", ""
	v.Data = string(data)
	if err := inlineAssets(&v.Assets); err != nil {
		return TimelineView{}, err
	}
	return v, nil
}

// timelineScriptPaths returns the URLs of the timeline's scripts in load
// order (static.TimelineScripts).
func timelineScriptPaths() []string {
	out := make([]string, len(static.TimelineScripts))
	for i, s := range static.TimelineScripts {
		out[i] = static.Path(s)
	}
	return out
}

// headScriptPaths returns the URLs of the scripts every page runs in
// <head> (static.HeadScripts).
func headScriptPaths() []string {
	out := make([]string, len(static.HeadScripts))
	for i, s := range static.HeadScripts {
		out[i] = static.Path(s)
	}
	return out
}

// inlineAssets sets the texts of a's CSS and scripts, to be inlined into a
// page that has no server (the static export): the timeline's scripts in
// the order the served pages load them (static.TimelineScripts), then the
// diagnosis panel's.
func inlineAssets(a *Assets) error {
	css, err := readAsset("css/app.css", "</style")
	if err != nil {
		return err
	}
	a.CSSText, a.JSText = css, make([]string, len(static.TimelineScripts))
	for i, s := range static.TimelineScripts {
		if a.JSText[i], err = readAsset(s, "</script"); err != nil {
			return err
		}
	}
	a.HeadJSText = make([]string, len(static.HeadScripts))
	for i, s := range static.HeadScripts {
		if a.HeadJSText[i], err = readAsset(s, "</script"); err != nil {
			return err
		}
	}
	a.DiagJSText, err = readAsset("js/diagnosis.js", "</script")
	return err
}

// readAsset returns the asset name, with the closing tag end (which would
// end the inline <script> or <style> early) escaped.
func readAsset(name, end string) (string, error) {
	b, err := static.FS.ReadFile(name)
	return strings.ReplaceAll(string(b), end, `<\`+end[1:]), err
}

// windowOf is the log a partition's page or embed shows: for a partition
// directory too large to load whole, one segment's window (segments.go). It
// answers the request itself (404, or a redirect to the segment asked for)
// and returns false when it did.
func (u *UI) windowOf(w http.ResponseWriter, r *http.Request, id, topic string, p int32, l *txnindex.Log) (*txnindex.Log, *SegmentStrip, bool) {
	l, strip, redirect, err := u.segmentWindow(r, id, topic, p, l)
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusNotFound)
		return nil, nil, false
	case redirect != "":
		http.Redirect(w, r, redirect, http.StatusFound)
		return nil, nil, false
	}
	return l, strip, true
}

// streamSegment points v's stream and API at the segment strip shows, when
// it shows one segment's window; it reports whether.
func (v *TimelineView) streamSegment(strip *SegmentStrip) bool {
	if strip == nil || !strip.Windowed {
		return false
	}
	seg := strconv.FormatInt(strip.Shown.BaseOffset, 10)
	v.WSPath += "?segment=" + seg
	v.APIPath += "/segments/" + seg
	return true
}
