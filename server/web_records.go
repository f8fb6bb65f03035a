package server

import (
	"context"
	"errors"
	"fmt"

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
		if s.id != id {
			continue
		}
		if fs := s.filesOf(l); fs != nil {
			return api.PartitionRecordsPage(ctx, fs, b, p)
		}
	}
	return api.RecordPage{}, api.ErrNoRecords
}

// limitedRecords bounds how many segment files record decoding holds open
// at once (the loader reopens a segment per batch request rather than
// keeping thousands of descriptors). A request waits for a slot until its
// context ends, then gets an error naming the flag.
type limitedRecords struct {
	next api.RecordSource
	sem  chan struct{}
}

func newLimitedRecords(next api.RecordSource, n int) limitedRecords {
	return limitedRecords{next: next, sem: make(chan struct{}, n)}
}

func (l limitedRecords) Records(ctx context.Context, id string, lg *txnindex.Log, b *txnindex.Batch) ([]api.Record, error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("all %d file slots (--max-open-files) stayed busy: %w", cap(l.sem), ctx.Err())
	}
	defer func() { <-l.sem }()
	return l.next.Records(ctx, id, lg, b)
}

// RecordPage is Records for one page of a batch's records (api.RecordPager).
func (l limitedRecords) RecordPage(ctx context.Context, id string, lg *txnindex.Log, b *txnindex.Batch, p api.RecordPageRequest) (api.RecordPage, error) {
	pager, ok := l.next.(api.RecordPager)
	if !ok {
		return api.RecordPage{}, fmt.Errorf("records of %s cannot be paged", id)
	}
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return api.RecordPage{}, fmt.Errorf("all %d file slots (--max-open-files) stayed busy: %w", cap(l.sem), ctx.Err())
	}
	defer func() { <-l.sem }()
	return pager.RecordPage(ctx, id, lg, b, p)
}

// RecordPage is Records for one page of a batch's records (api.RecordPager):
// a failed page gets the same explanation.
func (f faultRecords) RecordPage(ctx context.Context, id string, l *txnindex.Log, b *txnindex.Batch, p api.RecordPageRequest) (api.RecordPage, error) {
	pager, ok := f.next.(api.RecordPager)
	if !ok {
		return api.RecordPage{}, fmt.Errorf("records of %s cannot be paged", id)
	}
	page, err := pager.RecordPage(ctx, id, l, b, p)
	failed := api.RecordSourceFunc(func(context.Context, string, *txnindex.Log, *txnindex.Batch) ([]api.Record, error) { return nil, err })
	_, err = faultRecords{f.cat, failed}.Records(ctx, id, l, b)
	return page, err
}

// faultRecords explains a record read that failed because the files
// changed under the server (loader.Partition.Changed).
type faultRecords struct {
	cat  *catalog
	next api.RecordSource
}

func (f faultRecords) Records(ctx context.Context, id string, l *txnindex.Log, b *txnindex.Batch) ([]api.Record, error) {
	recs, err := f.next.Records(ctx, id, l, b)
	if err == nil || errors.Is(err, api.ErrNoRecords) {
		return recs, err
	}
	for _, s := range f.cat.list() {
		if s.id != id {
			continue
		}
		if fs := s.filesOf(l); fs != nil {
			if cerr := fs.Changed(b); cerr != nil {
				return nil, cerr
			}
		}
	}
	return nil, err
}
