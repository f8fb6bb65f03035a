package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/txnscope/txnscope/txnindex"
)

// Bounds of one GET .../batches/{offset} answer. A batch's records are
// paged: a 6 KB zstd batch can decompress to 64 MiB holding 9.6 million
// records of 7 bytes, which one request once turned into 891 MB of JSON and
// 4.45 GB of memory. A page holds at most MaxRecordsLimit
// records and, past its first record, MaxRecordsBytes of record data.
//
// A page's first record is held whole while it is decoded, but not in the
// answer: its key, value and header values are each cut to
// MaxRecordFieldBytes. A 2 KB zstd batch can hold one record of 64 MiB,
// and one GET of such a batch answered 85 MB of base64; 400 of them (an
// 808 KB segment) took an export, which holds the answers of 300 batches
// per isolation, past 16 GB.
const (
	DefaultRecordsLimit = 1000
	MaxRecordsLimit     = 1000
	MaxRecordsBytes     = 4 << 20
	MaxRecordFieldBytes = 64 << 10
)

// RecordPageRequest asks for part of a batch's records: from the From-th
// (0-based, in batch order), at most Limit of them (no limit when 0), and
// past the first at most MaxBytes of record data (no limit when 0). The
// batch answer cuts each key, value and header value to MaxFieldBytes (no
// cut when 0).
type RecordPageRequest struct {
	From          int
	Limit         int
	MaxBytes      int64
	MaxFieldBytes int
}

// RecordPage is part of a batch's records: Total is how many the batch
// holds, Next the index of the record after Records (-1 when they end the
// batch).
type RecordPage struct {
	Records []Record
	Total   int
	Next    int
}

// RecordPager is a RecordSource that decodes a page of a batch's records
// without decoding (or holding) the rest; the batch API uses it when its
// source implements it. A source that does not is asked for every record
// and the page is cut from them, which bounds the answer but not the work.
type RecordPager interface {
	RecordSource
	RecordPage(ctx context.Context, source string, l *txnindex.Log, b *txnindex.Batch, p RecordPageRequest) (RecordPage, error)
}

// recordPageQuery reads records_from (default 0) and records_limit
// (default DefaultRecordsLimit; above MaxRecordsLimit it is lowered to it).
func recordPageQuery(r *http.Request) (RecordPageRequest, error) {
	q := r.URL.Query()
	p := RecordPageRequest{Limit: DefaultRecordsLimit, MaxBytes: MaxRecordsBytes, MaxFieldBytes: MaxRecordFieldBytes}
	if s := q.Get("records_from"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return p, badRequest("records_from %q is not an index >= 0", s)
		}
		p.From = n
	}
	if s := q.Get("records_limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return p, badRequest("records_limit %q is not a count >= 1", s)
		}
		p.Limit = min(n, MaxRecordsLimit)
	}
	return p, nil
}

// batchRecords fills j's records from records: the page the request asks
// for, with where it sits in the batch.
func batchRecords(ctx context.Context, records RecordSource, id string, l *txnindex.Log, b *txnindex.Batch, p RecordPageRequest, j *BatchJSON) {
	j.RecordsFrom, j.RecordsLimit, j.RecordsTotal = p.From, p.Limit, int(b.Records)
	var page RecordPage
	var err error
	if pager, ok := records.(RecordPager); ok {
		page, err = pager.RecordPage(ctx, id, l, b, p)
	} else {
		var all []Record
		all, err = records.Records(ctx, id, l, b)
		page = RecordPage{Total: int(b.Records), Next: -1}
		if all != nil {
			page = cutPage(all, p)
		}
	}
	switch {
	case errors.Is(err, ErrNoRecords):
		j.RecordsNote = "record bytes are not available for this source; the header is shown"
		return
	case err != nil:
		j.RecordsNote = "records could not be decoded: " + err.Error()
		return
	}
	for i := range page.Records {
		r := &page.Records[i]
		r.Key, r.KeySize = cutField(r.Key, p.MaxFieldBytes)
		r.Value, r.ValueSize = cutField(r.Value, p.MaxFieldBytes)
		for k := range r.Headers {
			r.Headers[k].Value, r.Headers[k].ValueSize = cutField(r.Headers[k].Value, p.MaxFieldBytes)
		}
		r.KeyText, r.ValueText = text(r.Key), text(r.Value)
	}
	if page.Records != nil {
		j.RecordList = page.Records
	}
	j.RecordsTotal = page.Total
	if page.Next >= 0 {
		next := page.Next
		j.RecordsNext, j.RecordsTruncated = &next, true
	}
}

// cutField returns b cut to at most max bytes, and b's length when it was
// cut (nil when b is whole or max is 0). The cut is copied, so that the
// answer does not keep the record it came from (up to the 64 MiB a batch
// decompresses to), and made at the start of a UTF-8 sequence, so that a
// printable value stays text.
func cutField(b []byte, max int) ([]byte, *int) {
	if max <= 0 || len(b) <= max {
		return b, nil
	}
	k := max
	for k > max-utf8.UTFMax && k > 0 && !utf8.RuneStart(b[k]) {
		k--
	}
	n := len(b)
	return append(make([]byte, 0, k), b[:k]...), &n
}

// cutPage cuts the page p out of all of a batch's records.
func cutPage(all []Record, p RecordPageRequest) RecordPage {
	page := RecordPage{Records: []Record{}, Total: len(all), Next: -1}
	if p.From >= len(all) {
		return page
	}
	end := len(all)
	if p.Limit > 0 {
		end = min(end, p.From+p.Limit)
	}
	var size int64
	for i := p.From; i < end; i++ {
		if i > p.From && p.MaxBytes > 0 && size >= p.MaxBytes {
			end = i
			break
		}
		size += recordBytes(&all[i])
	}
	page.Records = all[p.From:end]
	if end < len(all) {
		page.Next = end
	}
	return page
}

// recordBytes is the bytes of r's key, value and headers.
func recordBytes(r *Record) int64 {
	n := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}
