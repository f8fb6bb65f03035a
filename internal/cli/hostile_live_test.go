package cli

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

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

// TestServeLiveHostileFetch: serve --bootstrap --topic against the same
// broker. A bomb in the first answer is an error at start that names it;
// a broker that turns hostile once the server runs leaves it serving, and
// the bombs are polled again (with backoff) without the process, which is
// this test's, running out of memory.
func TestServeLiveHostileFetch(t *testing.T) {
	t.Run("first_answer", func(t *testing.T) {
		b := hostilebroker.New(t, "hostile", 1)
		b.HWM, b.Records = 100_000_000, hostilebroker.ZstdRecordsBomb(t, 0, 100_000_000, 100_000_000)
		code, _, errOut := runArgs(t, "serve", "--addr", "127.0.0.1:0", "--bootstrap", b.Addr(), "--topic", "hostile")
		if code == 0 || !strings.Contains(errOut, "declares 100000000 records") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("turns_hostile", func(t *testing.T) {
		b := hostilebroker.New(t, "hostile", 1)
		good := hostilebroker.Batch(kmsg.RecordBatch{ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}, 1,
			hostilebroker.Records(kmsg.Record{Value: []byte("v")}))
		bombs := hostilebroker.ControlZstdBombs(t, 1, 200, 64<<20)
		var hostile atomic.Bool
		b.HWM, b.Records = 1, good
		b.Handler = func(req kmsg.Request) *hostilebroker.Reply {
			if !hostile.Load() {
				return nil
			}
			switch req.(type) {
			case *kmsg.ListOffsetsRequest:
				resp := b.Default(req).(*kmsg.ListOffsetsResponse)
				for i := range resp.Topics {
					for j := range resp.Topics[i].Partitions {
						if p := &resp.Topics[i].Partitions[j]; p.Offset == 1 {
							p.Offset = 201
						}
					}
				}
				return &hostilebroker.Reply{Resp: resp}
			case *kmsg.FetchRequest:
				resp := b.Default(req).(*kmsg.FetchResponse)
				for i := range resp.Topics {
					for j := range resp.Topics[i].Partitions {
						p := &resp.Topics[i].Partitions[j]
						p.HighWatermark, p.LastStableOffset, p.RecordBatches = 201, 201, bombs
					}
				}
				return &hostilebroker.Reply{Resp: resp}
			}
			return nil
		}
		s := startServe(t, "--bootstrap", b.Addr(), "--topic", "hostile", "--poll", "20ms")
		hostile.Store(true)
		for fetches := b.Requests(kmsg.Fetch); b.Requests(kmsg.Fetch) < fetches+4; {
			time.Sleep(20 * time.Millisecond)
		}
		if resp, _ := do(t, "GET", s.url("/healthz"), nil); resp.StatusCode != 200 {
			t.Fatalf("healthz: %s", resp.Status)
		}
	})
}
