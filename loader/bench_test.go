package loader

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// benchSize is the size of the generated partition.
const benchSize = 64 << 20

var (
	benchOnce sync.Once
	benchDir  string
	benchLog  string
	benchErr  error

	bigOnce sync.Once
	bigLog  string
	bigErr  error
)

// benchPartition writes, once per test binary, a ~64 MiB partition of
// transactional and plain batches with markers: 100 records of 100 bytes
// per data batch (about 11 KiB), a COMMIT or ABORT marker after every
// fourth.
func benchPartition(b *testing.B) string {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "loader-bench-")
		if benchErr != nil {
			return
		}
		dir := filepath.Join(benchDir, "bench-0")
		if benchErr = os.Mkdir(dir, 0o755); benchErr != nil {
			return
		}
		recs := records(100, 100)
		var buf []byte
		var off int64
		for i := 0; len(buf) < benchSize; i++ {
			pid := int64(i % 7)
			txn := pid%2 == 0
			rb := kmsg.RecordBatch{FirstOffset: off, PartitionLeaderEpoch: 1, FirstTimestamp: 1, MaxTimestamp: 100,
				ProducerID: pid, ProducerEpoch: 0, FirstSequence: int32(i)}
			if txn {
				rb.Attributes = 0x10
			}
			buf = append(buf, batch(b, rb, codecNone, recs)...)
			off += 100
			if txn && i%4 == 0 {
				buf = append(buf, marker(b, off, pid, i%8 == 0, 0)...)
				off++
			}
		}
		benchLog = filepath.Join(dir, "00000000000000000000.log")
		benchErr = os.WriteFile(benchLog, buf, 0o644)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchLog
}

// benchBigBatches writes a ~64 MiB segment of 512 KiB batches, where a
// header-only scan reads one page per batch instead of the file.
func benchBigBatches(b *testing.B) string {
	benchPartition(b) // creates benchDir
	bigOnce.Do(func() {
		recs := records(5000, 100)
		var buf []byte
		for off := int64(0); len(buf) < benchSize; off += 5000 {
			buf = append(buf, batch(b, kmsg.RecordBatch{FirstOffset: off, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}, codecNone, recs)...)
		}
		bigLog = filepath.Join(benchDir, "big-0", "00000000000000000000.log")
		if bigErr = os.MkdirAll(filepath.Dir(bigLog), 0o755); bigErr == nil {
			bigErr = os.WriteFile(bigLog, buf, 0o644)
		}
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigLog
}

// BenchmarkScanHeadersBigBatches: the header-only scan over large batches.
func BenchmarkScanHeadersBigBatches(b *testing.B) {
	path := benchBigBatches(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f, err := OpenSegmentWith(path, HeaderScanOptions)
		if err != nil || len(f.Damage) != 0 {
			b.Fatal(err, f.Damage)
		}
		f.Close()
	}
}

func cleanupBench() {
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
}

// BenchmarkScanHeaders is the decision path's fast scan: headers only, plus
// the first record of each marker.
func BenchmarkScanHeaders(b *testing.B) {
	path := benchPartition(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f, err := OpenSegmentWith(path, HeaderScanOptions)
		if err != nil || len(f.Damage) != 0 {
			b.Fatal(err, f.Damage)
		}
		f.Close()
	}
}

// BenchmarkScanVerifyCRC reads every batch whole and checks its CRC-32C.
func BenchmarkScanVerifyCRC(b *testing.B) {
	path := benchPartition(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f, err := OpenSegmentWith(path, DefaultScanOptions)
		if err != nil || len(f.Damage) != 0 {
			b.Fatal(err, f.Damage)
		}
		f.Close()
	}
}

// BenchmarkKmsgDecode is the baseline: read the file and decode every batch
// with kmsg.RecordBatch.ReadFrom (which slices, not copies, the records).
func BenchmarkKmsgDecode(b *testing.B) {
	path := benchPartition(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		var rb kmsg.RecordBatch
		n := 0
		for pos := 0; len(data)-pos > 17; n++ {
			size := int(int32(uint32(data[pos+8])<<24 | uint32(data[pos+9])<<16 | uint32(data[pos+10])<<8 | uint32(data[pos+11])))
			if err := rb.ReadFrom(data[pos : pos+size+12]); err != nil {
				b.Fatal(err)
			}
			pos += size + 12
		}
		if n == 0 {
			b.Fatal("no batches")
		}
	}
}
