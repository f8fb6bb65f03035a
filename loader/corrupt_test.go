package loader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// goldenCheck compares got with testdata/errors/<name>.golden, rewriting
// the file with -update.
func goldenCheck(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "errors", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("%s mismatch (-update to accept)\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// describeScan renders a scan for a golden file: the batches kept, then
// each damage line.
func describeScan(f *SegmentFile) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "batches kept: %d, valid bytes: %d of %d\n", len(f.Batches), f.ValidBytes, f.Size)
	for _, b := range f.Batches {
		fmt.Fprintf(&sb, "  batch at %d: offsets [%d,%d] magic %d size %d records %d control %v\n", b.Position(), b.BaseOffset, b.LastOffset(), b.Magic(), b.Size, b.Records, b.Control())
	}
	for _, d := range f.Damage {
		fmt.Fprintf(&sb, "%v\n", d)
	}
	return sb.String()
}

// corrupt returns a copy of b with fn applied.
func corrupt(b []byte, fn func([]byte) []byte) []byte { return fn(bytes.Clone(b)) }

// TestCorruptSegments: each kind of damage yields a positional error, and
// the batches before it are kept.
func TestCorruptSegments(t *testing.T) {
	good := concat(dataBatch(t, 0, 7, true, 3), marker(t, 3, 7, true, 5), dataBatch(t, 4, -1, false, 2))
	first := len(dataBatch(t, 0, 7, true, 3))
	second := first + 78
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 1024)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	legacy := concat(legacyMessage(0, 0, 0, -1, []byte("k"), []byte("v0")), legacyMessage(1, 1, 0, 99, nil, []byte("v1")))

	tests := []struct {
		name string
		data []byte
		opts ScanOptions
		kept int
	}{
		{"clean", good, DefaultScanOptions, 3},
		{"truncated_tail", good[:len(good)-5], DefaultScanOptions, 2},
		{"trailing_bytes", concat(good, []byte("0123456789")), DefaultScanOptions, 3},
		{"bad_crc", corrupt(good, func(b []byte) []byte { b[first-1] ^= 0xff; return b }), DefaultScanOptions, 0},
		{"bad_crc_second", corrupt(good, func(b []byte) []byte { b[second-2] ^= 1; return b }), DefaultScanOptions, 1},
		{"bad_crc_header_scan", corrupt(good, func(b []byte) []byte { b[second-2] ^= 1; return b }), HeaderScanOptions, 3},
		{"huge_length", corrupt(good, func(b []byte) []byte { binary.BigEndian.PutUint32(b[second+8:], 0x7fffffff); return b }), DefaultScanOptions, 2},
		{"negative_length", corrupt(good, func(b []byte) []byte { binary.BigEndian.PutUint32(b[first+8:], 0xfffffff0); return b }), DefaultScanOptions, 1},
		{"preallocated_tail", concat(good, make([]byte, 3*zeroChunk+5)), DefaultScanOptions, 3},
		{"zeroed_block", concat(good[:first], make([]byte, zeroChunk+9), good), DefaultScanOptions, 1},
		{"zeroed_header", concat(good[:first], make([]byte, 12), good[first+12:]), DefaultScanOptions, 1},
		{"size_below_v0_overhead", corrupt(good, func(b []byte) []byte { binary.BigEndian.PutUint32(b[first+8:], 13); return b }), DefaultScanOptions, 1},
		{"v2_size_below_header", corrupt(good, func(b []byte) []byte { binary.BigEndian.PutUint32(b[first+8:], 40); return b }), DefaultScanOptions, 1},
		{"unknown_magic", corrupt(good, func(b []byte) []byte { b[second+16] = 3; return b }), DefaultScanOptions, 2},
		{"negative_magic", corrupt(good, func(b []byte) []byte { b[16] = 0xff; return b }), DefaultScanOptions, 0},
		{"negative_records_count", corrupt(good, func(b []byte) []byte { binary.BigEndian.PutUint32(b[second+57:], 0xffffffff); return b }), HeaderScanOptions, 2},
		{"random_bytes", random, DefaultScanOptions, 0},
		{"legacy_clean", legacy, DefaultScanOptions, 2},
		{"legacy_bad_crc", corrupt(legacy, func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), DefaultScanOptions, 1},
		{"legacy_v1_too_small", corrupt(legacy, func(b []byte) []byte {
			at := len(legacyMessage(0, 0, 0, -1, []byte("k"), []byte("v0")))
			binary.BigEndian.PutUint32(b[at+8:], 20)
			return b
		}), HeaderScanOptions, 1},
		{"control_short_key", concat(dataBatch(t, 0, 7, true, 1),
			batch(t, kmsg.RecordBatch{FirstOffset: 1, Attributes: 0x30, ProducerID: 7, FirstSequence: -1}, codecNone, []kmsg.Record{{Key: []byte{0, 0}, Value: []byte{0, 0, 0, 0, 0, 0}}}),
			dataBatch(t, 2, 7, true, 1)), DefaultScanOptions, 3},
		{"control_unknown_type", concat(
			batch(t, kmsg.RecordBatch{FirstOffset: 0, Attributes: 0x20, ProducerID: -1, FirstSequence: -1}, codecNone, []kmsg.Record{{Key: []byte{0, 0, 0, 42}, Value: nil}})),
			DefaultScanOptions, 1},
		{"control_emptied", concat(
			batch(t, kmsg.RecordBatch{FirstOffset: 0, Attributes: 0x30, ProducerID: 7, FirstSequence: -1, LastOffsetDelta: 0}, codecNone, nil)),
			DefaultScanOptions, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewSegmentWith(bytes.NewReader(tc.data), int64(len(tc.data)), "00000000000000000000.log", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Batches) != tc.kept {
				t.Errorf("kept %d batches, want %d", len(f.Batches), tc.kept)
			}
			for _, d := range f.Damage {
				if !errors.Is(d, ErrFormat) || !strings.Contains(d.Error(), "00000000000000000000.log: batch at byte 0x") {
					t.Errorf("damage %q does not name the file and position", d)
				}
			}
			// The in-memory path must agree with the ReaderAt path.
			g := NewSegmentBytes(tc.data, "00000000000000000000.log", tc.opts)
			if describeScan(g) != describeScan(f) {
				t.Errorf("NewSegmentBytes differs:\n%s\nvs\n%s", describeScan(g), describeScan(f))
			}
			goldenCheck(t, "segment_"+tc.name, describeScan(f))
		})
	}
}

