package api

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

// SourceJSON is one element of GET /api/v1/sources.
type SourceJSON struct {
	ID         string          `json:"id"`
	Title      string          `json:"title"`
	Partitions []PartitionJSON `json:"partitions"`
}

// PartitionJSON names a partition and, when the partition has been built,
// summarises it.
type PartitionJSON struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Summary   *Meta  `json:"summary,omitempty"`
}

// Sources serves GET /api/v1/sources. It does not build lazy partitions.
func (a *API) Sources() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		out := []SourceJSON{}
		for _, s := range a.cat.Sources() {
			sj := SourceJSON{ID: s.ID, Title: s.Title, Partitions: []PartitionJSON{}}
			for _, p := range s.Partitions {
				sj.Partitions = append(sj.Partitions, PartitionJSON{Topic: p.Topic, Partition: p.Partition})
			}
			out = append(out, sj)
		}
		return writeJSON(w, map[string]any{"version": Version, "sources": out})
	})
}

// Partitions serves GET /api/v1/sources/{id}/partitions with a summary of
// each (this builds them).
func (a *API) Partitions() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		for _, s := range a.cat.Sources() {
			if s.ID != id {
				continue
			}
			out := []PartitionJSON{}
			for _, p := range s.Partitions {
				pj := PartitionJSON{Topic: p.Topic, Partition: p.Partition}
				if l, ok := a.cat.Log(id, p.Topic, p.Partition); ok {
					m := summary(id, l)
					pj.Summary = &m
				}
				out = append(out, pj)
			}
			return writeJSON(w, map[string]any{"version": Version, "source": id, "partitions": out})
		}
		return notFound("no source %q", id)
	})
}

// DecisionJSON is one line of the decisions NDJSON: the verdict for the
// offsets [from, to] of one batch or one gap. It is the Go form of the
// JSON, for clients that decode it; the JSON itself is written by
// appendDecisionJSON (ndjson.go), and a test keeps these tags in step
// with it.
type DecisionJSON struct {
	From            int64   `json:"from"`
	To              int64   `json:"to"`
	Decision        string  `json:"decision"`
	Cause           string  `json:"cause"`
	ReadUncommitted string  `json:"read_uncommitted"`
	Reason          string  `json:"reason"`
	BatchIndex      int32   `json:"batch_index"`
	BaseOffset      *int64  `json:"batch_base_offset,omitempty"`
	LastOffset      *int64  `json:"batch_last_offset,omitempty"`
	ProducerID      *int64  `json:"producer_id,omitempty"`
	ProducerEpoch   *int16  `json:"producer_epoch,omitempty"`
	Transactional   bool    `json:"transactional"`
	Control         *string `json:"control"`
	Segment         string  `json:"segment,omitempty"`
	FetchOffset     int64   `json:"fetch_offset"`
	Txn             *TxnRef `json:"transaction,omitempty"`
}

// TxnRef is a transaction as other messages refer to it.
type TxnRef struct {
	ProducerID     int64  `json:"producer_id"`
	ProducerEpoch  int16  `json:"producer_epoch"`
	State          string `json:"state"`
	FirstOffset    int64  `json:"first_offset"`
	LastDataOffset int64  `json:"last_data_offset"`
	MarkerOffset   int64  `json:"marker_offset"`
	Batches        int    `json:"batches"`
	Records        int64  `json:"records"`
}

func txnRef(t *txnindex.Txn) *TxnRef {
	if t == nil {
		return nil
	}
	return &TxnRef{ProducerID: int64(t.ProducerID), ProducerEpoch: t.ProducerEpoch, State: t.State.String(),
		FirstOffset: t.FirstOffset, LastDataOffset: t.LastDataOffset, MarkerOffset: t.MarkerOffset,
		Batches: t.Batches, Records: t.Records}
}

// Decisions serves GET .../decisions as NDJSON, one object per decision
// range (a batch or a gap), in offset order. from and to restrict the
// output to ranges overlapping [from, to]; isolation, position, max_bytes
// and variant choose the consumer.
func (a *API) Decisions() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		l, o, from, to, err := a.rangeQuery(r, false)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		bw := bufio.NewWriterSize(w, 1<<16)
		ctx := r.Context()
		// The range is found by binary search in the decisions shared
		// through the stream cache (one pass per log and options), so a
		// small range costs its own size, not the log's.
		all, err := a.cache.decisionsCtx(ctx, l, o)
		if err != nil {
			return err
		}
		rng := decisionsOverlapping(all, from, to)
		var line []byte
		for n := range rng {
			if n%4096 == 4095 && ctx.Err() != nil {
				return nil
			}
			line = append(appendDecisionJSON(line[:0], l, &rng[n]), '\n')
			if _, err := bw.Write(line); err != nil {
				return nil // the client went away
			}
		}
		return bw.Flush()
	})
}

