package hostilebroker

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Batch encodes a magic 2 batch around body (records already compressed as
// rb.Attributes says), claiming count records, with a CRC that holds: a
// hostile batch that a client cannot refuse on its checksum.
func Batch(rb kmsg.RecordBatch, count int32, body []byte) []byte {
	rb.Records, rb.NumRecords, rb.Magic = body, count, 2
	rb.Length = int32(49 + len(body))
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], castagnoli))
	return out
}

// Records encodes v2 records, their lengths filled in.
func Records(recs ...kmsg.Record) []byte {
	var dst []byte
	for i := range recs {
		r := recs[i]
		r.Length = 0
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		dst = r.AppendTo(dst)
	}
	return dst
}

// Zstd compresses src as one zstd frame.
func Zstd(t testing.TB, src []byte) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll(src, nil)
}

// Marker is the record of a transaction marker (COMMIT when commit, else
// ABORT) with coordinator epoch epoch: key (version 0, type), value
// (version 0, epoch).
func Marker(commit bool, epoch int32) kmsg.Record {
	typ := uint16(0)
	if commit {
		typ = 1
	}
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), typ)
	val := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), uint32(epoch))
	return kmsg.Record{Key: key, Value: val}
}

// ZstdRecordsBomb is a zstd batch at offset base claiming count records
// whose body decompresses to size zero bytes: a few KB on the wire.
func ZstdRecordsBomb(t testing.TB, base int64, count int32, size int) []byte {
	rb := kmsg.RecordBatch{FirstOffset: base, Attributes: 4, LastOffsetDelta: count - 1, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}
	return Batch(rb, count, Zstd(t, make([]byte, size)))
}

// ControlZstdBombs is n transactional control batches (attributes 0x34)
// from offset base, each a COMMIT marker record followed by zeros, the
// whole zstd-compressed to about 2 KB that decompresses to size bytes.
func ControlZstdBombs(t testing.TB, base int64, n, size int) []byte {
	body := make([]byte, size)
	copy(body, Records(Marker(true, 5)))
	z := Zstd(t, body)
	var out []byte
	for i := range n {
		rb := kmsg.RecordBatch{FirstOffset: base + int64(i), Attributes: 0x34, ProducerID: 7, ProducerEpoch: 1, FirstSequence: -1}
		out = append(out, Batch(rb, 1, z)...)
	}
	return out
}