// TestCorruptRecords: Records reports damage inside a batch that the
// header scan accepted.
func TestCorruptRecords(t *testing.T) {
	// rebatch re-encodes rb with a body and a fixed CRC.
	rebatch := func(rb kmsg.RecordBatch, body []byte) []byte {
		rb.Records = body
		rb.Magic = 2
		rb.Length = int32(49 + len(body))
		out := rb.AppendTo(nil)
		binary.BigEndian.PutUint32(out[17:], crc32c(out[21:]))
		return out
	}
	hdr := kmsg.RecordBatch{FirstOffset: 10, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, LastOffsetDelta: 1, NumRecords: 2}
	two := appendRecords(nil, records(2, 5))
	// 1 MiB of valid 7-byte records: the records decode, and reading on
	// to check that nothing follows the two declared crosses the bound.
	bomb := compress(t, codecZstd, bytes.Repeat(tinyRecord, (1<<20)/len(tinyRecord)))
	gz := compress(t, codecGzip, two)
	tests := []struct {
		name  string
		data  []byte
		limit int64
	}{
		{"extra_bytes", rebatch(hdr, append(bytes.Clone(two), 0, 0)), 0},
		{"count_too_big", rebatch(func() kmsg.RecordBatch { h := hdr; h.NumRecords = 3; return h }(), two), 0},
		{"count_cannot_fit", rebatch(func() kmsg.RecordBatch { h := hdr; h.NumRecords = 1 << 30; return h }(), two), 0},
		{"record_length_past_end", rebatch(hdr, append([]byte{0x7e}, two[1:]...)), 0},
		{"record_length_mismatch", rebatch(hdr, func() []byte {
			b := bytes.Clone(two)
			b[0] -= 2 // zigzag: one less byte claimed
			return b
		}()), 0},
		{"null_header_key", rebatch(func() kmsg.RecordBatch { h := hdr; h.NumRecords = 1; h.LastOffsetDelta = 0; return h }(),
			[]byte{0x14, 0, 0, 0, 2, 'k', 2, 'v', 2, 1, 1}), 0},
		{"negative_header_count", rebatch(func() kmsg.RecordBatch { h := hdr; h.NumRecords = 1; h.LastOffsetDelta = 0; return h }(),
			[]byte{0x10, 0, 0, 0, 2, 'k', 2, 'v', 1}), 0},
		{"record_length_longer", rebatch(func() kmsg.RecordBatch { h := hdr; h.NumRecords = 1; h.LastOffsetDelta = 0; return h }(),
			[]byte{0x12, 0, 0, 0, 2, 'k', 2, 'v', 0, 0xff}), 0},
		{"zstd_bomb", rebatch(func() kmsg.RecordBatch { h := hdr; h.Attributes = 4; return h }(), bomb), 64 << 10},
		{"gzip_truncated", rebatch(func() kmsg.RecordBatch { h := hdr; h.Attributes = 1; return h }(), gz[:len(gz)-9]), 0},
		{"unknown_codec", rebatch(func() kmsg.RecordBatch { h := hdr; h.Attributes = 6; return h }(), two), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := HeaderScanOptions
			o.MaxDecompressedSize = tc.limit
			f := NewSegmentBytes(tc.data, "00000000000000000010.log", o)
			if len(f.Batches) != 1 || len(f.Damage) != 0 {
				t.Fatalf("header scan: %s", describeScan(f))
			}
			recs, err := f.Records(f.Batches[0])
			if err == nil {
				t.Fatalf("Records: no error, %d records", len(recs))
			}
			if !errors.Is(err, ErrFormat) {
				t.Errorf("error %v is not ErrFormat", err)
			}
			goldenCheck(t, "records_"+tc.name, err.Error()+"\n")
		})
	}
}

