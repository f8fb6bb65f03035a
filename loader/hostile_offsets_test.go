package loader

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// hostileOffsetBatch is a one-record data batch whose header claims base
// and lastOffsetDelta, with a correct CRC: the header scan and the CRC
// check both accept it, so only the offset checks can refuse it.
func hostileOffsetBatch(t testing.TB, base int64, delta int32) []byte {
	rb := kmsg.RecordBatch{FirstOffset: base, LastOffsetDelta: delta, PartitionLeaderEpoch: 3,
		FirstTimestamp: 1000, MaxTimestamp: 1000, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}
	b := batch(t, rb, codecNone, records(1, 10))
	binary.BigEndian.PutUint32(b[23:], uint32(delta)) // batch() fills a zero delta from the records
	binary.BigEndian.PutUint32(b[17:], crc32c(b[21:]))
	return b
}

// TestHostileOffsets (binary segments): after three
// valid batches, a batch whose offsets overflow int64, go negative or go
// backwards is damage at its byte position; the scan stops there and the
// three batches before it stay delivered, with the log end offset, high
// watermark and LSO they imply (before the fix the overflowing batch made
// all three 0 and the valid batches pending).
func TestHostileOffsets(t *testing.T) {
	valid := concat(dataBatch(t, 0, -1, false, 3), dataBatch(t, 3, 7, true, 2), marker(t, 5, 7, true, 1))
	tests := []struct {
		name string
		bad  []byte
		want string
	}{
		{"overflow", hostileOffsetBatch(t, math.MaxInt64-7, math.MaxInt32), "overflow"},
		{"negative_delta", hostileOffsetBatch(t, 6, -5), "last offset delta"},
		{"negative_delta_min", hostileOffsetBatch(t, 6, math.MinInt32), "last offset delta"},
		{"negative_base", hostileOffsetBatch(t, math.MinInt64, math.MaxInt32), "base offset"},
		{"backwards", hostileOffsetBatch(t, 4, 0), "backwards"},
		{"repeated", hostileOffsetBatch(t, 5, 0), "backwards"},
		{"last_offset_max", hostileOffsetBatch(t, math.MaxInt64-1, 1), "overflow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := concat(valid, tc.bad, dataBatch(t, 100, -1, false, 1))
			dir := filepath.Join(t.TempDir(), "t-0")
			writeFile(t, filepath.Join(dir, "00000000000000000000.log"), data)
			for _, o := range []ScanOptions{DefaultScanOptions, HeaderScanOptions} {
				p, err := OpenPartitionWith(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				seg := p.Segments[0].Log
				if len(seg.Batches) != 3 || seg.ValidBytes != int64(len(valid)) {
					t.Fatalf("kept %d batches, %d valid bytes; want 3 and %d", len(seg.Batches), seg.ValidBytes, len(valid))
				}
				if len(seg.Damage) != 1 {
					t.Fatalf("damage %v, want one entry", seg.Damage)
				}
				d := seg.Damage[0]
				pos := fmt.Sprintf("batch at byte %#x", len(valid))
				if d.Offset != int64(len(valid)) || !strings.Contains(d.Error(), pos) || !strings.Contains(d.Error(), tc.want) {
					t.Errorf("damage %q: want %q and %q", d, pos, tc.want)
				}
				l := p.Build()
				if l.LogEndOffset != 6 || l.HighWatermark != 6 || l.LastStableOffset != 6 {
					t.Errorf("LEO %d HWM %d LSO %d, want 6 6 6", l.LogEndOffset, l.HighWatermark, l.LastStableOffset)
				}
				c := txnindex.NewCounts(0, l.HighWatermark-1)
				for d := range l.Decisions(txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}) {
					if d.To <= 4 && d.Verdict != txnindex.Delivered {
						t.Errorf("offsets %d-%d: %v, want delivered", d.From, d.To, d.Verdict)
					}
					c.Add(&d)
				}
				if c.Delivered != 5 || c.ControlMarkers != 1 || c.Pending != 0 {
					t.Errorf("counts %+v: want 5 delivered, 1 marker, 0 pending", c)
				}
			}
		})
	}
}
