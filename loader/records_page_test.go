package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

var (
	countBombOnce sync.Once
	countBomb     []byte
)

// recordCountBomb is a batch: a few KB of zstd that
// decompress to the 64 MiB bound, holding 9,586,980 records of 7 bytes
// (minRecordSize), each with offsetDelta 0 as the file had.
func recordCountBomb(t testing.TB) []byte {
	countBombOnce.Do(func() {
		n := DefaultMaxDecompressedSize / len(tinyRecord)
		body := compress(t, codecZstd, bytes.Repeat(tinyRecord, n))
		countBomb = rawBatch(kmsg.RecordBatch{FirstOffset: 0, Attributes: int16(codecZstd), ProducerID: -1, ProducerEpoch: -1,
			FirstSequence: -1, LastOffsetDelta: int32(n - 1), FirstTimestamp: 1000, MaxTimestamp: 1000}, int32(n), body)
	})
	return countBomb
}

// TestRecordsPageCountBomb: a page of the record-count bomb decodes its
// records and no more: bounded allocation at the first page, still
// bounded at the last one (the records before it are validated and
// dropped, the decompression streams), and a cancelled context stops it.
func TestRecordsPageCountBomb(t *testing.T) {
	data := recordCountBomb(t)
	if len(data) > 16<<10 {
		t.Fatalf("bomb is %d bytes", len(data))
	}
	f := NewSegmentBytes(data, "00000000000000000000.log", DefaultScanOptions)
	if len(f.Batches) != 1 || len(f.Damage) != 0 {
		t.Fatalf("scan: %s", describeScan(f))
	}
	b := f.Batches[0]
	total := DefaultMaxDecompressedSize / len(tinyRecord)
	for _, tc := range []struct {
		from, limit, want, next int
	}{
		{0, 1000, 1000, 1000},
		{5_000_000, 1000, 1000, 5_001_000},
		{total - 10, 1000, 10, -1},
		{total + 5, 1000, 0, -1},
	} {
		var p RecordPage
		var err error
		start := time.Now()
		alloc := allocDuring(func() { p, err = f.RecordsPage(context.Background(), b, PageLimits{From: tc.from, Limit: tc.limit}) })
		if err != nil {
			t.Fatalf("page from %d: %v", tc.from, err)
		}
		t.Logf("page from %d: %d records, %d KiB allocated, %v", tc.from, len(p.Records), alloc>>10, time.Since(start))
		if len(p.Records) != tc.want || p.Next != tc.next || p.Total != total || p.From != tc.from {
			t.Errorf("page from %d: %d records, next %d, total %d; want %d, %d, %d", tc.from, len(p.Records), p.Next, p.Total, tc.want, tc.next, total)
		}
		// The 64 MiB of records are never held: a zstd window (8 MiB
		// here) and the page.
		if alloc > 24<<20 {
			t.Errorf("page from %d allocated %d MiB", tc.from, alloc>>20)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.RecordsPage(ctx, b, PageLimits{From: total - 1, Limit: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled page: %v", err)
	}
}

// TestRecordsPageAgreesWithRecords: for every codec, legacy wrappers
// included, the pages of a batch, walked by Next under record and byte
// limits, are exactly Records' records.
func TestRecordsPageAgreesWithRecords(t *testing.T) {
	recs := make([]kmsg.Record, 500)
	for i := range recs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i), Key: []byte(fmt.Sprint("k", i)),
			Value: bytes.Repeat([]byte{'v'}, i%37), Headers: []kmsg.Header{{Key: "h", Value: []byte{byte(i)}}}}
	}
	var segs [][]byte
	for _, c := range []codec{codecNone, codecGzip, codecSnappy, codecRawSnappy, codecLZ4, codecZstd} {
		segs = append(segs, batch(t, kmsg.RecordBatch{FirstOffset: 7, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}, c, recs))
	}
	var inner [][]byte
	for i := 0; i < 300; i++ {
		inner = append(inner, legacyMessage(int64(i), 1, 0, int64(i), []byte{byte(i)}, bytes.Repeat([]byte{'x'}, i%11)))
	}
	segs = append(segs, legacyWrapper(t, 299, 1, 0, 5, codecGzip, inner...), legacyMessage(0, 1, 0, 5, nil, []byte("plain")))
	for si, seg := range segs {
		f := NewSegmentBytes(seg, "00000000000000000000.log", DefaultScanOptions)
		if len(f.Batches) != 1 || len(f.Damage) != 0 {
			t.Fatalf("segment %d: %s", si, describeScan(f))
		}
		b := f.Batches[0]
		all, err := f.Records(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, lim := range []PageLimits{{Limit: 1}, {Limit: 77}, {Limit: 1000}, {MaxBytes: 100}, {Limit: 50, MaxBytes: 1 << 10}} {
			var got []Record
			for from := 0; from >= 0; {
				lim.From = from
				p, err := f.RecordsPage(context.Background(), b, lim)
				if err != nil {
					t.Fatalf("segment %d from %d: %v", si, from, err)
				}
				if p.Total != len(all) || len(p.Records) == 0 && len(all) > 0 {
					t.Fatalf("segment %d from %d: total %d, %d records; want total %d", si, from, p.Total, len(p.Records), len(all))
				}
				got = append(got, p.Records...)
				from = p.Next
			}
			if !reflect.DeepEqual(got, all) {
				t.Errorf("segment %d, limits %+v: pages differ from Records", si, lim)
			}
		}
		if _, err := RecordsPageOf(context.Background(), seg, b, "fetch", PageLimits{Limit: 3}); err != nil {
			t.Errorf("RecordsPageOf: %v", err)
		}
		_ = txnindex.CompressionNone
	}
}