// rangeQuery reads a range request's partition, consumer options and
// offsets from and to. Without them the range is unbounded, or with
// logRange the log's offsets (log start to log end - 1).
func (a *API) rangeQuery(r *http.Request, logRange bool) (l *txnindex.Log, o txnindex.ConsumeOptions, from, to int64, err error) {
	if _, l, err = a.partition(r); err != nil {
		return
	}
	if o, err = queryOptions(r); err != nil {
		return
	}
	defFrom, defTo := int64(-1<<63), int64(1<<63-1)
	if logRange {
		defFrom, defTo = l.LogStartOffset, l.LogEndOffset-1
	}
	if from, err = queryInt(r, "from", defFrom); err != nil {
		return
	}
	to, err = queryInt(r, "to", defTo)
	return
}

// CountsJSON is GET .../counts: the true record counts of an offset range.
type CountsJSON struct {
	Version int      `json:"version"`
	Options *Options `json:"options"`
	txnindex.Counts
	Records int64 `json:"records"` // every record counted, markers included
}

// Counts serves GET .../counts?from=&to= with the consumer options of
// .../decisions: how many records of [from, to] are delivered, aborted,
// markers, pending or below the position, and how many offsets hold no
// record. from and to default to the log start and the log end - 1. The
// range is read from the stream's encoding, which the page's websocket has
// already computed (a binary search, then the range's own records), so the
// timeline asks it on every pan without a pass over the log and without
// building the full decision list the other routes keep.
func (a *API) Counts() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		l, o, from, to, err := a.rangeQuery(r, true)
		if err != nil {
			return err
		}
		if from > to {
			return badRequest("from %d is after to %d", from, to)
		}
		e, err := a.cache.getCtx(r.Context(), l, o)
		if err != nil {
			return err
		}
		c := txnindex.NewCounts(from, to)
		e.overlapping(l, from, to, c.Add)
		opts := optionsOf(o)
		return writeJSON(w, CountsJSON{Version: Version, Options: &opts, Counts: c, Records: c.Records()})
	})
}

// BatchJSON is GET .../batches/{offset}: the batch holding the offset, its
// transaction, its aborted-index entry, and the records when a RecordSource
// can decode them.
type BatchJSON struct {
	Version        int             `json:"version"`
	Index          int             `json:"index"`
	BaseOffset     int64           `json:"base_offset"`
	LastOffset     int64           `json:"last_offset"`
	BaseTimestamp  int64           `json:"base_timestamp"`
	MaxTimestamp   int64           `json:"max_timestamp"`
	ProducerID     int64           `json:"producer_id"`
	ProducerEpoch  int16           `json:"producer_epoch"`
	BaseSequence   int32           `json:"base_sequence"`
	LeaderEpoch    int32           `json:"partition_leader_epoch"`
	Records        int32           `json:"records_count"`
	Size           int32           `json:"size"`
	Position       int64           `json:"position"`
	Magic          int8            `json:"magic"`
	Attributes     int16           `json:"attributes"`
	Compression    string          `json:"compression"`
	TimestampType  string          `json:"timestamp_type"`
	Transactional  bool            `json:"transactional"`
	Control        *string         `json:"control"`
	Coordinator    int32           `json:"coordinator_epoch"`
	Segment        string          `json:"segment"`
	TxnIndexFile   string          `json:"txnindex"`
	Txn            *TxnRef         `json:"transaction"`
	AbortedEntry   *AbortedJSON    `json:"aborted_entry"`
	Decision       json.RawMessage `json:"decision,omitempty"` // a DecisionJSON
	RecordList     []Record        `json:"record_list"`
	RecordsNote    string          `json:"records_note,omitempty"`
	ConsumeOptions Options         `json:"options"`
	// The page of the records record_list holds (records.go): from
	// index records_from, at most records_limit, of records_total; when
	// more follow, records_truncated and records_next (the records_from
	// of the next page).
	RecordsFrom      int  `json:"records_from"`
	RecordsLimit     int  `json:"records_limit"`
	RecordsTotal     int  `json:"records_total"`
	RecordsTruncated bool `json:"records_truncated"`
	RecordsNext      *int `json:"records_next"`
}

// AbortedJSON is one .txnindex entry and the file it lives in.
type AbortedJSON struct {
	ProducerID       int64  `json:"producer_id"`
	FirstOffset      int64  `json:"first_offset"`
	LastOffset       int64  `json:"last_offset"`
	LastStableOffset int64  `json:"last_stable_offset"`
	File             string `json:"file"`
	FromDisk         bool   `json:"from_disk"`
}

func abortedJSON(a *txnindex.AbortInfo) *AbortedJSON {
	if a == nil {
		return nil
	}
	return &AbortedJSON{ProducerID: int64(a.Entry.ProducerID), FirstOffset: a.Entry.FirstOffset,
		LastOffset: a.Entry.LastOffset, LastStableOffset: a.Entry.LastStableOffset, File: a.IndexName, FromDisk: a.FromDisk}
}

// batchAt returns the index of the batch holding off, or -1.
func batchAt(l *txnindex.Log, off int64) int {
	lo, hi := 0, len(l.Batches)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l.Batches[m].LastOffset() < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(l.Batches) && l.Batches[lo].BaseOffset <= off {
		return lo
	}
	return -1
}

