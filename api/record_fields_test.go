package api

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// bigRecordLog is a segment of n zstd batches, each one record holding
// key and value (a few KB on disk for megabytes of record), as a log and
// its record source.
func bigRecordLog(t *testing.T, n int, key, value []byte) (*txnindex.Log, segmentRecords) {
	t.Helper()
	r := kmsg.Record{Key: key, Value: value, Headers: []kmsg.Header{{Key: "h", Value: value}}}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	z := zstdOf(t, r.AppendTo(nil))
	var data []byte
	for i := range n {
		b := claimBatch(4, 1, 0, z)
		b = bytesAt(b, int64(i))
		data = append(data, b...)
	}
	seg := loader.NewSegmentBytes(data, "00000000000000000000.log", loader.DefaultScanOptions)
	if len(seg.Damage) != 0 || len(seg.Batches) != n {
		t.Fatalf("scan: %d batches, damage %v", len(seg.Batches), seg.Damage)
	}
	l := txnindex.Build(&txnindex.Partition{Topic: "t", Segments: []txnindex.Segment{seg.Segment()}, Batches: seg.Batches,
		LogStartOffset: -1, HighWatermark: -1})
	return l, segmentRecords{seg}
}

// TestRecordFieldsCut: a batch's answer held each record's key, value and
// header values whole, however large: 400 batches of one 60 MiB record
// (808 KB of zstd) took `txnscope export` past 16 GB, and one GET of such
// a batch answered some 85 MB of base64. A key, value or header value is
// now cut to MaxRecordFieldBytes (an export's to exportRecordFieldBytes),
// copied out of the decoded record, at a UTF-8 boundary, and its whole
// length given beside it (key_size, value_size).
func TestRecordFieldsCut(t *testing.T) {
	// Four times the cut, and past it by a page of whole fields: large
	// enough that an uncut field shows, small enough to decompress fast.
	big := 4 * MaxRecordFieldBytes
	for _, tc := range []struct {
		name       string
		key, value []byte
		keyCut     bool
		valueCut   bool
		text       bool // value_text present
	}{
		{"short fields are whole", []byte("k"), []byte("v"), false, false, true},
		{"a long value of zeros is cut, no text", []byte("k"), make([]byte, big), false, true, false},
		{"a long printable value is cut, its text too", []byte("k"), bytes.Repeat([]byte("abc "), big/4), false, true, true},
		{"a value of 3-byte runes is cut at a rune", []byte("k"), bytes.Repeat([]byte("€"), big/3+1), false, true, true},
		{"a long key is cut", make([]byte, big), []byte("v"), true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, rs := bigRecordLog(t, 1, tc.key, tc.value)
			o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: txnindex.DefaultMaxBytes}
			j := BatchDetail(context.Background(), rs, "s", l, 0, o, nil, RecordPageRequest{Limit: DefaultRecordsLimit, MaxBytes: MaxRecordsBytes, MaxFieldBytes: MaxRecordFieldBytes})
			if len(j.RecordList) != 1 {
				t.Fatalf("%d records, note %q", len(j.RecordList), j.RecordsNote)
			}
			r := j.RecordList[0]
			check := func(what string, got []byte, size *int, whole []byte, cut bool) {
				switch {
				case !cut && (size != nil || !bytes.Equal(got, whole)):
					t.Errorf("%s: %d bytes, size %v: want it whole", what, len(got), size)
				case cut && (size == nil || *size != len(whole) || len(got) > MaxRecordFieldBytes || len(got) < MaxRecordFieldBytes-3 || !bytes.HasPrefix(whole, got)):
					t.Errorf("%s: %d bytes, size %v: want the first %d or up to 3 fewer of %d", what, len(got), size, MaxRecordFieldBytes, len(whole))
				case cut && cap(got) > MaxRecordFieldBytes:
					t.Errorf("%s: cut to %d bytes but keeps %d of the decoded record", what, len(got), cap(got))
				}
			}
			check("key", r.Key, r.KeySize, tc.key, tc.keyCut)
			check("value", r.Value, r.ValueSize, tc.value, tc.valueCut)
			if len(r.Headers) != 1 {
				t.Fatalf("%d headers", len(r.Headers))
			}
			check("header value", r.Headers[0].Value, r.Headers[0].ValueSize, tc.value, tc.valueCut)
			if (r.ValueText != nil) != tc.text || r.ValueText != nil && (!utf8.ValidString(*r.ValueText) || *r.ValueText != string(r.Value)) {
				t.Errorf("value_text %v, want present %v and the value shown", r.ValueText != nil, tc.text)
			}
			b, _ := json.Marshal(j)
			if len(b) > 4*MaxRecordFieldBytes+16<<10 {
				t.Errorf("answer of %d bytes", len(b))
			}
			if tc.valueCut && !strings.Contains(string(b), `"value_size":`) {
				t.Errorf("answer without value_size: %.300s", b)
			}
		})
	}
	t.Run("an export of 40 batches of a long record each stays small", func(t *testing.T) {
		l, rs := bigRecordLog(t, 40, []byte("k"), make([]byte, big))
		d, err := Export(context.Background(), "s", l, rs)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(d)
		t.Logf("export data: %d bytes", len(b))
		if len(b) > 1<<20 {
			t.Errorf("export data of %d bytes for 40 records", len(b))
		}
	})
}

// bytesAt is the v2 batch b moved to base offset base, its CRC redone.
func bytesAt(b []byte, base int64) []byte {
	b = append([]byte{}, b...)
	binary.BigEndian.PutUint64(b, uint64(base))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}
