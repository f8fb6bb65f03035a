package dumplog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// batchLine prints a magic 2 batch line as DumpLogSegments does, with the
// offsets and count given as text, so a test can write what no int64 holds.
func batchLine(base, last, count string, pos int) string {
	return fmt.Sprintf("baseOffset: %s lastOffset: %s count: %s baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: %d CreateTime: 1700000000000 size: 80 magic: 2 compresscodec: none crc: 1 isvalid: true\n",
		base, last, count, pos)
}

// validHead is a segment dump of three valid batches, offsets 0 to 5.
const validHead = "Dumping /data/t-0/00000000000000000000.log\nLog starting offset: 0\n"

func validBatches() string {
	return validHead + batchLine("0", "1", "2", 0) + batchLine("2", "3", "2", 80) + batchLine("4", "5", "2", 160)
}

// TestHostileBatchLines: a batch line whose offsets or
// counts no broker writes is refused as a problem at its line and byte
// position, and the three valid batches before it stay, decided as before:
// all delivered, log end, HWM and LSO 6. Before the fix, the overflowing
// offsets passed the int32 delta check (last - base wrapped to -1) and made
// the log end 0; counts and header fields were truncated to int32/int16
// silently; negative and descending offsets were taken.
func TestHostileBatchLines(t *testing.T) {
	at := len(validBatches()) // byte position of the fourth batch line
	cases := []struct {
		name, line, msg string
	}{
		{"OverflowingOffsets", batchLine("-9223372036854775808", "9223372036854775807", "1", 240),
			`field "baseOffset": want 0 to 9223372036854775806, found -9223372036854775808`},
		{"CountTruncated", batchLine("6", "6", "99999999999", 240),
			`field "count": want 0 to 1 (one record per offset at most), found 99999999999`},
		{"CountAboveOffsets", batchLine("6", "7", "3", 240),
			`field "count": want 0 to 2 (one record per offset at most), found 3`},
		{"NegativeCount", batchLine("6", "7", "-1", 240),
			`field "count": want 0 to 2 (one record per offset at most), found -1`},
		// Kafka prints baseOffset + lastOffsetDelta in Java longs: 2^63-8
		// plus 2^31-1 wraps negative.
		{"DeltaWrapsNegative", batchLine("9223372036854775800", "-9223372034707292170", "1", 240),
			`field "lastOffset": want 9223372036854775800 to 9223372036854775806 (baseOffset plus the int32 lastOffsetDelta), found -9223372034707292170`},
		{"LastOffsetMaxInt64", batchLine("9223372036854775800", "9223372036854775807", "1", 240),
			`field "lastOffset": want 9223372036854775800 to 9223372036854775806 (baseOffset plus the int32 lastOffsetDelta), found 9223372036854775807`},
		{"DeltaAboveInt32", batchLine("6", "2147483654", "1", 240),
			`field "lastOffset": want 6 to 2147483653 (baseOffset plus the int32 lastOffsetDelta), found 2147483654`},
		{"NegativeDelta", batchLine("8", "7", "1", 240),
			`field "lastOffset": want 8 to 2147483655 (baseOffset plus the int32 lastOffsetDelta), found 7`},
		{"NegativeOffsets", batchLine("-5", "-1", "1", 240),
			`field "baseOffset": want 0 to 9223372036854775806, found -5`},
		{"Descending", batchLine("3", "3", "1", 240),
			`batch at offset 3: want a base offset above 5, the last offset of the batch before it in 00000000000000000000.log (a segment's batches ascend)`},
		{"SequenceTruncated", strings.Replace(batchLine("6", "6", "1", 240), "baseSequence: -1", "baseSequence: 4294967296", 1),
			`field "baseSequence": want -2147483648 to 2147483647, found 4294967296`},
		{"EpochTruncated", strings.Replace(batchLine("6", "6", "1", 240), "producerEpoch: -1", "producerEpoch: 65535", 1),
			`field "producerEpoch": want -32768 to 32767, found 65535`},
		{"LeaderEpochTruncated", strings.Replace(batchLine("6", "6", "1", 240), "partitionLeaderEpoch: 0", "partitionLeaderEpoch: -2147483649", 1),
			`field "partitionLeaderEpoch": want -2147483648 to 2147483647, found -2147483649`},
		{"LegacyNegativeOffset", "offset: -1 CreateTime: 1 keySize: -1 valueSize: 1 magic: 1 compresscodec: none crc: 1 isvalid: true size: 40 position: 240\n",
			`field "offset": want 0 to 9223372036854775806, found -1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The hostile line, then a valid batch after it: reading goes
			// on, checked against the last batch kept.
			in := validBatches() + tc.line + batchLine("6", "6", "1", 320)
			d, err := Read(strings.NewReader(in), "hostile.txt")
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("dumplog: hostile.txt:6 (byte %#x): %s", at, tc.msg)
			if len(d.Problems) != 1 || d.Problems[0].Error() != want {
				t.Fatalf("problems %v\nwant [%s]", d.Problems, want)
			}
			p := d.Partitions[0]
			if len(p.Batches) != 4 || p.Batches[3].BaseOffset != 6 {
				t.Fatalf("%d batches kept: %+v", len(p.Batches), p.Batches)
			}
			l := txnindex.Build(p)
			if l.LogEndOffset != 7 || l.HighWatermark != 7 || l.LastStableOffset != 7 || len(l.Gaps) != 0 {
				t.Fatalf("log end %d HWM %d LSO %d gaps %v", l.LogEndOffset, l.HighWatermark, l.LastStableOffset, l.Gaps)
			}
			for dd := range l.Decisions(txnindex.ConsumeOptions{Isolation: txnindex.ReadCommitted}) {
				if dd.Verdict != txnindex.Delivered {
					t.Errorf("[%d, %d] %v", dd.From, dd.To, dd.Verdict)
				}
			}
		})
	}
}

// TestHostileFirstBatch: a hostile batch first in its file leaves nothing
// of that file, and the partition still decides (no batches, log end at
// the segment's base).
func TestHostileFirstBatch(t *testing.T) {
	in := validHead + batchLine("-9223372036854775808", "9223372036854775807", "1", 0)
	d, err := Read(strings.NewReader(in), "hostile.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Problems) != 1 || len(d.Partitions) != 1 || len(d.Partitions[0].Batches) != 0 {
		t.Fatalf("problems %v, partitions %d", d.Problems, len(d.Partitions))
	}
	if l := txnindex.Build(d.Partitions[0]); l.LogEndOffset != 0 || l.LastStableOffset != 0 {
		t.Fatalf("log end %d LSO %d", l.LogEndOffset, l.LastStableOffset)
	}
}

// TestHostileIndexAndSnapshotLines: the .txnindex version (a byte) and a
// snapshot's producer and coordinator epochs (int16, int32) are range-checked,
// not truncated.
func TestHostileIndexAndSnapshotLines(t *testing.T) {
	cases := []struct{ name, in, msg string }{
		{"TxnIndexVersion", "Dumping /data/t-0/00000000000000000000.txnindex\nversion: 256 producerId: 7 firstOffset: 0 lastOffset: 5 lastStableOffset: 6\n",
			`dumplog: hostile.txt:2 (byte 0x30): field "version": want -128 to 127, found 256`},
		{"SnapshotEpoch", "Dumping /data/t-0/00000000000000000006.snapshot\nproducerId: 7 producerEpoch: 65536 coordinatorEpoch: 0 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1\n",
			`dumplog: hostile.txt:2 (byte 0x30): field "producerEpoch": want -32768 to 32767, found 65536`},
		{"SnapshotCoordinatorEpoch", "Dumping /data/t-0/00000000000000000006.snapshot\nproducerId: 7 producerEpoch: 0 coordinatorEpoch: 4294967296 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1\n",
			`dumplog: hostile.txt:2 (byte 0x30): field "coordinatorEpoch": want -2147483648 to 2147483647, found 4294967296`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Read(strings.NewReader(tc.in), "hostile.txt")
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Problems) != 1 || d.Problems[0].Error() != tc.msg {
				t.Fatalf("problems %v\nwant [%s]", d.Problems, tc.msg)
			}
			for _, p := range d.Partitions {
				for _, s := range p.Segments {
					if len(s.TxnIndex) != 0 {
						t.Errorf("entries kept: %v", s.TxnIndex)
					}
				}
			}
			for _, s := range d.Snapshots {
				if len(s) != 0 {
					t.Errorf("snapshot entries kept: %v", s)
				}
			}
		})
	}
}
