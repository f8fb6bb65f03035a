package loader

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// TestCodecsAgainstKgo builds v2 batches with every codec (snappy both
// xerial-framed and raw), headers, null keys and values, LogAppendTime and
// a delete-horizon batch, and compares Records with kgo.
func TestCodecsAgainstKgo(t *testing.T) {
	recs := []kmsg.Record{
		{OffsetDelta: 0, TimestampDelta64: 5, Key: []byte("k0"), Value: bytes.Repeat([]byte("value "), 400),
			Headers: []kmsg.Header{{Key: "h1", Value: []byte("v1")}, {Key: "h2", Value: nil}}},
		{OffsetDelta: 1, TimestampDelta64: -3, Key: nil, Value: []byte("no key")},
		{OffsetDelta: 3, TimestampDelta64: 1 << 40, Key: []byte{}, Value: nil},
	}
	for _, c := range []codec{codecNone, codecGzip, codecSnappy, codecRawSnappy, codecLZ4, codecZstd} {
		for _, attr := range []int16{0, txnindex.AttrTimestampType, txnindex.AttrTransactional, txnindex.AttrDeleteHorizon} {
			t.Run(fmt.Sprintf("codec%d_attr%#x", c, attr), func(t *testing.T) {
				rb := kmsg.RecordBatch{FirstOffset: 100, PartitionLeaderEpoch: 2, Attributes: attr, FirstTimestamp: 1_700_000_000_000,
					MaxTimestamp: 1_700_000_000_999, ProducerID: 9, ProducerEpoch: 2, FirstSequence: 1<<31 - 2}
				data := concat(batch(t, rb, c, recs), marker(t, 104, 9, false, 3))
				f := NewSegmentBytes(data, "00000000000000000100.log", DefaultScanOptions)
				if len(f.Damage) != 0 || len(f.Batches) != 2 {
					t.Fatalf("scan: %s", describeScan(f))
				}
				b := f.Batches[0]
				if b.Compression() != txnindex.Compression(attrCodec(c)) || b.LastOffset() != 103 || b.Records != 3 {
					t.Errorf("batch %+v", b)
				}
				var got []Record
				var magics []int8
				for _, b := range f.Batches {
					rs, err := f.Records(b)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, rs...)
					for range rs {
						magics = append(magics, 2)
					}
				}
				compareRecords(t, "codec", got, magics, kgoRecords(t, data))
				// Sequences wrap from MaxInt32 to 0 (incrementSequence).
				if got[0].Sequence != 1<<31-2 || got[2].Sequence != 1 {
					t.Errorf("sequences %d %d", got[0].Sequence, got[2].Sequence)
				}
				if attr == txnindex.AttrTimestampType && got[1].Timestamp != rb.MaxTimestamp {
					t.Errorf("LogAppendTime record timestamp %d, want batch max %d", got[1].Timestamp, rb.MaxTimestamp)
				}
				if got[3].Control != txnindex.ControlAbort || got[3].CoordinatorEpoch != 3 {
					t.Errorf("marker record %+v", got[3])
				}
				if got[1].Key != nil || got[2].Value != nil || got[2].Key == nil || got[0].Headers[1].Value != nil {
					t.Errorf("null/empty distinctions lost: %+v", got)
				}
			})
		}
	}
}

// legacyWrapper compresses inner messages into one magic 0/1 wrapper entry.
func legacyWrapper(t *testing.T, offset int64, magic int8, attr int8, ts int64, c codec, inner ...[]byte) []byte {
	return legacyMessage(offset, magic, attr|int8(attrCodec(c)), ts, nil, compress(t, c, concat(inner...)))
}

