package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// claimBatch is a v2 batch at offset 0 whose header claims count records
// over lastDelta+1 offsets, its records section raw (compressed as attrs
// says), with a correct CRC.
func claimBatch(attrs int16, count, lastDelta int32, raw []byte) []byte {
	rb := kmsg.RecordBatch{Magic: 2, Attributes: attrs, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		LastOffsetDelta: lastDelta, NumRecords: count, Records: raw, Length: int32(49 + len(raw))}
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// tinyRecords is n v2 records at deltas 0..n-1 with a 1-byte value.
func tinyRecords(n int) []byte {
	var raw []byte
	for i := range n {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte("v")}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		raw = r.AppendTo(raw)
	}
	return raw
}

func zstdOf(t *testing.T, b []byte) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	return e.EncodeAll(b, nil)
}

func gzipOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// TestOffsetsNDJSONClaimsTheBytesCannotHold: a batch whose header claims a
// record at every one of its offsets was written as one line per offset
// on the header's word. A 4 KB zstd batch claiming 2^31-1 records wrote
// 64 GB of lines (and filled the disk) before --counts' one line. The
// header is now taken at its word only when the batch's bytes can hold
// what it claims (7 bytes a record uncompressed, a byte a record
// compressed); otherwise the records are read, and a batch that does not
// hold them is an error at its byte after the lines before it, or, when
// no record bytes were kept (dump text, a capture), one range line.
func TestOffsetsNDJSONClaimsTheBytesCannotHold(t *testing.T) {
	one := tinyRecords(1)
	zeros := append(append([]byte{}, one...), make([]byte, 1<<20)...)
	before := v2Batch(0, 0, -1, 0, 0)
	for _, tc := range []struct {
		name    string
		batch   []byte
		pages   bool
		lines   string // what is written, before the error if any
		errWant string // in the error; "" for none
	}{
		{"uncompressed, 2^31-1 claimed, 1 held", claimBatch(0, math.MaxInt32, math.MaxInt32-1, one), true,
			"0 delivered", "batch at byte 0x47: records count 2147483647 cannot fit in 8 bytes of records"},
		{"zstd, 2^31-1 claimed over a MiB of zeros", claimBatch(4, math.MaxInt32, math.MaxInt32-1, zstdOf(t, zeros)), true,
			"0 delivered", "batch at byte 0x47: records count 2147483647 cannot fit in the 67108864 bytes the records may decompress to"},
		{"gzip, 2^31-1 claimed over a MiB of zeros", claimBatch(1, math.MaxInt32, math.MaxInt32-1, gzipOf(t, zeros)), true,
			"0 delivered", "batch at byte 0x47: records count 2147483647 cannot fit in the 67108864 bytes the records may decompress to"},
		{"zstd, a million claimed over a MiB of zeros", claimBatch(4, 1_000_000, 999_999, zstdOf(t, zeros)), true,
			"0 delivered", "batch at byte 0x47: record 1 at byte 0x8 of the decompressed records: truncated inside its 0 bytes"},
		{"no record bytes: one range line with the claim", claimBatch(4, math.MaxInt32, math.MaxInt32-1, zstdOf(t, zeros)), false,
			"0 delivered|1-2147483647 delivered (2147483647 records)", ""},
		{"zstd holding 20000 records in fewer bytes: read, a line each", claimBatch(4, 20000, 19999, zstdOf(t, tinyRecords(20000))), true,
			"0 delivered|1 delivered|2 delivered", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := append(append([]byte{}, before...), bytesAt(tc.batch, 1)...)
			l, pages := segmentLog(t, data)
			if !tc.pages {
				pages = nil
			}
			o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: txnindex.DefaultMaxBytes}
			w := &boundedWriter{max: 30000}
			err := WriteOffsetsNDJSON(context.Background(), w, l, l.Decisions(o), pages)
			lines := readLines(t, w.buf.Bytes())
			var got []string
			for _, m := range lines[:min(len(lines), 3)] {
				got = append(got, m.short())
			}
			t.Logf("%d-byte batch: %d lines, %v", len(tc.batch), len(lines), err)
			if g := strings.Join(got, "|"); g != tc.lines {
				t.Errorf("lines %s, want %s", g, tc.lines)
			}
			switch {
			case tc.errWant == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.errWant != "":
				var fe *loader.FormatError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), "00000000000000000000.log") || !strings.Contains(err.Error(), tc.errWant) {
					t.Fatalf("error %v, want a loader.FormatError naming the segment and %q", err, tc.errWant)
				}
			}
			if tc.name == "zstd holding 20000 records in fewer bytes: read, a line each" {
				if len(tc.batch) >= 20000 || len(lines) != 20001 {
					t.Errorf("%d-byte batch, %d lines: want fewer bytes than records, and a line a record", len(tc.batch), len(lines))
				}
				checkCounts(t, l, o, lines)
			}
		})
	}
}
