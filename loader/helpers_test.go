package loader

import (
	"bytes"
	"encoding/binary"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

var update = flag.Bool("update", false, "update golden files in testdata/errors")

// realData is the shared corpus of files Kafka brokers wrote, read in place.
const realData = "../testdata/realdata"

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	cleanupBench()
	os.Exit(code)
}

// needRealData skips when the corpus is absent, unless CI=true: then a
// missing input is a failure, so a broken checkout cannot pass silently.
func needRealData(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(realData); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real data %s missing with CI=true: %v", realData, err)
		}
		t.Skipf("real data %s not present: %v", realData, err)
	}
	return realData
}

// realFiles returns the files under the corpus matching pattern (a base
// name glob), sorted.
func realFiles(t testing.TB, pattern string) []string {
	root := needRealData(t)
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ok, _ := filepath.Match(pattern, d.Name()); ok && !d.IsDir() {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no %s files under %s", pattern, root)
	}
	return out
}

// rel names a corpus file in test output.
func rel(path string) string {
	r, err := filepath.Rel(realData, path)
	if err != nil {
		return path
	}
	return r
}

// --- batch builders: kmsg.RecordBatch.AppendTo plus the CRC patch, as kfake does.

type codec int8

const (
	codecNone      codec = 0
	codecGzip      codec = 1
	codecSnappy    codec = 2 // xerial framed, as the Java producer writes
	codecLZ4       codec = 3
	codecZstd      codec = 4
	codecRawSnappy codec = 5 // raw block; attribute value 2
)

func compress(t testing.TB, c codec, src []byte) []byte {
	var buf bytes.Buffer
	switch c {
	case codecNone:
		return src
	case codecGzip:
		w := gzip.NewWriter(&buf)
		w.Write(src)
		w.Close()
	case codecSnappy:
		buf.Write(xerialMagic)
		buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
		for rest := src; len(rest) > 0; {
			n := min(len(rest), 1000) // several chunks
			blk := s2.EncodeSnappy(nil, rest[:n])
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(blk))))
			buf.Write(blk)
			rest = rest[n:]
		}
	case codecRawSnappy:
		return s2.EncodeSnappy(nil, src)
	case codecLZ4:
		w := lz4.NewWriter(&buf)
		w.Write(src)
		w.Close()
	case codecZstd:
		w, _ := zstd.NewWriter(&buf)
		w.Write(src)
		w.Close()
	default:
		t.Fatalf("codec %d", c)
	}
	return buf.Bytes()
}

func attrCodec(c codec) int16 {
	if c == codecRawSnappy {
		return 2
	}
	return int16(c)
}

// appendRecords encodes records, filling each Length.
func appendRecords(dst []byte, recs []kmsg.Record) []byte {
	for i := range recs {
		r := recs[i]
		r.Length = 0
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1)
		dst = r.AppendTo(dst)
	}
	return dst
}

// batch builds one v2 batch. rb supplies the header fields; NumRecords,
// LastOffsetDelta (if zero), Length, Magic and CRC are filled in.
func batch(t testing.TB, rb kmsg.RecordBatch, c codec, recs []kmsg.Record) []byte {
	raw := appendRecords(nil, recs)
	rb.Records = compress(t, c, raw)
	rb.Attributes |= attrCodec(c)
	rb.NumRecords = int32(len(recs))
	if rb.LastOffsetDelta == 0 && len(recs) > 0 {
		rb.LastOffsetDelta = recs[len(recs)-1].OffsetDelta
	}
	rb.Magic = 2
	rb.Length = int32(49 + len(rb.Records))
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], castagnoli))
	return out
}

// records makes n simple records.
func records(n int, size int) []kmsg.Record {
	out := make([]kmsg.Record, n)
	for i := range out {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		out[i] = kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i), Key: []byte{byte(i)}, Value: v}
	}
	return out
}

// dataBatch is a plain or transactional data batch of n records.
func dataBatch(t testing.TB, base int64, pid int64, txn bool, n int) []byte {
	rb := kmsg.RecordBatch{FirstOffset: base, PartitionLeaderEpoch: 3, FirstTimestamp: 1000, MaxTimestamp: 1000 + int64(n) - 1,
		ProducerID: pid, ProducerEpoch: 1, FirstSequence: 0}
	if pid < 0 {
		rb.ProducerEpoch, rb.FirstSequence = -1, -1
	}
	if txn {
		rb.Attributes = txnindex.AttrTransactional
	}
	return batch(t, rb, codecNone, records(n, 10))
}

// marker is a broker-written end-transaction marker batch (78 bytes).
func marker(t testing.TB, off int64, pid int64, commit bool, coordEpoch int32) []byte {
	typ := int16(0)
	if commit {
		typ = 1
	}
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(typ))
	val := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), uint32(coordEpoch))
	rb := kmsg.RecordBatch{FirstOffset: off, PartitionLeaderEpoch: 3, Attributes: txnindex.AttrTransactional | txnindex.AttrControl,
		FirstTimestamp: 2000, MaxTimestamp: 2000, ProducerID: pid, ProducerEpoch: 1, FirstSequence: -1}
	return batch(t, rb, codecNone, []kmsg.Record{{Key: key, Value: val}})
}

// legacyMessage builds one magic 0/1 log entry with a correct CRC.
func legacyMessage(offset int64, magic int8, attr int8, ts int64, key, value []byte) []byte {
	var m []byte
	m = append(m, 0, 0, 0, 0) // crc
	m = append(m, byte(magic), byte(attr))
	if magic == 1 {
		m = binary.BigEndian.AppendUint64(m, uint64(ts))
	}
	appendBytes := func(b []byte) {
		if b == nil {
			m = binary.BigEndian.AppendUint32(m, 0xffffffff)
			return
		}
		m = binary.BigEndian.AppendUint32(m, uint32(len(b)))
		m = append(m, b...)
	}
	appendBytes(key)
	appendBytes(value)
	binary.BigEndian.PutUint32(m, crc32.ChecksumIEEE(m[4:]))
	out := binary.BigEndian.AppendUint64(nil, uint64(offset))
	out = binary.BigEndian.AppendUint32(out, uint32(len(m)))
	return append(out, m...)
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// tinyRecord is the smallest v2 record (minRecordSize bytes): length 6,
// attributes 0, timestampDelta 0, offsetDelta 0, null key, null value, no
// headers. A record-count bomb is many of them.
var tinyRecord = []byte{0x0c, 0, 0, 0, 1, 1, 0}
