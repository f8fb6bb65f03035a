package loader

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTrailingRecordBytesReadNoFurther: after the records a batch declares,
// the decoder read the rest of the decompressed stream to count it. A
// 2 KB zstd batch of one record and 64 MiB of zeros cost 64 MiB of
// decompression each time its records were asked for: 10 s for
// `inspect --records` of an 836 KB segment of 400 such batches, 17 s for
// its export. Kafka reads one byte past the last record
// (DefaultRecordBatch's ensureNoneRemaining); the decoder now reads at
// most trailingProbe bytes. Each batch here holds one record, 1 MiB of
// zeros, then bytes no codec decompresses: read to the end, they would be
// a decompression error instead of the bytes that remain.
func TestTrailingRecordBytesReadNoFurther(t *testing.T) {
	rec := appendRecords(nil, []kmsg.Record{{Key: []byte("k"), Value: []byte("v")}})
	for _, tc := range []struct {
		name  string
		codec codec
		body  []byte
		want  string
	}{
		{"gzip", codecGzip, append(append([]byte{}, rec...), make([]byte, 1<<20)...),
			"more than 65536 bytes of decompressed records remain after the 1 records the batch declares"},
		{"snappy", codecSnappy, append(append([]byte{}, rec...), make([]byte, 1<<20)...),
			"more than 65536 bytes of decompressed records remain after the 1 records the batch declares"},
		{"lz4", codecLZ4, append(append([]byte{}, rec...), make([]byte, 1<<20)...),
			"more than 65536 bytes of decompressed records remain after the 1 records the batch declares"},
		{"zstd", codecZstd, append(append([]byte{}, rec...), make([]byte, 1<<20)...),
			"more than 65536 bytes of decompressed records remain after the 1 records the batch declares"},
		{"zstd, 10 bytes after the record: counted", codecZstd, append(append([]byte{}, rec...), make([]byte, 10)...),
			"10 bytes of decompressed records remain after the 1 records the batch declares"},
		{"uncompressed, 10 bytes after the record: counted", codecNone, append(append([]byte{}, rec...), make([]byte, 10)...),
			"10 bytes of records remain after the 1 records the batch declares"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := compress(t, tc.codec, tc.body)
			if tc.codec != codecNone && len(tc.body) > 1<<20 {
				// Bytes after the stream that no decoder of the codec
				// takes: only a read to the end reaches them.
				body = append(body, bytes.Repeat([]byte{0xff}, 64)...)
			}
			data := rawBatch(kmsg.RecordBatch{Attributes: int16(tc.codec), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}, 1, body)
			f := NewSegmentBytes(data, "00000000000000000000.log", DefaultScanOptions)
			if len(f.Batches) != 1 {
				t.Fatalf("scan: %s", describeScan(f))
			}
			_, err := f.Records(f.Batches[0])
			if err == nil || !strings.Contains(err.Error(), "00000000000000000000.log: batch at byte 0x0: "+tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
