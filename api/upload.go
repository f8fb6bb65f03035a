package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

// UploadLimits bound POST /api/v1/uploads.
type UploadLimits struct {
	MaxBytes    int64         // the largest body; 0 disables uploads
	MaxBatches  int           // the most batches one uploaded partition may hold
	BodyTimeout time.Duration // how long the body may take to arrive; 0: the server's own read deadline
	// MinRate is the slowest a body may arrive, in bytes per second on
	// average, once MinRateGrace has passed; 0: no minimum. Without it two
	// clients sending a byte a second hold both upload slots for the
	// whole BodyTimeout.
	MinRate      int64
	MinRateGrace time.Duration
	MinRateFlag  string // names the setting ("serve --min-upload-rate")

	// The errors name how to raise a limit: MaxBytesText is MaxBytes as
	// the index page shows it ("256 MiB"); MaxBytesFlag and MaxBatchesFlag
	// name the settings ("serve --max-upload-bytes").
	MaxBytesText, MaxBytesFlag, MaxBatchesFlag string
}

// ErrUploadTooLarge is an AddUpload error for an upload that would hold
// more memory than the server allows uploads (413, not 507).
var ErrUploadTooLarge = errors.New("upload too large for the upload memory")

// UploadCatalog is the catalog uploads are added to.
type UploadCatalog interface {
	// AddUpload numbers the upload and serves each partition c holds as
	// a new source titled with name, showing problems. To make room it
	// may evict older uploads, which it reports; an upload that cannot
	// fit is an error.
	AddUpload(name string, c *input.Contents, problems []string) (Upload, error)
}

// Upload is what AddUpload added, and evicted.
type Upload struct {
	ID, Title  string
	Partitions []UploadPartition
	Evicted    []EvictedUpload
}

// uploadSlots is how many uploads are read and decoded at once. Each holds
// its whole body in memory (up to MaxBytes) plus what the loader builds
// from it, so a burst of uploads waits here instead of multiplying the
// peak memory; two keep both cores busy.
const uploadSlots = 2

// Uploads serves POST /api/v1/uploads?name=FILE: the body is one file's
// bytes (a segment, a pcap/pcapng or raw capture, or kafka-dump-log.sh
// text), read into memory and never written anywhere, read by
// input.OpenBytes exactly as a file on disk is read by input.Open, and
// served as a new source of cat.
type Uploads struct {
	cat   UploadCatalog
	lim   UploadLimits
	slots chan struct{}
}

// NewUploads is the upload handler adding to cat within lim.
func NewUploads(cat UploadCatalog, lim UploadLimits) *Uploads {
	return &Uploads{cat: cat, lim: lim, slots: make(chan struct{}, uploadSlots)}
}

// UploadResponse is the 201 answer (docs/protocol.md).
type UploadResponse struct {
	Version    int               `json:"version"`
	ID         string            `json:"id"`
	Title      string            `json:"title"`
	Kind       string            `json:"kind"`
	Partitions []UploadPartition `json:"partitions"`
	Problems   []string          `json:"problems"`
	Evicted    []EvictedUpload   `json:"evicted"`
}

// UploadPartition is one partition of an upload and where it is served.
type UploadPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	URL       string `json:"url"` // the timeline page
	API       string `json:"api"` // the partition's API prefix
}

// EvictedUpload is an older upload removed to make room for this one.
type EvictedUpload struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// uploadError is an error answer: {"error", "code"} as the other routes
// write them, plus what the loader could read for a 422.
type uploadError struct {
	Error    string   `json:"error"`
	Code     int      `json:"code"`
	Problems []string `json:"problems,omitempty"`
}

func writeUploadJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	// json's default HTML escaping keeps a hostile file name inert even if
	// a client were to paste the answer into a page.
	json.NewEncoder(w).Encode(v)
}

func uploadFail(w http.ResponseWriter, code int, msg string, problems ...string) {
	writeUploadJSON(w, code, uploadError{Error: msg, Code: code, Problems: problems})
}

