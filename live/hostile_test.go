package live

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/hostilebroker"
)

// allocDuring returns the bytes allocated while fn ran.
func allocDuring(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHostileFetchAnswers serves Fetch answers no broker writes to the
// watcher, from a raw-protocol broker on loopback. kgo's read_committed
// filter sized its records by a batch's recordsCount and decompressed up
// to 2 GiB: a few KB of zstd claiming 100 million records allocated 16 GB
// and killed the process. Every answer here must end the poll with an
// error naming the damage, allocating a bounded amount.
func TestHostileFetchAnswers(t *testing.T) {
	good := hostilebroker.Batch(kmsg.RecordBatch{FirstOffset: 0, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}, 1,
		hostilebroker.Records(kmsg.Record{Value: []byte("v")}))
	tests := []struct {
		name    string
		records func(t *testing.T) []byte
		hwm     int64
		errWant string // in the poll's error
	}{
		// The zstd_records.log: 64 KB of zstd, 100M records.
		{"zstd_records_100M", func(t *testing.T) []byte {
			return hostilebroker.ZstdRecordsBomb(t, 0, 100_000_000, 100_000_000)
		}, 100_000_000, "declares 100000000 records, more than the 262144"},
		// Small enough that kgo's allocation (2M kgo.Records, about
		// 400 MB) does not take the machine down, large enough to see.
		{"zstd_records_2M", func(t *testing.T) []byte {
			return hostilebroker.ZstdRecordsBomb(t, 0, 2_000_000, 14_000_000)
		}, 2_000_000, "declares 2000000 records"},
		// Few records claimed, 64 MiB of zeros behind them.
		{"zstd_bytes_64MiB", func(t *testing.T) []byte {
			return hostilebroker.ZstdRecordsBomb(t, 0, 1000, 64<<20)
		}, 1000, "decompressed size exceeds the bound"},
		// The ctrl_zstd_bombs_200.log: 200 COMMIT markers of
		// 2 KB of zstd, each expanding to 64 MiB.
		{"ctrl_zstd_bombs_200", func(t *testing.T) []byte {
			return hostilebroker.ControlZstdBombs(t, 0, 200, 64<<20)
		}, 200, "decompressed size exceeds the bound"},
		{"good_then_ctrl_zstd_bombs", func(t *testing.T) []byte {
			return append(append([]byte{}, good...), hostilebroker.ControlZstdBombs(t, 1, 200, 64<<20)...)
		}, 201, "decompressed size exceeds the bound"},
		{"bad_crc_only", func(t *testing.T) []byte {
			b := append([]byte{}, good...)
			b[len(b)-1] ^= 1
			return b
		}, 1, "bad CRC"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := hostilebroker.New(t, "hostile", 1)
			b.HWM, b.Records = tc.hwm, tc.records(t)
			w := dial(t, Config{Brokers: []string{b.Addr()}, Topic: "hostile", DialTimeout: 5 * time.Second})
			var err error
			alloc := allocDuring(func() { _, err = w.Poll(context.Background()) })
			t.Logf("poll allocated %d MiB: %v", alloc>>20, err)
			if err == nil || !strings.Contains(err.Error(), tc.errWant) {
				t.Fatalf("poll error %v, want one containing %q", err, tc.errWant)
			}
			if !strings.Contains(err.Error(), "hostile-0") {
				t.Errorf("error %q does not name the partition", err)
			}
			bound := uint64(160 << 20)
			if raceOn {
				bound *= 4
			}
			if alloc > bound {
				t.Errorf("poll allocated %d MiB, want at most %d", alloc>>20, bound>>20)
			}
			if b.Requests(kmsg.Fetch) == 0 {
				t.Errorf("the watcher sent no Fetch")
			}
		})
	}
}

// TestHostileBrokerHealthy checks the harness itself: a committed batch
// served by the hostile broker's default answers is watched without
// error, and kgo's filter delivers its offset.
func TestHostileBrokerHealthy(t *testing.T) {
	b := hostilebroker.New(t, "calm", 1)
	b.HWM = 1
	b.Records = hostilebroker.Batch(kmsg.RecordBatch{FirstOffset: 0, Attributes: 4, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}, 1,
		hostilebroker.Zstd(t, hostilebroker.Records(kmsg.Record{Value: []byte("v")})))
	w := dial(t, Config{Brokers: []string{b.Addr()}, Topic: "calm", DialTimeout: 5 * time.Second})
	u, err := w.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Partitions) != 1 || u.Partitions[0].Delivered != 1 || len(u.Mismatches) != 0 {
		t.Fatalf("update %+v, want offset 0 delivered and no mismatch", u)
	}
}
