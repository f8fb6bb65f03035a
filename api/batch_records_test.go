package api

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// segmentRecords serves one scanned segment's records, as internal/cli's
// source does over the loader.
type segmentRecords struct{ f *loader.SegmentFile }

func apiRecords(recs []loader.Record) []Record {
	out := make([]Record, 0, len(recs))
	for _, rec := range recs {
		ar := Record{Offset: rec.Offset, Timestamp: rec.Timestamp, Key: rec.Key, Value: rec.Value}
		for _, h := range rec.Headers {
			ar.Headers = append(ar.Headers, Header{Key: h.Key, Value: h.Value})
		}
		out = append(out, ar)
	}
	return out
}

func (s segmentRecords) Records(_ context.Context, _ string, _ *txnindex.Log, b *txnindex.Batch) ([]Record, error) {
	recs, err := s.f.Records(*b)
	return apiRecords(recs), err
}

func (s segmentRecords) RecordPage(ctx context.Context, _ string, _ *txnindex.Log, b *txnindex.Batch, p RecordPageRequest) (RecordPage, error) {
	lp, err := s.f.RecordsPage(ctx, *b, loader.PageLimits{From: p.From, Limit: p.Limit, MaxBytes: p.MaxBytes})
	return RecordPage{Records: apiRecords(lp.Records), Total: lp.Total, Next: lp.Next}, err
}

// recordCountBomb is a batch: about 6 KB of zstd that
// decompress to the loader's 64 MiB bound, 9,586,980 records of 7 bytes
// (length 6, attributes 0, deltas 0, null key and value, no headers).
func recordCountBomb(t *testing.T) []byte {
	n := loader.DefaultMaxDecompressedSize / 7
	var buf bytes.Buffer
	w, _ := zstd.NewWriter(&buf)
	w.Write(bytes.Repeat([]byte{0x0c, 0, 0, 0, 1, 1, 0}, n))
	w.Close()
	rb := kmsg.RecordBatch{Magic: 2, Attributes: 4, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		LastOffsetDelta: int32(n - 1), NumRecords: int32(n), Records: buf.Bytes(), Length: int32(49 + buf.Len())}
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// TestBatchRecordCountBomb: GET …/batches/{offset} of
// a batch of 9.6M records answered 891 MB of JSON in 18 s and took the
// server to 4.45 GB. It answers one page of records now (records_total,
// records_truncated, records_next say where it sits), allocating a bounded
// amount per request, and records_from pages on to the end.
func TestBatchRecordCountBomb(t *testing.T) {
	data := recordCountBomb(t)
	seg := loader.NewSegmentBytes(data, "00000000000000000000.log", loader.DefaultScanOptions)
	if len(seg.Batches) != 1 || len(seg.Damage) != 0 {
		t.Fatalf("scan: %d batches, damage %v", len(seg.Batches), seg.Damage)
	}
	l := txnindex.Build(&txnindex.Partition{Topic: "t", Segments: []txnindex.Segment{seg.Segment()}, Batches: seg.Batches,
		LogStartOffset: -1, HighWatermark: -1})
	srv, _ := server(t, fakeCatalog{"small": l}, segmentRecords{seg}, nil)
	url := srv.URL + "/api/v1/sources/small/partitions/t/0/batches/5"
	total := loader.DefaultMaxDecompressedSize / 7

	var body []byte
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	body = get(t, url, 200)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d-byte batch, %d records: first page %d bytes of JSON, %d MiB allocated", len(data), total, len(body), alloc>>20)
	if alloc > 64<<20 {
		t.Errorf("one request allocated %d MiB", alloc>>20)
	}
	if len(body) > 1<<20 {
		t.Errorf("answer of %d bytes", len(body))
	}
	b := getJSON[BatchJSON](t, url)
	if len(b.RecordList) != DefaultRecordsLimit || b.RecordsTotal != total || !b.RecordsTruncated || b.RecordsNext == nil ||
		*b.RecordsNext != DefaultRecordsLimit || b.RecordsFrom != 0 || b.RecordsLimit != DefaultRecordsLimit || int(b.Records) != total {
		t.Errorf("first page: %d records, total %d, truncated %v, next %v, from %d, limit %d", len(b.RecordList), b.RecordsTotal,
			b.RecordsTruncated, b.RecordsNext, b.RecordsFrom, b.RecordsLimit)
	}
	last := getJSON[BatchJSON](t, fmt.Sprintf("%s?records_from=%d&records_limit=5000", url, total-5))
	if len(last.RecordList) != 5 || last.RecordsTruncated || last.RecordsNext != nil || last.RecordsLimit != MaxRecordsLimit {
		t.Errorf("last page: %d records, truncated %v, next %v, limit %d", len(last.RecordList), last.RecordsTruncated, last.RecordsNext, last.RecordsLimit)
	}
	for _, q := range []string{"records_from=-1", "records_from=x", "records_limit=0", "records_limit=-3"} {
		get(t, url+"?"+q, 400)
	}
}

// TestBatchRecordPages: the pages of an ordinary batch, walked with
// records_next, hold its records in order, from a pager and from a source
// that only decodes whole batches alike.
func TestBatchRecordPages(t *testing.T) {
	recs := make([]kmsg.Record, 2500)
	for i := range recs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint("v", i))}
	}
	var raw []byte
	for i := range recs {
		r := recs[i]
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		raw = r.AppendTo(raw)
	}
	rb := kmsg.RecordBatch{Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, LastOffsetDelta: 2499,
		NumRecords: 2500, Records: raw, Length: int32(49 + len(raw))}
	data := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(data[17:], crc32.Checksum(data[21:], crc32.MakeTable(crc32.Castagnoli)))
	seg := loader.NewSegmentBytes(data, "00000000000000000000.log", loader.DefaultScanOptions)
	l := txnindex.Build(&txnindex.Partition{Topic: "t", Segments: []txnindex.Segment{seg.Segment()}, Batches: seg.Batches,
		LogStartOffset: -1, HighWatermark: -1})
	wholeOnly := RecordSourceFunc(segmentRecords{seg}.Records)
	for name, rs := range map[string]RecordSource{"pager": segmentRecords{seg}, "whole": wholeOnly} {
		srv, _ := server(t, fakeCatalog{"small": l}, rs, nil)
		var got []string
		for from := 0; ; {
			p := getJSON[BatchJSON](t, fmt.Sprintf("%s/api/v1/sources/small/partitions/t/0/batches/0?records_from=%d&records_limit=700", srv.URL, from))
			if p.RecordsTotal != 2500 || p.RecordsFrom != from {
				t.Fatalf("%s: page from %d: total %d, from %d", name, from, p.RecordsTotal, p.RecordsFrom)
			}
			for _, r := range p.RecordList {
				got = append(got, string(r.Key))
			}
			if p.RecordsNext == nil {
				break
			}
			from = *p.RecordsNext
		}
		if len(got) != 2500 || got[0] != "k0" || got[2499] != "k2499" || got[700] != "k700" {
			t.Errorf("%s: %d records, %v…", name, len(got), got[:min(3, len(got))])
		}
	}
}
