package main

import (
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/hostilebroker"
)

// TestWatchOnceHostileFetch runs watch --once against a broker whose Fetch
// answers are the zstd bombs of the issue: the command must end with an
// error naming the partition and the damage, not with the runtime's "out
// of memory" (kgo once allocated 16 GB for the first and 12.8 GB for the
// second).
func TestWatchOnceHostileFetch(t *testing.T) {
	tests := []struct {
		name    string
		records func(t *testing.T) []byte
		hwm     int64
		want    string
	}{
		{"zstd_records_100M", func(t *testing.T) []byte { return hostilebroker.ZstdRecordsBomb(t, 0, 100_000_000, 100_000_000) },
			100_000_000, "declares 100000000 records"},
		{"ctrl_zstd_bombs_200", func(t *testing.T) []byte { return hostilebroker.ControlZstdBombs(t, 0, 200, 64<<20) },
			200, "decompressed size exceeds the bound"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := hostilebroker.New(t, "hostile", 1)
			b.HWM, b.Records = tc.hwm, tc.records(t)
			code, out, errOut := runArgs(t, "watch", "--bootstrap", b.Addr(), "--topic", "hostile", "--once")
			if code == 0 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "hostile-0") {
				t.Fatalf("exit %d, stderr %q, stdout %q; want an error naming hostile-0 and %q", code, errOut, out, tc.want)
			}
		})
	}
}
