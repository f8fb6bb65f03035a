package api

import (
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// PartitionRecords decodes batch b's records from the files of p, the
// partition it was loaded from, for a RecordSource. A batch that is not
// one of p's is ErrNoRecords.
func PartitionRecords(p *loader.Partition, b *txnindex.Batch) ([]Record, error) {
	if b.Segment < 0 || int(b.Segment) >= len(p.Segments) {
		return nil, ErrNoRecords
	}
	recs, err := p.Segments[b.Segment].Log.Records(*b)
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(recs))
	for _, rec := range recs {
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
	return out, nil
}
