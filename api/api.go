// Package api is txnscope's machine-facing boundary: versioned JSON and
// NDJSON under /api/v1/ (rest.go) and the decision stream over a websocket
// at /ws/v1/ (ws.go the connection, messages.go its JSON messages,
// stream.go the binary frames and the encodings every connection shares),
// which follows live partitions (live.go). The wire protocol is described in
// docs/protocol.md; the routes themselves are mounted by internal/cli
// (routes.go), which owns the URL table.
//
// The handlers see partitions only as *txnindex.Log values handed to them
// by a Catalog. Three files reach past it: upload.go reads a dropped file
// with loader/input (OpenBytes, as a file on disk is read); loaderrecords.go
// decodes a batch's records from a loader.Partition's segment; livefeed.go
// keeps the latest live.Update of `serve --bootstrap`. `txnscope export`'s
// page data comes from the same stream encoder (export.go). The diagnosis
// query comes from package view, and the diagnoses from the view.Diagnoser
// New is given, which the web pages share, so that a page and its API
// agree without web importing api. Its API is internal to txnscope.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// Version is the protocol version of the JSON and websocket messages.
const Version = 1

// Source is one loaded input (a demo, a directory, a capture) and the
// partitions it holds.
type Source struct {
	ID         string
	Title      string
	Partitions []PartitionRef
	// Demo: a built-in demo, whose diagnosis is aged by its own time
	// (view.DiagnoseClock), as its pages are.
	Demo bool
}

// PartitionRef names one partition of a source.
type PartitionRef struct {
	Topic     string
	Partition int32
}

// Catalog is what the handlers need from whoever loaded the data. Log may
// build a partition on first use; it must be safe for concurrent use.
type Catalog interface {
	Sources() []Source
	Log(id, topic string, partition int32) (*txnindex.Log, bool)
}

// Record is one decoded record of a batch, as the batch API returns it.
// Key and Value are base64 in JSON (null when null); KeyText and ValueText
// repeat them as text when they are valid UTF-8. A key or value cut to a
// page's MaxFieldBytes holds its first bytes, and KeySize or ValueSize its
// whole length (nil when it is whole).
type Record struct {
	Offset    int64    `json:"offset"`
	Timestamp int64    `json:"timestamp"`
	Key       []byte   `json:"key"`
	Value     []byte   `json:"value"`
	KeySize   *int     `json:"key_size,omitempty"`
	ValueSize *int     `json:"value_size,omitempty"`
	KeyText   *string  `json:"key_text,omitempty"`
	ValueText *string  `json:"value_text,omitempty"`
	Headers   []Header `json:"headers,omitempty"`
	// Control is the control record type ("COMMIT", "ABORT", ...) of a
	// record of a control batch, with the marker's coordinator epoch.
	Control          string `json:"control,omitempty"`
	CoordinatorEpoch *int32 `json:"coordinator_epoch,omitempty"`
}

// Header is one record header; a value cut as a record's is holds its first
// bytes, and ValueSize its whole length.
type Header struct {
	Key       string `json:"key"`
	Value     []byte `json:"value"`
	ValueSize *int   `json:"value_size,omitempty"`
}

// ErrNoRecords is what a RecordSource returns for a batch it has no bytes
// for (a generated demo, a capture without payloads).
var ErrNoRecords = errors.New("api: records are not available for this source")

// RecordSource decodes the records of a batch on demand, for the batch API.
// internal/cli supplies one (web_records.go) that reads the batch from the
// segment file its source keeps open, or from the bytes an uploaded segment
// keeps; without one, or for a source that keeps no bytes (ErrNoRecords),
// the batch API answers with the header, an empty record list and a note.
type RecordSource interface {
	Records(ctx context.Context, source string, l *txnindex.Log, b *txnindex.Batch) ([]Record, error)
}

// RecordSourceFunc adapts a function to RecordSource.
type RecordSourceFunc func(ctx context.Context, source string, l *txnindex.Log, b *txnindex.Batch) ([]Record, error)

// Records calls f.
func (f RecordSourceFunc) Records(ctx context.Context, source string, l *txnindex.Log, b *txnindex.Batch) ([]Record, error) {
	return f(ctx, source, l, b)
}

var _ RecordSource = RecordSourceFunc(nil)

// API holds the handlers. Create one with New; the zero value is not usable.
type API struct {
	cat     Catalog
	records RecordSource
	diags   *view.Diagnoser // shared with the pages (web.New), so that a page and its API agree
	cache   *streamCache
	// chunkSem bounds the websocket writers sending a decision chunk at
	// once (ws.go sendChunk, writetokens.go).
	chunkSem chan struct{}
	// chunkUntokened counts chunks written without a token (every token
	// held past chunkWait); chunkReleased counts tokens given back by a
	// write that blocked on its client.
	chunkUntokened, chunkReleased atomic.Int64
	// warming is set while a page's prewarm computes an encoding
	// (prewarm.go).
	warming atomic.Bool

	mu     sync.Mutex
	quit   chan struct{} // closed by Shutdown
	active atomic.Int64  // open websocket streams

	// Websocket timings and limits; New sets the defaults below and tests
	// may shorten them before serving.
	WriteWait  time.Duration
	PongWait   time.Duration
	PingPeriod time.Duration
	// ChunkSize is the number of decisions per binary chunk.
	ChunkSize int
	// Limits bound what a websocket client may send (ws.go); zero fields
	// take the defaults.
	Limits WSLimits

	// segmented serves the segment routes (segments.go); nil: not found.
	segmented Segmented
}

