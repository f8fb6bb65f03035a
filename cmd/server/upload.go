package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/web"
)

// uploadLimits are the serve flags that bound POST /api/v1/uploads.
type uploadLimits struct {
	maxBytes    int64         // --max-upload-bytes; 0 disables uploads
	maxUploads  int           // --max-uploads: uploads kept at once, the oldest evicted past it
	maxSources  int           // --max-sources: partitions served at once, uploads included
	maxBatches  int           // --max-source-batches, per partition
	bodyTimeout time.Duration // how long the body may take to arrive (--request-timeout); 0: the server's --read-timeout
}

// uploadSlots is how many uploads are read and decoded at once. Each holds
// its whole body in memory (up to --max-upload-bytes) plus what the loader
// builds from it, so a burst of uploads waits here instead of multiplying
// the peak memory; two keep both cores busy.
const uploadSlots = 2

// uploads serves POST /api/v1/uploads?name=FILE: the body is one file's
// bytes (a segment, a pcap/pcapng or raw capture, or kafka-dump-log.sh
// text), read into memory and never written anywhere, loaded exactly as
// serve --load loads a file, and served as a new source upload-N.
type uploads struct {
	cat   *catalog
	lim   uploadLimits
	slots chan struct{}
}

func newUploads(cat *catalog, lim uploadLimits) *uploads {
	return &uploads{cat: cat, lim: lim, slots: make(chan struct{}, uploadSlots)}
}

// uploadResponse is the 201 answer (docs/protocol.md).
type uploadResponse struct {
	Version    int               `json:"version"`
	ID         string            `json:"id"`
	Title      string            `json:"title"`
	Kind       string            `json:"kind"`
	Partitions []uploadPartition `json:"partitions"`
	Problems   []string          `json:"problems"`
	Evicted    []evictedUpload   `json:"evicted"`
}

type uploadPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	URL       string `json:"url"` // the timeline page
	API       string `json:"api"` // the partition's API prefix
}

// evictedUpload is an older upload removed to make room for this one.
type evictedUpload struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// uploadError is an error answer: {"error", "code"} as package api writes
// them, plus what the loader could read for a 422.
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

