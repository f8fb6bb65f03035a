package capture

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadCapture reads a pcapng of a read_committed consumer's Fetch
// traffic from a file, as decide does: the file named by
// TXNSCOPE_BENCH_CAPTURE (make one with scripts/gencapture), else a
// synthetic capture of 32 Fetch exchanges of about 1 MB in 65,000-byte
// segments. Whole-process figures against tshark: scripts/bench-capture.sh
// and docs/benchmarks-capture.md.
func BenchmarkReadCapture(b *testing.B) {
	path := os.Getenv("TXNSCOPE_BENCH_CAPTURE")
	if path == "" {
		data, _ := fetchConv(b, 32)
		path = filepath.Join(b.TempDir(), "bench.pcap")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		c, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Fetches) == 0 || len(c.Problems) > 0 {
			b.Fatalf("%d fetches, problems %v", len(c.Fetches), c.Problems)
		}
	}
}
