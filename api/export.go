package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/txnindex"
)

// ExportDetailLimit is the number of batches below which an export embeds
// every decision's reason (for hover) and the details of some batches
// (the detail panel, ExportDetailBatches); above it the page says they are
// left out.
const ExportDetailLimit = 5000

// ExportDetailBatches is how many batches' details an export embeds per
// isolation: the batches around the LSO, where the diagnosis points. A
// batch's detail is about 1 to 2 KB (with its records, at most
// exportRecordLimit) where its reason is about 150 bytes, so every batch's
// detail made 14.5 MB of 3,646 batches; the others' panels say to run
// `txnscope serve`.
const ExportDetailBatches = 300

// exportRecordLimit caps the records embedded per batch (the detail panel
// says how many the batch has), and exportRecordFieldBytes each key, value
// and header value of them (the panel shows the first 24 bytes of one
// that is not text): an export holds ExportDetailBatches batches' answers
// at once, for each isolation.
const (
	exportRecordLimit      = 10
	exportRecordFieldBytes = 1 << 10
)

// ExportIsolations are the consumers a static export holds: the default
// consumer (from the log start, default max bytes, Java rules) at each
// isolation level.
var ExportIsolations = []string{"read_committed", "read_uncommitted"}

// ExportData is what a static export (`txnscope export`) embeds for
// timeline.js to read in place of the server (see the comment at the top
// of static/js/timeline.js), per isolation level: the messages the
// decision stream sends (a text message as its JSON object, a binary frame
// as a base64 string), every decision's reason as [from, to, is a batch,
// reason], and every batch as the batch API answers it.
type ExportData struct {
	Version int                          `json:"version"`
	Streams map[string][]json.RawMessage `json:"streams"`
	Reasons map[string][][4]any          `json:"reasons"`
	Batches map[string][]json.RawMessage `json:"batches"`
	Note    string                       `json:"note,omitempty"`
}

// Export returns the data of a static export of l (of source id): what the
// stream (Recording), the decisions route (the reasons) and the batch
// route (BatchDetail, records decoded by records) answer for each of
// ExportIsolations, the batch route's for ExportDetailBatches of the
// batches (exportWindow) with a note saying so. A log of ExportDetailLimit
// batches or more gets the streams alone and a note saying why.
func Export(ctx context.Context, id string, l *txnindex.Log, records RecordSource) (*ExportData, error) {
	d := &ExportData{Version: 1, Streams: map[string][]json.RawMessage{}}
	detail := len(l.Batches) < ExportDetailLimit
	from, to := exportWindow(l)
	if detail {
		d.Reasons = map[string][][4]any{}
		d.Batches = map[string][]json.RawMessage{}
		if to-from < len(l.Batches) {
			d.Note = fmt.Sprintf("this export holds the details of %s of the %s (offsets %d–%d, around the LSO); `txnscope serve` shows them all",
				txnindex.Count(int64(to-from)), txnindex.Plural(len(l.Batches), "batch", "batches"), l.Batches[from].BaseOffset, l.Batches[to-1].LastOffset())
		}
	} else {
		d.Note = fmt.Sprintf("this export leaves out the reasons and batch details (%s, the limit is %s): run `txnscope serve` for them",
			txnindex.Plural(len(l.Batches), "batch", "batches"), txnindex.Count(ExportDetailLimit))
	}
	for _, iso := range ExportIsolations {
		o, err := Options{Isolation: iso, Position: -1}.consume()
		if err != nil {
			return nil, err
		}
		msgs, err := Recording(id, l, o)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", iso, err)
		}
		for _, m := range msgs {
			b := m.Data
			if m.Binary {
				b, _ = json.Marshal(base64.StdEncoding.EncodeToString(m.Data))
			}
			d.Streams[iso] = append(d.Streams[iso], b)
		}
		if !detail {
			continue
		}
		var decs []txnindex.Decision
		for dec := range l.Decisions(o) {
			decs = append(decs, dec)
		}
		d.Reasons[iso] = exportReasons(decs)
		if d.Batches[iso], err = exportBatches(ctx, records, id, l, o, decs, from, to); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// exportWindow is the batches whose details an export embeds, [from, to):
// ExportDetailBatches of them, the first batch at or above the LSO in the
// middle when the log is longer.
func exportWindow(l *txnindex.Log) (from, to int) {
	n := len(l.Batches)
	if n <= ExportDetailBatches {
		return 0, n
	}
	k := sort.Search(n, func(i int) bool { return l.Batches[i].LastOffset() >= l.LastStableOffset })
	from = min(max(k-ExportDetailBatches/2, 0), n-ExportDetailBatches)
	return from, from + ExportDetailBatches
}

// Script is d as the text of the page's <script type="application/json">
// element.
func (d *ExportData) Script() ([]byte, error) {
	b, err := jsonid.Marshal(d)
	if err != nil {
		return nil, err
	}
	// json.Marshal escapes <, > and &; this keeps "</" out even so.
	return bytes.ReplaceAll(b, []byte("</"), []byte(`<\/`)), nil
}

// exportReasons is every decision's reason: [from, to, is a batch,
// reason], the from, to, batch_index and reason the decisions route
// writes.
func exportReasons(decs []txnindex.Decision) [][4]any {
	out := make([][4]any, 0, len(decs))
	for i := range decs {
		d := &decs[i]
		out = append(out, [4]any{d.From, d.To, d.BatchIndex >= 0, d.Reason()})
	}
	return out
}

// exportBatches is the batch route's answer for the base offset of the
// batches [from, to) of l, their records capped at exportRecordLimit.
func exportBatches(ctx context.Context, records RecordSource, id string, l *txnindex.Log, o txnindex.ConsumeOptions, decs []txnindex.Decision, from, to int) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, to-from)
	for i := from; i < to; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The route resolves an offset to the first batch holding it,
		// which for overlapping batches (txnindex.GapOverlap) is an
		// earlier one; the export asks what the page would have asked.
		k := batchAt(l, l.Batches[i].BaseOffset)
		if k < 0 {
			return nil, fmt.Errorf("no batch holds offset %d", l.Batches[i].BaseOffset)
		}
		j := BatchDetail(ctx, records, id, l, k, o, decs, RecordPageRequest{Limit: exportRecordLimit, MaxBytes: MaxRecordsBytes, MaxFieldBytes: exportRecordFieldBytes})
		if j.RecordsTruncated {
			j.RecordsNote = fmt.Sprintf("the export holds the first %d of %d records", len(j.RecordList), j.RecordsTotal)
		}
		b, err := jsonid.Marshal(j)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
