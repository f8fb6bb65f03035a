package loader_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// BenchmarkScanPartition loads a generated ~256 MiB partition directory
// (four 64 MiB segments of the realistic mix scripts/bench-scan.sh
// measures at 1 GiB: gen.WriteDir's transactional batches of 1-50 records,
// markers, non-transactional and compressed batches) the way the decision
// path does, against reading the same bytes:
//
//	scan+build  OpenPartitionWith(HeaderScanOptions), then txnindex.Build
//	scan        OpenPartitionWith(HeaderScanOptions) alone
//	read        the files read with 128 KiB reads into one buffer, as cat does
//
// Profile one with
//
//	go test -run '^$' -bench 'ScanPartition/scan$' -cpuprofile /tmp/scan.cpu ./loader/
func BenchmarkScanPartition(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "bench-0")
	if _, err := gen.WriteDir(dir, gen.DirOptions{Size: 256 << 20, SegmentBytes: 64 << 20}); err != nil {
		b.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			b.Fatal(err)
		}
		size += info.Size()
	}
	b.Run("scan+build", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			p, err := loader.OpenPartitionWith(dir, loader.HeaderScanOptions)
			if err != nil || len(p.Damage) != 0 {
				b.Fatal(err, p.Damage)
			}
			txnindex.Build(p.Input)
		}
	})
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			p, err := loader.OpenPartitionWith(dir, loader.HeaderScanOptions)
			if err != nil || len(p.Damage) != 0 {
				b.Fatal(err, p.Damage)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(size)
		buf := make([]byte, 128<<10)
		for b.Loop() {
			for _, e := range ents {
				f, err := os.Open(filepath.Join(dir, e.Name()))
				if err != nil {
					b.Fatal(err)
				}
				for {
					if n, err := f.Read(buf); n == 0 || err != nil {
						break
					}
				}
				f.Close()
			}
		}
	})
}