func (u *Uploads) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u.lim.MaxBytes <= 0 {
		uploadFail(w, http.StatusForbidden, fmt.Sprintf("uploads are disabled on this server (%s 0)", u.lim.MaxBytesFlag))
		return
	}
	name, err := uploadName(r.URL.Query().Get("name"))
	if err != nil {
		uploadFail(w, http.StatusBadRequest, err.Error())
		return
	}
	tooLarge := fmt.Sprintf("%s is larger than this server's upload limit of %s (%d bytes, %s)",
		name, u.lim.MaxBytesText, u.lim.MaxBytes, u.lim.MaxBytesFlag)
	// A declared length over the limit is refused before a byte is read.
	if r.ContentLength > u.lim.MaxBytes {
		uploadFail(w, http.StatusRequestEntityTooLarge, tooLarge)
		return
	}
	// The server's read timeout covers headers and body, and is meant for
	// requests with no body worth the name; a file of a few hundred MiB
	// over a slow link gets BodyTimeout instead. Not every ResponseWriter
	// can (a test's recorder cannot): then the server's own deadline
	// stays.
	if u.lim.BodyTimeout > 0 {
		if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(u.lim.BodyTimeout)); err != nil {
			slog.Debug("upload: cannot extend the read deadline", "err", err)
		}
	}
	select {
	case u.slots <- struct{}{}:
	case <-r.Context().Done():
		uploadFail(w, http.StatusServiceUnavailable, fmt.Sprintf("%s: the server was busy reading %d other uploads until the request ended", name, uploadSlots))
		return
	}
	defer func() { <-u.slots }()

	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength)) // at most MaxBytes, checked above
	}
	body := io.Reader(r.Body)
	var slow *rateGuard
	if u.lim.MinRate > 0 {
		slow = newRateGuard(w, r.Body, u.lim.MinRate, u.lim.MinRateGrace)
		defer slow.stop()
		body = slow
	}
	// MaxBytesReader also covers a body sent without a length (chunked).
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, io.NopCloser(body), u.lim.MaxBytes)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			uploadFail(w, http.StatusRequestEntityTooLarge, tooLarge)
			return
		}
		if slow != nil && slow.tooSlow.Load() {
			w.Header().Set("Connection", "close")
			uploadFail(w, http.StatusRequestTimeout, fmt.Sprintf("%s: the upload arrived slower than this server's minimum of %s/s (%s): %s in %s",
				name, formatRate(u.lim.MinRate), u.lim.MinRateFlag, txnindex.Plural(slow.n.Load(), "byte", "bytes"), txnindex.Duration(time.Since(slow.start))))
			return
		}
		uploadFail(w, http.StatusBadRequest, fmt.Sprintf("%s: reading the upload: %v", name, err))
		return
	}
	// The load stops when the request ends (the client left, or
	// --request-timeout): a control-batch bomb does not run on.
	c, err := input.OpenBytesContext(r.Context(), name, buf.Bytes())
	if err != nil {
		uploadFail(w, http.StatusUnprocessableEntity, prefixed(name, err.Error()))
		return
	}
	problems := make([]string, 0, len(c.Problems))
	for _, p := range c.Problems {
		problems = append(problems, prefixed(name, p.Error()))
	}
	c.Problems = nil // replaced by the prefixed texts
	batches := 0
	for _, p := range c.Partitions {
		n := len(p.Log.Batches)
		if n > u.lim.MaxBatches {
			uploadFail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s: partition %s-%d holds %d batches, over %s %d",
				name, p.Log.Topic, p.Log.Partition, n, u.lim.MaxBatchesFlag, u.lim.MaxBatches))
			return
		}
		batches += n
	}
	if batches == 0 {
		// Damage before the first batch, or a file with none: there is
		// nothing to draw, so nothing is kept.
		uploadFail(w, http.StatusUnprocessableEntity, fmt.Sprintf("%s (%s): no batch could be read", name, c.Kind), problems...)
		return
	}

	up, err := u.cat.AddUpload(name, c, problems)
	if err != nil {
		if errors.Is(err, ErrUploadTooLarge) {
			uploadFail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s: %v", name, err))
			return
		}
		uploadFail(w, http.StatusInsufficientStorage, fmt.Sprintf("%s: %v", name, err))
		return
	}
	res := UploadResponse{Version: 1, ID: up.ID, Title: up.Title, Kind: c.Kind, Partitions: up.Partitions, Problems: problems, Evicted: up.Evicted}
	if res.Evicted == nil {
		res.Evicted = []EvictedUpload{}
	}
	// A segment's bytes up to input.MaxKeptSegment stay with its source,
	// in memory, so that the detail panel can decode its records; the
	// bytes of anything else are not kept: the log holds what the pages
	// need.
	slog.Info("upload", "id", up.ID, "kind", c.Kind, "bytes", buf.Len(), "partitions", len(up.Partitions), "problems", len(problems), "evicted", len(res.Evicted))
	w.Header().Set("Location", "/api/v1/sources/"+up.ID+"/partitions")
	writeUploadJSON(w, http.StatusCreated, res)
}

