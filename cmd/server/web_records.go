package main

import (
	"context"

	"github.com/txnscope/txnscope/api"
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
	for _, s := range r.cat.list() {
		if s.id == id && s.built() == l && s.files != nil {
			return api.PartitionRecordsPage(ctx, s.files, b, p)
		}
	}
	return api.RecordPage{}, api.ErrNoRecords
}
