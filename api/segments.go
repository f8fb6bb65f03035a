package api

import (
	"bufio"
	"context"
	"net/http"
	"strconv"

	"github.com/txnscope/txnscope/txnindex"
)

// Segmented is a partition drawn segment by segment (package segsum, wired
// by the server): its overview from per-segment summaries, and the
// decisions of an offset range from the segments in view, scanned on
// demand and kept under the server's memory budget. It lets the timeline
// of a partition of any size be drawn without loading every batch.
type Segmented interface {
	// Overview is the JSON-ready overview of the partition; ok is false
	// when the partition is not one drawn by segments (not a partition
	// directory).
	Overview(ctx context.Context, id, topic string, partition int32) (v any, ok bool, err error)
	// Decisions calls f with the decisions of consumer o overlapping
	// [from, to], in offset order, each with the log of the segment it
	// comes from; f returns false to stop.
	Decisions(ctx context.Context, id, topic string, partition int32, from, to int64, o txnindex.ConsumeOptions,
		f func(l *txnindex.Log, d *txnindex.Decision) bool) (ok bool, err error)
}

// SegmentLogs is a Segmented that also hands out the log of one segment's
// window, for the pages of a partition too large to load whole: the
// stream and the REST routes of a request naming a segment (the
// …/segments/{segment}/… routes, or ?segment= on the stream) serve that
// window's log instead of the catalog's.
type SegmentLogs interface {
	WindowLog(ctx context.Context, id, topic string, partition int32, base int64) (*txnindex.Log, error)
}

// segmentOf is the base offset of the segment r names, ok false when it
// names none.
func segmentOf(r *http.Request) (int64, bool, error) {
	s := r.PathValue("segment")
	if s == "" {
		s = r.URL.Query().Get("segment")
	}
	if s == "" {
		return 0, false, nil
	}
	b, err := strconv.ParseInt(s, 10, 64)
	if err != nil || b < 0 {
		return 0, false, badRequest("segment %q is not a base offset", s)
	}
	return b, true, nil
}

// windowLog is the log of the segment window r names, nil when it names
// none.
func (a *API) windowLog(r *http.Request, id, topic string, p int32) (*txnindex.Log, error) {
	base, ok, err := segmentOf(r)
	if !ok || err != nil {
		return nil, err
	}
	sl, _ := a.segmented.(SegmentLogs)
	if sl == nil {
		return nil, notFound("segment views are not enabled")
	}
	l, err := sl.WindowLog(r.Context(), id, topic, p, base)
	if err != nil && r.Context().Err() != nil {
		return nil, err // cut by the request's deadline: ServeHTTP leaves the answer to the timeout
	}
	if err != nil {
		return nil, notFound("partition %s-%d of source %q: %v", topic, p, id, err)
	}
	return l, nil
}

// SetSegmented enables the segment routes over s.
func (a *API) SetSegmented(s Segmented) { a.segmented = s }

// segmentPath reads the {id}/{topic}/{partition} path values.
func segmentPath(r *http.Request) (string, string, int32, error) {
	p, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	if err != nil {
		return "", "", 0, badRequest("partition %q is not a number", r.PathValue("partition"))
	}
	return r.PathValue("id"), r.PathValue("topic"), int32(p), nil
}

// SegmentOverview serves GET …/segments: the partition's segments from
// their summaries (offsets, times, counts by outcome, aborted entries),
// the log's bounds, and which segments are held scanned.
func (a *API) SegmentOverview() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		if a.segmented == nil {
			return notFound("segment views are not enabled")
		}
		id, topic, p, err := segmentPath(r)
		if err != nil {
			return err
		}
		v, ok, err := a.segmented.Overview(r.Context(), id, topic, p)
		switch {
		case err != nil:
			return &httpError{Code: http.StatusInternalServerError, Msg: "the partition's segments could not be read", Err: err}
		case !ok:
			return notFound("partition %s-%d of source %q is not a partition directory drawn by segments", topic, p, id)
		}
		return writeJSON(w, v)
	})
}

// maxWindowDecisions bounds one window request: a viewport of the
// timeline shows a few thousand decisions; more is a request for the whole
// log, which the stream serves.
const maxWindowDecisions = 1 << 20

// SegmentWindow serves GET …/window?from=&to= with the consumer options
// of …/decisions: the decisions overlapping [from, to] as NDJSON, the
// objects …/decisions writes, computed from the segments in view only.
func (a *API) SegmentWindow() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		if a.segmented == nil {
			return notFound("segment views are not enabled")
		}
		id, topic, p, err := segmentPath(r)
		if err != nil {
			return err
		}
		o, err := queryOptions(r)
		if err != nil {
			return err
		}
		from, err := queryInt(r, "from", -1)
		if err != nil {
			return err
		}
		to, err := queryInt(r, "to", -1)
		if err != nil {
			return err
		}
		if from < 0 || to < from {
			return badRequest("window needs 0 <= from <= to, not from %d to %d", from, to)
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		bw := bufio.NewWriterSize(w, 1<<16)
		var line []byte
		n, werr := 0, error(nil)
		ok, err := a.segmented.Decisions(r.Context(), id, topic, p, from, to, o, func(l *txnindex.Log, d *txnindex.Decision) bool {
			line = append(appendDecisionJSON(line[:0], l, d), '\n')
			_, werr = bw.Write(line)
			n++
			return werr == nil && n < maxWindowDecisions && r.Context().Err() == nil
		})
		switch {
		case err != nil && n == 0:
			return &httpError{Code: http.StatusInternalServerError, Msg: "the segments in view could not be read", Err: err}
		case !ok:
			return notFound("partition %s-%d of source %q is not a partition directory drawn by segments", topic, p, id)
		case err != nil || werr != nil:
			return nil // the response has begun; the client sees it cut
		}
		return bw.Flush()
	})
}
