package api

import (
	"context"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// PartitionRecords decodes every record of b from the segment of p it was
// read from.
func PartitionRecords(p *loader.Partition, b *txnindex.Batch) ([]Record, error) {
	pg, err := PartitionRecordsPage(context.Background(), p, b, RecordPageRequest{})
	return pg.Records, err
}

// PartitionRecordsPage decodes the page req of b's records from the segment
// of p it was read from, and no more: the loader streams the batch and stops
// after the page (a batch can hold millions of records).
func PartitionRecordsPage(ctx context.Context, p *loader.Partition, b *txnindex.Batch, req RecordPageRequest) (RecordPage, error) {
	if b.Segment < 0 || int(b.Segment) >= len(p.Segments) {
		return RecordPage{}, ErrNoRecords
	}
	lp, err := p.Segments[b.Segment].Log.RecordsPage(ctx, *b, loader.PageLimits{From: req.From, Limit: req.Limit, MaxBytes: req.MaxBytes})
	if err != nil {
		return RecordPage{}, err
	}
	return LoaderPage(lp), nil
}

// LoaderPage is the loader's page of records as the batch API answers it.
func LoaderPage(lp loader.RecordPage) RecordPage {
	out := make([]Record, 0, len(lp.Records))
	for _, rec := range lp.Records {
		ar := Record{Offset: rec.Offset, Timestamp: rec.Timestamp, Key: rec.Key, Value: rec.Value}
		for _, h := range rec.Headers {
			ar.Headers = append(ar.Headers, Header{Key: h.Key, Value: h.Value})
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
	return RecordPage{Records: out, Total: lp.Total, Next: lp.Next}
}