// Batch serves GET .../batches/{offset}; any offset of the batch works.
func (a *API) Batch() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		id, l, err := a.partition(r)
		if err != nil {
			return err
		}
		off, perr := strconv.ParseInt(r.PathValue("offset"), 10, 64)
		if perr != nil {
			return badRequest("offset %q is not a number", r.PathValue("offset"))
		}
		o, err := queryOptions(r)
		if err != nil {
			return err
		}
		page, err := recordPageQuery(r)
		if err != nil {
			return err
		}
		i := batchAt(l, off)
		if i < 0 {
			return notFound("no batch holds offset %d", off)
		}
		decs, err := a.cache.decisionsCtx(r.Context(), l, o)
		if err != nil {
			return err
		}
		return writeJSON(w, BatchDetail(r.Context(), a.records, id, l, i, o, decs, page))
	})
}

// BatchDetail is GET .../batches/{offset} for batch i of l (of source id)
// under options o: decs are every decision of l for o, in offset order;
// records decodes the batch's records (nil: not available).
func BatchDetail(ctx context.Context, records RecordSource, id string, l *txnindex.Log, i int, o txnindex.ConsumeOptions, decs []txnindex.Decision, page RecordPageRequest) BatchJSON {
	b := &l.Batches[i]
	j := BatchJSON{Version: Version, Index: i, BaseOffset: b.BaseOffset, LastOffset: b.LastOffset(),
		BaseTimestamp: b.BaseTimestamp, MaxTimestamp: b.MaxTimestamp, ProducerID: int64(b.ProducerID),
		ProducerEpoch: b.ProducerEpoch, BaseSequence: b.BaseSequence(), LeaderEpoch: b.PartitionLeaderEpoch,
		Records: b.Records, Size: b.Size, Position: b.Position(), Magic: b.Magic(), Attributes: b.Attributes(),
		Compression: b.Compression().String(), TimestampType: b.TimestampType().String(),
		Transactional: b.IsTransactional(), Control: controlName(b), Coordinator: b.CoordinatorEpoch(),
		ConsumeOptions: optionsOf(o), RecordList: []Record{}}
	if s := int(b.Segment); s >= 0 && s < len(l.Segments) {
		j.Segment = l.Segments[s].Name
		j.TxnIndexFile = l.Segments[s].TxnIndexName()
	}
	t := l.TxnOf(i)
	j.Txn = txnRef(t)
	if t != nil {
		j.AbortedEntry = abortedJSON(t.Entry)
	}
	for _, d := range decisionsOverlapping(decs, b.BaseOffset, b.LastOffset()) {
		if d.BatchIndex == int32(i) {
			j.Decision = appendDecisionJSON(nil, l, &d)
			if j.AbortedEntry == nil && d.AbortInfo != nil {
				j.AbortedEntry = abortedJSON(d.AbortInfo)
			}
			break
		}
		if d.From > b.LastOffset() {
			break
		}
	}
	switch {
	case records == nil:
		j.RecordsNote = "record decoding is not available for this source yet; the header is shown"
	default:
		batchRecords(ctx, records, id, l, b, page, &j)
	}
	return j
}

// text returns b as a string when it is printable UTF-8, else nil.
func text(b []byte) *string {
	if b == nil || !utf8.Valid(b) {
		return nil
	}
	s := string(b)
	for _, r := range s {
		if !unicode.IsPrint(r) && r != '\n' && r != '\t' {
			return nil
		}
	}
	return &s
}

// DiagnosisJSON is GET .../diagnosis: txnindex's stuck-LSO diagnosis (who
// pins the LSO, since when, how every open transaction classifies, the
// command that ends it and what that discards) with the protocol version
// and the same report as the CLI's runbook text.
type DiagnosisJSON struct {
	Version int `json:"version"`
	*diagnosis.Diagnosis
	Runbook string `json:"runbook"`
	// Clock says whose time "now" is (view.DiagnoseClock): the pages'
	// rule, so that the API ages a demo as its page does.
	Clock string `json:"clock"`
}

// Diagnosis serves GET .../diagnosis. The query parameters are those of
// view.ParseDiagnoseQuery, the clock the pages' (view.DiagnoseClock: a
// demo source is aged by its own time); the diagnosis comes from the
// Diagnoser the web pages share.
func (a *API) Diagnosis() http.Handler {
	return handler(func(w http.ResponseWriter, r *http.Request) error {
		id, l, err := a.partition(r)
		if err != nil {
			return err
		}
		o, clock, err := view.DiagnoseClock(r.URL.Query(), time.Now(), a.isDemo(id))
		if err != nil {
			return badRequest("%s", err)
		}
		d, runbook := a.diags.DiagnoseRunbook(l, o)
		return writeJSON(w, DiagnosisJSON{Version: Version, Diagnosis: d, Runbook: runbook, Clock: clock})
	})
}

// isDemo reports whether source id is one of the built-in demos.
func (a *API) isDemo(id string) bool {
	for _, s := range a.cat.Sources() {
		if s.ID == id {
			return s.Demo
		}
	}
	return false
}