// TestLegacyWrappers: magic 0 and 1 wrappers with each legacy codec; inner
// offsets absolute (magic 0) or relative (magic 1, including the wrapper
// offset 0 librdkafka case); BaseOffset comes from the first inner message.
func TestLegacyWrappers(t *testing.T) {
	for _, c := range []codec{codecGzip, codecSnappy, codecRawSnappy, codecLZ4} {
		for _, magic := range []int8{0, 1} {
			t.Run(fmt.Sprintf("codec%d_magic%d", c, magic), func(t *testing.T) {
				var inner [][]byte
				for i := int64(0); i < 3; i++ {
					off := 50 + i // magic 0: absolute
					if magic == 1 {
						off = i // magic 1: relative
					}
					inner = append(inner, legacyMessage(off, magic, 0, 1000+i, []byte{byte('a' + i)}, []byte(fmt.Sprint("value", i))))
				}
				data := concat(
					legacyWrapper(t, 52, magic, 0, 2000, c, inner...),
					legacyMessage(53, magic, 0, 3000, nil, []byte("plain")),
				)
				f := NewSegmentBytes(data, "00000000000000000050.log", DefaultScanOptions)
				if len(f.Damage) != 0 || len(f.Batches) != 2 {
					t.Fatalf("%s", describeScan(f))
				}
				if b := f.Batches[0]; b.BaseOffset != 50 || b.LastOffset() != 52 || b.Records != 3 {
					t.Errorf("wrapper batch [%d,%d]x%d, want [50,52]x3", b.BaseOffset, b.LastOffset(), b.Records)
				}
				h := NewSegmentBytes(data, "00000000000000000050.log", HeaderScanOptions)
				if b := h.Batches[0]; b.BaseOffset != 52 || b.LastOffset() != 52 || b.Records != 1 {
					t.Errorf("header scan wrapper [%d,%d]x%d, want [52,52]x1", b.BaseOffset, b.LastOffset(), b.Records)
				}
				var got []Record
				var magics []int8
				for _, b := range f.Batches {
					rs, err := f.Records(b)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, rs...)
					for range rs {
						magics = append(magics, magic)
					}
				}
				if magic == 0 && c == codecLZ4 {
					// kgo cannot read Kafka 0.8-era LZ4 frames (see
					// TestLZ4Magic0Checksum); check by hand.
					if len(got) != 4 || got[0].Offset != 50 || got[3].Offset != 53 {
						t.Errorf("records %+v", got)
					}
					return
				}
				compareRecords(t, "legacy", got, magics, kgoRecords(t, data))
			})
		}
	}
	t.Run("magic1_wrapper_offset_zero", func(t *testing.T) {
		inner := [][]byte{legacyMessage(0, 1, 0, 1, nil, []byte("a")), legacyMessage(1, 1, 0, 2, nil, []byte("b"))}
		f := NewSegmentBytes(legacyWrapper(t, 0, 1, 0, 5, codecGzip, inner...), "x.log", DefaultScanOptions)
		rs, err := f.Records(f.Batches[0])
		if err != nil || len(rs) != 2 || rs[0].Offset != 0 || rs[1].Offset != 1 || f.Batches[0].BaseOffset != 0 {
			t.Fatalf("records %+v err %v batch %+v", rs, err, f.Batches[0])
		}
	})
	t.Run("magic1_log_append_time", func(t *testing.T) {
		inner := [][]byte{legacyMessage(0, 1, 0, 1, nil, []byte("a"))}
		f := NewSegmentBytes(legacyWrapper(t, 7, 1, 0x08, 5555, codecGzip, inner...), "x.log", DefaultScanOptions)
		rs, err := f.Records(f.Batches[0])
		if err != nil || rs[0].Timestamp != 5555 || rs[0].Offset != 7 {
			t.Fatalf("records %+v err %v", rs, err)
		}
	})
	t.Run("nested_compression", func(t *testing.T) {
		inner := legacyWrapper(t, 0, 1, 0, 1, codecGzip, legacyMessage(0, 1, 0, 1, nil, []byte("a")))
		f := NewSegmentBytes(legacyWrapper(t, 0, 1, 0, 5, codecGzip, inner), "x.log", DefaultScanOptions)
		if len(f.Batches) != 1 || len(f.Damage) != 1 {
			t.Fatalf("%s", describeScan(f))
		}
		goldenCheck(t, "segment_legacy_nested", describeScan(f))
	})
}

// TestLZ4Magic0Checksum: Kafka 0.8-0.10 wrote the LZ4 frame header checksum
// over the magic number too; the fix-up must produce the checksum a
// conforming writer computes, and leave correct frames alone.
func TestLZ4Magic0Checksum(t *testing.T) {
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	w.Write([]byte("hello hello hello"))
	w.Close()
	good := buf.Bytes()
	if got := fixLZ4HeaderChecksum(good); &got[0] != &good[0] {
		t.Errorf("a correct frame was rewritten")
	}
	broken := bytes.Clone(good)
	flg := broken[4]
	n := 2
	if flg&0x08 != 0 {
		n += 8
	}
	broken[4+n] = byte(xxh32(broken[0:4+n]) >> 8) // the old Kafka bug: magic included
	if broken[4+n] == good[4+n] {
		t.Skip("checksums coincide")
	}
	if _, err := decompress(txnindex.CompressionLZ4, broken, 1<<20, 1); err == nil {
		t.Errorf("magic 1 accepted a bad header checksum")
	}
	out, err := decompress(txnindex.CompressionLZ4, broken, 1<<20, 0)
	if err != nil || string(out) != "hello hello hello" {
		t.Errorf("magic 0: %q %v", out, err)
	}
}

// TestXXH32 checks the short-input XXH32 against known values.
func TestXXH32(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02cc5d05},
		{"a", 0x550d7456},
		{"abc", 0x32d153ff},
	} {
		if got := xxh32([]byte(tc.in)); got != tc.want {
			t.Errorf("xxh32(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
}

// TestDecompressBounds: every codec refuses to expand past the bound.
func TestDecompressBounds(t *testing.T) {
	src := make([]byte, 1<<20)
	for _, c := range []codec{codecGzip, codecSnappy, codecRawSnappy, codecLZ4, codecZstd} {
		z := compress(t, c, src)
		if _, err := decompress(txnindex.Compression(attrCodec(c)), z, 1<<16, 2); err == nil {
			t.Errorf("codec %d: 1 MiB expanded under a 64 KiB bound", c)
		}
		out, err := decompress(txnindex.Compression(attrCodec(c)), z, 1<<20, 2)
		if err != nil || len(out) != len(src) {
			t.Errorf("codec %d: exact bound: %d bytes, %v", c, len(out), err)
		}
	}
	// A xerial chunk claiming more than the input holds.
	bad := append(bytes.Clone(xerialMagic), 0, 0, 0, 1, 0, 0, 0, 1)
	bad = binary.BigEndian.AppendUint32(bad, 1000)
	if _, err := decompress(txnindex.CompressionSnappy, append(bad, 1, 2, 3), 1<<20, 2); err == nil {
		t.Errorf("bad xerial chunk length accepted")
	}
}