// uploadName makes the ?name= a label: the last element of whatever path a
// client sent (browsers send the base name; a script may send anything,
// such as ../../etc/passwd), without control characters, at most 255
// bytes. It is never used to open or create a file: it titles the source,
// prefixes errors and, as for a path, hints at the kind (.log) and names a
// segment's topic.
func uploadName(q string) (string, error) {
	n := q[strings.LastIndexAny(q, `/\`)+1:]
	n = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(n, ""))
	n = strings.TrimSpace(n)
	if len(n) > 255 {
		n = strings.ToValidUTF8(n[:255], "")
	}
	if n == "" || n == "." || n == ".." {
		return "", fmt.Errorf("want ?name=FILE, the uploaded file's name (it tells a .log segment and titles the source); got %q", q)
	}
	return n, nil
}

// prefixed makes sure a problem names the upload it is about: the loaders
// name the file in most messages, not all.
func prefixed(name, msg string) string {
	if strings.Contains(msg, name) {
		return msg
	}
	return name + ": " + msg
}

// rateGuard reads an upload's body and drops it once, after the grace
// period, fewer than rate bytes per second have arrived on average since
// the start. A watchdog checks every tick, so a client that sends nothing
// at all is dropped too: it sets the connection's read deadline to now,
// which ends the blocked Read.
type rateGuard struct {
	r       io.Reader
	n       atomic.Int64
	tooSlow atomic.Bool
	start   time.Time
	done    chan struct{}
	once    sync.Once
}

var errUploadTooSlow = errors.New("upload slower than the minimum rate")

func newRateGuard(w http.ResponseWriter, r io.Reader, rate int64, grace time.Duration) *rateGuard {
	g := &rateGuard{r: r, start: time.Now(), done: make(chan struct{})}
	rc := http.NewResponseController(w)
	tick := min(grace/4+time.Millisecond, time.Second)
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-g.done:
				return
			case <-t.C:
				if g.slow(rate, grace) {
					g.tooSlow.Store(true)
					// A test's recorder has no connection: then
					// only a Read that returns sees tooSlow.
					_ = rc.SetReadDeadline(time.Now())
					return
				}
			}
		}
	}()
	return g
}

// slow: past the grace period, the average rate since the start is under
// rate.
func (g *rateGuard) slow(rate int64, grace time.Duration) bool {
	el := time.Since(g.start)
	return el > grace && float64(g.n.Load()) < float64(rate)*el.Seconds()
}

func (g *rateGuard) Read(p []byte) (int, error) {
	if g.tooSlow.Load() {
		return 0, errUploadTooSlow
	}
	n, err := g.r.Read(p)
	g.n.Add(int64(n))
	if err != nil && g.tooSlow.Load() {
		return n, errUploadTooSlow
	}
	return n, err
}

func (g *rateGuard) stop() { g.once.Do(func() { close(g.done) }) }

// formatRate writes bytes per second in KiB or MiB.
func formatRate(b int64) string {
	switch {
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d B", b)
}
