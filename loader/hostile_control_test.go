package loader

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// controlKey and markerValue are a control record's key (version, type)
// and an end-transaction marker's value (version, coordinatorEpoch).
func controlKey(typ int16) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(typ))
}

func markerValue(epoch int32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), uint32(epoch))
}

// markerRecord is the 17-byte record a broker writes in a COMMIT marker.
func markerRecord(epoch int32) []byte {
	return appendRecords(nil, []kmsg.Record{{Key: controlKey(1), Value: markerValue(epoch)}})
}

// rawBatch encodes rb around body (already compressed as rb.Attributes
// says), with count records claimed and a correct CRC.
func rawBatch(rb kmsg.RecordBatch, count int32, body []byte) []byte {
	rb.Records, rb.NumRecords, rb.Magic = body, count, 2
	rb.Length = int32(49 + len(body))
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32c(out[21:]))
	return out
}

var (
	bombOnce sync.Once
	bombZstd []byte
)

// controlBomb is the control-batch payload: about 2 KB of zstd
// that decompresses to 64 MiB (DefaultMaxDecompressedSize, so the old scan
// accepted it whole), starting with a valid COMMIT marker record.
func controlBomb(t testing.TB) []byte {
	bombOnce.Do(func() {
		body := make([]byte, DefaultMaxDecompressedSize)
		copy(body, markerRecord(5))
		bombZstd = compress(t, codecZstd, body)
	})
	return bombZstd
}

// allocDuring returns the bytes allocated while fn ran.
func allocDuring(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestControlBatchBombs: control batches (attributes
// 0x34, transactional + control + zstd) holding 2 KB of zstd that expand
// to 64 MiB were decompressed whole by the header scan, 64 MiB each. A
// transaction marker holds one record of a few bytes: a marker batch that
// claims more records, or whose records are larger than a marker can be,
// is refused as damage at its byte position (its control type UNKNOWN),
// without decompressing more than that bound; the scan goes on. KRaft's
// control batches (not transactional, several records) are read up to
// their first record's key only.
func TestControlBatchBombs(t *testing.T) {
	bomb := controlBomb(t)
	if len(bomb) > 8<<10 {
		t.Fatalf("bomb is %d bytes of zstd, want about 2 KB", len(bomb))
	}
	txnZstd := kmsg.RecordBatch{PartitionLeaderEpoch: 3, Attributes: 0x34, FirstTimestamp: 2000, MaxTimestamp: 2000,
		ProducerID: 7, ProducerEpoch: 1, FirstSequence: -1}
	at := func(rb kmsg.RecordBatch, off int64) kmsg.RecordBatch { rb.FirstOffset = off; return rb }
	kraft := kmsg.RecordBatch{Attributes: 0x24, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}
	big := appendRecords(nil, []kmsg.Record{{Key: controlKey(1), Value: append(markerValue(5), make([]byte, 280)...)}})

	const bombs = 20
	tests := []struct {
		name    string
		batches [][]byte
		control txnindex.ControlType
		note    string // in every damage entry; "" for none
	}{
		{"zstd_bomb_one_record", repeatBatches(bombs, func(i int) []byte { return rawBatch(at(txnZstd, int64(1+i)), 1, bomb) }),
			txnindex.ControlUnknown, "larger than the 256 bytes"},
		{"zstd_bomb_many_records", repeatBatches(bombs, func(i int) []byte { return rawBatch(at(txnZstd, int64(1+i)), 9_586_981, bomb) }),
			txnindex.ControlUnknown, "holds 1 record, found 9586981"},
		{"uncompressed_oversized_value", [][]byte{rawBatch(at(kmsg.RecordBatch{Attributes: 0x30, ProducerID: 7, FirstSequence: -1}, 1), 1, big)},
			txnindex.ControlUnknown, "larger than the 256 bytes"},
		{"uncompressed_two_records", [][]byte{rawBatch(at(kmsg.RecordBatch{Attributes: 0x30, ProducerID: 7, FirstSequence: -1, LastOffsetDelta: 1}, 1), 2,
			append(markerRecord(5), markerRecord(5)...))},
			txnindex.ControlUnknown, "holds 1 record, found 2"},
		{"zstd_marker", [][]byte{rawBatch(at(txnZstd, 1), 1, compress(t, codecZstd, markerRecord(5)))}, txnindex.ControlCommit, ""},
		{"gzip_marker", [][]byte{rawBatch(at(func() kmsg.RecordBatch { rb := txnZstd; rb.Attributes = 0x31; return rb }(), 1), 1,
			compress(t, codecGzip, markerRecord(5)))}, txnindex.ControlCommit, ""},
		{"kraft_leader_change_then_bomb", [][]byte{rawBatch(at(kraft, 1), 3, compress(t, codecZstd, append(
			appendRecords(nil, []kmsg.Record{{Key: controlKey(2), Value: make([]byte, 40)}}), make([]byte, 8<<20)...)))},
			txnindex.ControlLeaderChange, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := concat(dataBatch(t, 0, 7, true, 1))
			for _, b := range tc.batches {
				data = append(data, b...)
			}
			last := tc.batches[len(tc.batches)-1]
			next := int64(binary.BigEndian.Uint64(last)) + int64(int32(binary.BigEndian.Uint32(last[23:]))) + 1
			data = append(data, dataBatch(t, next, -1, false, 2)...)
			for _, o := range []ScanOptions{HeaderScanOptions, DefaultScanOptions} {
				var f *SegmentFile
				alloc := allocDuring(func() { f = NewSegmentBytes(data, "00000000000000000000.log", o) })
				if len(f.Batches) != len(tc.batches)+2 || f.ValidBytes != int64(len(data)) {
					t.Fatalf("kept %d batches, want %d:\n%s", len(f.Batches), len(tc.batches)+2, describeScan(f))
				}
				// 64 MiB per batch before the fix; a few codec blocks now.
				if alloc > 16<<20 {
					t.Errorf("scan of %d control batches allocated %d MiB", len(tc.batches), alloc>>20)
				}
				pos := int64(len(dataBatch(t, 0, 7, true, 1)))
				for i, b := range f.Batches[1 : len(f.Batches)-1] {
					if b.Control() != tc.control {
						t.Errorf("batch %d: control %v, want %v", i, b.Control(), tc.control)
					}
					if tc.control == txnindex.ControlCommit && b.CoordinatorEpoch() != 5 {
						t.Errorf("batch %d: coordinator epoch %d, want 5", i, b.CoordinatorEpoch())
					}
					if tc.note == "" {
						continue
					}
					want := fmt.Sprintf("batch at byte %#x: control batch", pos)
					if i >= len(f.Damage) || f.Damage[i].Offset != pos || !strings.Contains(f.Damage[i].Error(), want) || !strings.Contains(f.Damage[i].Error(), tc.note) {
						t.Fatalf("damage for batch %d: want %q and %q, have\n%s", i, want, tc.note, describeScan(f))
					}
					pos += int64(b.Size)
				}
				if tc.note == "" && len(f.Damage) != 0 {
					t.Errorf("damage: %v", f.Damage)
				}
				if tc.note != "" && len(f.Damage) != len(tc.batches) {
					t.Errorf("%d damage entries, want %d", len(f.Damage), len(tc.batches))
				}
			}
		})
	}
}

func repeatBatches(n int, f func(int) []byte) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}
