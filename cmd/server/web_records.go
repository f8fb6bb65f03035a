package main

import (
	"context"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/txnindex"
)

// loaderRecords decodes a batch's records from the segment file it was read
// from, on demand: the batch API's api.RecordSource.
type loaderRecords struct{ cat *catalog }

var _ api.RecordSource = loaderRecords{}

func (r loaderRecords) Records(ctx context.Context, id string, l *txnindex.Log, b *txnindex.Batch) ([]api.Record, error) {
	var src *source
	for _, s := range r.cat.list() {
		if s.id == id && s.built() == l {
			src = s
		}
	}
	if src == nil || src.files == nil || b.Segment < 0 || int(b.Segment) >= len(src.files.Segments) {
		return nil, api.ErrNoRecords
	}
	recs, err := src.files.Segments[b.Segment].Log.Records(*b)
	if err != nil {
		return nil, err
	}
	out := make([]api.Record, 0, len(recs))
	for _, rec := range recs {
		ar := api.Record{Offset: rec.Offset, Timestamp: rec.Timestamp, Key: rec.Key, Value: rec.Value}
		for _, h := range rec.Headers {
			ar.Headers = append(ar.Headers, api.Header{Key: h.Key, Value: h.Value})
		}
		if rec.Control != txnindex.ControlNone {
			ar.Control = rec.Control.String()
			if rec.CoordinatorEpoch >= 0 {
				ce := rec.CoordinatorEpoch
				ar.CoordinatorEpoch = &ce
			}
		}
		out = append(out, ar)
	}
	return out, nil
}