// TestCorruptRecordSet: a fetch response cut mid-batch keeps the whole
// batches and reports the rest, as ByteBufferLogInputStream drops it.
func TestCorruptRecordSet(t *testing.T) {
	good := concat(dataBatch(t, 0, 7, true, 3), marker(t, 3, 7, false, 5), dataBatch(t, 4, -1, false, 2))
	tests := []struct {
		name string
		data []byte
		kept int
	}{
		{"cut_mid_batch", good[:len(good)-20], 2},
		{"cut_mid_size", good[:len(good)-len(dataBatch(t, 4, -1, false, 2))+10], 2},
		{"cut_before_magic", good[:len(good)-len(dataBatch(t, 4, -1, false, 2))+15], 2},
		{"bad_crc", corrupt(good, func(b []byte) []byte { b[40] ^= 1; return b }), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bs, errs := ParseRecordSet(tc.data, "fetch t-0")
			if len(bs) != tc.kept {
				t.Errorf("kept %d, want %d", len(bs), tc.kept)
			}
			var sb strings.Builder
			fmt.Fprintf(&sb, "batches kept: %d\n", len(bs))
			for _, b := range bs {
				if b.Segment != -1 {
					t.Errorf("Segment %d, want -1", b.Segment)
				}
				fmt.Fprintf(&sb, "  batch at %d: offsets [%d,%d] control %v\n", b.Position(), b.BaseOffset, b.LastOffset(), b.Control())
			}
			for _, e := range errs {
				fmt.Fprintf(&sb, "%v\n", e)
			}
			goldenCheck(t, "recordset_"+tc.name, sb.String())
		})
	}
}

