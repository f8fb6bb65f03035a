package main

import (
	"context"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// loaderRecords decodes a batch's records from the segment file it was read
// from, on demand: the batch API's api.RecordSource.
type loaderRecords struct{ cat *catalog }

var _ api.RecordPager = loaderRecords{}

func (r loaderRecords) Records(ctx context.Context, id string, l *txnindex.Log, b *txnindex.Batch) ([]api.Record, error) {
	p, err := r.RecordPage(ctx, id, l, b, api.RecordPageRequest{})
	return p.Records, err
}

// RecordPage decodes the page p of b's records and no more (the loader
// streams the batch and stops after the page).
func (r loaderRecords) RecordPage(ctx context.Context, id string, l *txnindex.Log, b *txnindex.Batch, p api.RecordPageRequest) (api.RecordPage, error) {
	var src *source
	for _, s := range r.cat.list() {
		if s.id == id && s.built() == l {
			src = s
		}
	}
	if src == nil || src.files == nil || b.Segment < 0 || int(b.Segment) >= len(src.files.Segments) {
		return api.RecordPage{}, api.ErrNoRecords
	}
	lp, err := src.files.Segments[b.Segment].Log.RecordsPage(ctx, *b, loader.PageLimits{From: p.From, Limit: p.Limit, MaxBytes: p.MaxBytes})
	if err != nil {
		return api.RecordPage{}, err
	}
	out := make([]api.Record, 0, len(lp.Records))
	for _, rec := range lp.Records {
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
	return api.RecordPage{Records: out, Total: lp.Total, Next: lp.Next}, nil
}