// New returns the handlers over cat, diagnosing through diags. records may
// be nil.
func New(cat Catalog, records RecordSource, diags *view.Diagnoser) *API {
	return &API{
		cat: cat, records: records, diags: diags, cache: newStreamCache(8), chunkSem: make(chan struct{}, 2*runtime.GOMAXPROCS(0)),
		WriteWait: writeWait, PongWait: pongWait, PingPeriod: pingPeriod, ChunkSize: defaultChunkSize,
	}
}

// httpError separates what the client sees (Msg) from what is logged (Err).
type httpError struct {
	Code int
	Msg  string
	Err  error
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s: %v", e.Code, e.Msg, e.Err) }

func (e *httpError) Unwrap() error { return e.Err }

func notFound(format string, a ...any) error {
	return &httpError{Code: http.StatusNotFound, Msg: fmt.Sprintf(format, a...)}
}

func badRequest(format string, a ...any) error {
	return &httpError{Code: http.StatusBadRequest, Msg: fmt.Sprintf(format, a...)}
}

// handler is an http.Handler that returns an error instead of writing it.
type handler func(w http.ResponseWriter, r *http.Request) error

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	err := h(w, r)
	if err == nil {
		return
	}
	if cerr := r.Context().Err(); cerr != nil && errors.Is(err, cerr) {
		// The request's deadline passed (--request-timeout, whose
		// middleware answers 503 naming it) or its client went away:
		// neither is the server's error.
		return
	}
	var he *httpError
	if !errors.As(err, &he) {
		he = &httpError{Code: http.StatusInternalServerError, Msg: "internal error", Err: err}
	}
	if he.Err != nil {
		slog.Error("api", "path", r.URL.Path, "code", he.Code, "err", he.Err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(he.Code)
	json.NewEncoder(w).Encode(map[string]any{"error": he.Msg, "code": he.Code})
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return jsonid.WriteIndent(w, v)
}

// partition resolves the {id}/{topic}/{partition} path values.
func (a *API) partition(r *http.Request) (id string, l *txnindex.Log, err error) {
	id, topic := r.PathValue("id"), r.PathValue("topic")
	p, perr := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	if perr != nil {
		return "", nil, badRequest("partition %q is not a number", r.PathValue("partition"))
	}
	if l, err := a.windowLog(r, id, topic, int32(p)); l != nil || err != nil {
		return id, l, err // one segment's window (segments.go)
	}
	l, ok := a.cat.Log(id, topic, int32(p))
	if !ok {
		return "", nil, notFound("no partition %s-%d in source %q", topic, p, id)
	}
	return id, l, nil
}

// Options are the consumer settings a client may choose.
type Options struct {
	Isolation string `json:"isolation"`
	Position  int64  `json:"position"`
	MaxBytes  int32  `json:"max_bytes"`
	Variant   string `json:"variant"`
}

// consume validates o and converts it.
func (o Options) consume() (txnindex.ConsumeOptions, error) {
	var c txnindex.ConsumeOptions
	if o.Isolation == "" {
		o.Isolation = "read_committed"
	}
	iso, err := txnindex.ParseIsolation(o.Isolation)
	if err != nil {
		return c, badRequest("isolation: want read_committed or read_uncommitted, not %q", o.Isolation)
	}
	v := txnindex.Variant(0)
	if o.Variant != "" {
		if v, err = txnindex.ParseVariant(o.Variant); err != nil {
			return c, badRequest("variant: %v", err)
		}
	}
	if o.MaxBytes < 0 {
		return c, badRequest("max_bytes must be positive")
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = txnindex.DefaultMaxBytes
	}
	pos := o.Position
	if pos < -1 {
		pos = -1
	}
	return txnindex.ConsumeOptions{From: pos, Isolation: iso, Variant: v, MaxBytes: o.MaxBytes}, nil
}

func optionsOf(c txnindex.ConsumeOptions) Options {
	return Options{Isolation: c.Isolation.String(), Position: c.From, MaxBytes: c.MaxBytes, Variant: c.Variant.String()}
}

// queryOptions reads isolation, position, max_bytes and variant from the query.
func queryOptions(r *http.Request) (txnindex.ConsumeOptions, error) {
	q := r.URL.Query()
	o := Options{Isolation: q.Get("isolation"), Position: -1, Variant: q.Get("variant")}
	var err error
	if s := q.Get("position"); s != "" {
		if o.Position, err = strconv.ParseInt(s, 10, 64); err != nil {
			return txnindex.ConsumeOptions{}, badRequest("position %q is not a number", s)
		}
	}
	if s := q.Get("max_bytes"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n <= 0 {
			return txnindex.ConsumeOptions{}, badRequest("max_bytes %q: want 1 to 2147483647", s)
		}
		o.MaxBytes = int32(n)
	}
	return o.consume()
}

func queryInt(r *http.Request, name string, def int64) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, badRequest("%s %q is not a number", name, s)
	}
	return n, nil
}