// TestCorruptFiles covers the index, snapshot and text decoders.
func TestCorruptFiles(t *testing.T) {
	idx := func(pairs ...int32) []byte {
		var b []byte
		for _, p := range pairs {
			b = binary.BigEndian.AppendUint32(b, uint32(p))
		}
		return b
	}
	snap := func(version int16, count int32, entries int, fixCRC bool, extra int) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(version))
		b = append(b, 0, 0, 0, 0)
		b = binary.BigEndian.AppendUint32(b, uint32(count))
		for i := 0; i < entries; i++ {
			b = append(b, make([]byte, 46)...)
		}
		b = append(b, make([]byte, extra)...)
		if fixCRC {
			binary.BigEndian.PutUint32(b[2:], crc32c(b[6:]))
		}
		return b
	}
	txn := txnindex.EncodeTxnIndex([]txnindex.AbortedTxn{{ProducerID: 1, FirstOffset: 100, LastOffset: 105, LastStableOffset: 106}})
	tests := []struct {
		name string
		run  func() (any, error)
	}{
		{"index_partial_slot", func() (any, error) {
			x, err := ReadOffsetIndex(bytes.NewReader(idx(0, 0, 5, 4096, 7)), 20, "00000000000000000100.index", 100)
			return x.Entries, err
		}},
		{"index_offset_backwards", func() (any, error) {
			x, err := ReadOffsetIndex(bytes.NewReader(idx(3, 0, 9, 4096, 6, 8192)), 24, "00000000000000000100.index", 100)
			return x.Entries, err
		}},
		{"index_preallocated_tail", func() (any, error) {
			b := append(idx(3, 10, 9, 4096), make([]byte, 8*1000)...)
			x, err := ReadOffsetIndex(bytes.NewReader(b), int64(len(b)), "00000000000000000100.index", 100)
			return fmt.Sprint(x.Entries, " slots ", x.Slots), err
		}},
		{"timeindex_backwards", func() (any, error) {
			b := binary.BigEndian.AppendUint64(nil, 500)
			b = binary.BigEndian.AppendUint32(b, 3)
			b = binary.BigEndian.AppendUint64(b, 400)
			b = binary.BigEndian.AppendUint32(b, 5)
			x, err := ReadTimeIndex(bytes.NewReader(b), int64(len(b)), "00000000000000000100.timeindex", 100)
			return x.Entries, err
		}},
		{"txnindex_partial_entry", func() (any, error) {
			b := append(bytes.Clone(txn), 1, 2, 3)
			x, err := ReadTxnIndexFile(bytes.NewReader(b), int64(len(b)), "00000000000000000100.txnindex", 100)
			return x.Entries, err
		}},
		{"txnindex_bad_version", func() (any, error) {
			b := append(bytes.Clone(txn), txn...)
			b[34] = 1
			x, err := ReadTxnIndexFile(bytes.NewReader(b), int64(len(b)), "00000000000000000100.txnindex", 100)
			return x.Entries, err
		}},
		{"txnindex_below_base", func() (any, error) {
			x, err := ReadTxnIndexFile(bytes.NewReader(txn), int64(len(txn)), "00000000000000000200.txnindex", 200)
			return len(x.Entries), err
		}},
		{"snapshot_short", func() (any, error) {
			s, err := ReadProducerSnapshot([]byte{0, 1, 0}, "00000000000000000042.snapshot")
			return s.Entries, err
		}},
		{"snapshot_bad_version", func() (any, error) {
			s, err := ReadProducerSnapshot(snap(2, 0, 0, true, 0), "00000000000000000042.snapshot")
			return s.Entries, err
		}},
		{"snapshot_bad_crc", func() (any, error) {
			s, err := ReadProducerSnapshot(snap(1, 1, 1, false, 0), "00000000000000000042.snapshot")
			return s.Entries, err
		}},
		{"snapshot_huge_count", func() (any, error) {
			s, err := ReadProducerSnapshot(snap(1, 1<<30, 1, true, 0), "00000000000000000042.snapshot")
			return s.Entries, err
		}},
		{"snapshot_negative_count", func() (any, error) {
			s, err := ReadProducerSnapshot(snap(1, -1, 0, true, 0), "00000000000000000042.snapshot")
			return s.Entries, err
		}},
		{"snapshot_trailing", func() (any, error) {
			s, err := ReadProducerSnapshot(snap(1, 1, 1, true, 3), "00000000000000000042.snapshot")
			return len(s.Entries), err
		}},
		{"checkpoint_bad_version", func() (any, error) {
			c, err := ReadOffsetCheckpoint(strings.NewReader("1\n1\nt 0 5\n"), ReplicationOffsetCheckpoint)
			return c.Entries, err
		}},
		{"checkpoint_count_mismatch", func() (any, error) {
			c, err := ReadOffsetCheckpoint(strings.NewReader("0\n3\nt 0 5\nt 1 6\n"), ReplicationOffsetCheckpoint)
			return c.Entries, err
		}},
		{"checkpoint_malformed_line", func() (any, error) {
			c, err := ReadOffsetCheckpoint(strings.NewReader("0\n2\nt 0 5\nt x 6\n"), LogStartOffsetCheckpoint)
			return c.Entries, err
		}},
		{"checkpoint_leading_space", func() (any, error) {
			c, err := ReadOffsetCheckpoint(strings.NewReader("0\n1\n t 0 5\n"), RecoveryPointOffsetCheckpoint)
			return c.Entries, err
		}},
		{"checkpoint_long_line", func() (any, error) {
			c, err := ReadOffsetCheckpoint(strings.NewReader("0\n1\n"+strings.Repeat("x", 5000)+" 0 5\n"), CleanerOffsetCheckpoint)
			return c.Entries, err
		}},
		{"leader_epoch_three_fields", func() (any, error) {
			c, err := ReadLeaderEpochCheckpoint(strings.NewReader("0\n1\n0 0 0\n"), LeaderEpochCheckpointFile)
			return c.Entries, err
		}},
		{"partition_metadata_zero_uuid", func() (any, error) {
			m, err := ReadPartitionMetadata(strings.NewReader("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n"), PartitionMetadataFile)
			return m.TopicID, err
		}},
		{"partition_metadata_bad_version", func() (any, error) {
			m, err := ReadPartitionMetadata(strings.NewReader("version: 1\ntopic_id: Fa1tHmowQS2lSyUrEd4jSA\n"), PartitionMetadataFile)
			return m.Version, err
		}},
		{"partition_metadata_bad_uuid", func() (any, error) {
			m, err := ReadPartitionMetadata(strings.NewReader("version: 0\ntopic_id: Fa1tHmowQS2lSyUrEd4j\n"), PartitionMetadataFile)
			return m.TopicID, err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.run()
			if err != nil && !errors.Is(err, ErrFormat) {
				t.Errorf("error %v is not ErrFormat", err)
			}
			goldenCheck(t, "file_"+tc.name, fmt.Sprintf("kept: %v\nerror: %v\n", v, err))
		})
	}
}