func (u *uploads) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if u.lim.maxBytes <= 0 {
		uploadFail(w, http.StatusForbidden, "uploads are disabled on this server (serve --max-upload-bytes 0)")
		return
	}
	name, err := uploadName(r.URL.Query().Get("name"))
	if err != nil {
		uploadFail(w, http.StatusBadRequest, err.Error())
		return
	}
	tooLarge := fmt.Sprintf("%s is larger than this server's upload limit of %s (%d bytes, serve --max-upload-bytes)",
		name, web.FormatBytes(u.lim.maxBytes), u.lim.maxBytes)
	// A declared length over the limit is refused before a byte is read.
	if r.ContentLength > u.lim.maxBytes {
		uploadFail(w, http.StatusRequestEntityTooLarge, tooLarge)
		return
	}
	// The server's --read-timeout (30 s) covers headers and body, and is
	// meant for requests with no body worth the name; a file of a few
	// hundred MiB over a slow link gets --request-timeout instead. Not
	// every ResponseWriter can (a test's recorder cannot): then the server's
	// own deadline stays.
	if u.lim.bodyTimeout > 0 {
		if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(u.lim.bodyTimeout)); err != nil {
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
		buf.Grow(int(r.ContentLength)) // at most maxBytes, checked above
	}
	// MaxBytesReader also covers a body sent without a length (chunked).
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, u.lim.maxBytes)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			uploadFail(w, http.StatusRequestEntityTooLarge, tooLarge)
			return
		}
		uploadFail(w, http.StatusBadRequest, fmt.Sprintf("%s: reading the upload: %v", name, err))
		return
	}
	ld, err := input.OpenBytes(name, buf.Bytes())
	if err != nil {
		uploadFail(w, http.StatusUnprocessableEntity, prefixed(name, err.Error()))
		return
	}
	problems := make([]string, 0, len(ld.Problems))
	for _, p := range ld.Problems {
		problems = append(problems, prefixed(name, p.Error()))
	}
	ld.Problems = nil // replaced by the prefixed texts below
	batches := 0
	for _, p := range ld.Partitions {
		n := len(p.Log.Batches)
		if n > u.lim.maxBatches {
			uploadFail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s: partition %s-%d holds %d batches, over --max-source-batches %d",
				name, p.Log.Topic, p.Log.Partition, n, u.lim.maxBatches))
			return
		}
		batches += n
	}
	if batches == 0 {
		// Damage before the first batch, or a file with none: there is
		// nothing to draw, so nothing is kept.
		uploadFail(w, http.StatusUnprocessableEntity, fmt.Sprintf("%s (%s): no batch could be read", name, ld.Kind), problems...)
		return
	}

	srcs, evicted, err := u.cat.putUpload(func(n int) []*source {
		srcs := sourcesOf(fmt.Sprintf("upload-%d", n), name, ld)
		for _, s := range srcs {
			s.upload, s.problems = n, problems
		}
		return srcs
	}, u.lim.maxUploads, u.lim.maxSources)
	if err != nil {
		uploadFail(w, http.StatusInsufficientStorage, fmt.Sprintf("%s: %v", name, err))
		return
	}
	id := srcs[0].id
	res := uploadResponse{Version: 1, ID: id, Title: srcs[0].title, Kind: ld.Kind, Problems: problems, Evicted: []evictedUpload{}}
	for _, s := range srcs {
		page := web.PartitionPath(s.id, s.topic, s.partition)
		res.Partitions = append(res.Partitions, uploadPartition{Topic: s.topic, Partition: s.partition, URL: page, API: "/api/v1" + page})
	}
	for _, s := range evicted {
		if len(res.Evicted) == 0 || res.Evicted[len(res.Evicted)-1].ID != s.id {
			res.Evicted = append(res.Evicted, evictedUpload{ID: s.id, Title: s.title})
		}
	}
	// A segment's bytes up to input.MaxKeptSegment stay with its source, in
	// memory, so that the detail panel can decode its records; the bytes of
	// anything else are not kept: the log holds what the pages need.
	slog.Info("upload", "id", id, "kind", ld.Kind, "bytes", buf.Len(), "partitions", len(srcs), "problems", len(problems), "evicted", len(res.Evicted))
	w.Header().Set("Location", "/api/v1/sources/"+id+"/partitions")
	writeUploadJSON(w, http.StatusCreated, res)
}

// uploadName makes the ?name= a label: the last element of whatever path a
// client sent (browsers send the base name; a script may send anything,
// such as ../../etc/passwd), without control characters, at most 255
// bytes. It is never used to open or create a file: it titles the source,
// prefixes errors and, as for serve --load, hints at the kind (.log) and
// names a segment's topic.
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

// errCatalogFull is an upload that cannot fit even with every older upload
// evicted.
var errCatalogFull = errors.New("no room")

// putUpload numbers an upload and adds the sources made for that number.
// Numbering under the same lock as the eviction keeps "oldest" meaning
// "lowest number": an upload numbered earlier but added later could
// otherwise outlive a newer one. When the catalog already holds
// maxUploads uploads, or the new partitions would bring it past
// maxSources, the oldest uploads are evicted first, whole, and returned:
// a person dropping files one after another wants the newest, and the
// server's memory stays bounded without asking anyone to clean up. The
// demos, --load and live sources are never evicted; an upload that does
// not fit beside them is refused.
func (c *catalog) putUpload(sources func(n int) []*source, maxUploads, maxSources int) (srcs, evicted []*source, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.uploads++
	srcs = sources(c.uploads)
	kept := slices.Clone(c.list())
	for {
		oldest, uploads := 0, map[int]bool{}
		for _, s := range kept {
			if s.upload > 0 {
				uploads[s.upload] = true
				if oldest == 0 || s.upload < oldest {
					oldest = s.upload
				}
			}
		}
		if len(uploads) < maxUploads && len(kept)+len(srcs) <= maxSources {
			break
		}
		if oldest == 0 {
			return nil, nil, fmt.Errorf("%w: its %d partitions and the %d served would pass --max-sources %d", errCatalogFull, len(srcs), len(kept), maxSources)
		}
		kept = slices.DeleteFunc(kept, func(s *source) bool {
			if s.upload == oldest {
				evicted = append(evicted, s)
				return true
			}
			return false
		})
	}
	c.store(append(kept, srcs...))
	return srcs, evicted, nil
}
