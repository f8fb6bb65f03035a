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
	for _, s := range r.cat.list() {
		if s.id == id && s.built() == l && s.files != nil {
			return api.PartitionRecords(s.files, b)
		}
	}
	return nil, api.ErrNoRecords
}
