package dumplog

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// A dump in the format DumpLogSegments prints (kafka-internals.md §9): a
// partition with two segments, an aborted transaction of producer 7 that
// spans them and a committed one of producer 8, dumped with
// --deep-iteration, plus the .txnindex and the producer snapshot.
const sample = `Dumping /var/lib/kafka/data/orders-3/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000000 size: 90 magic: 2 compresscodec: none crc: 1 isvalid: true
| offset: 0 CreateTime: 1700000000000 keySize: -1 valueSize: 3 sequence: -1 headerKeys: [] payload: abc
| offset: 1 CreateTime: 1700000000000 keySize: -1 valueSize: 3 sequence: -1 headerKeys: [] payload: def
baseOffset: 2 lastOffset: 4 count: 3 baseSequence: 0 lastSequence: 2 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty position: 90 CreateTime: 1700000000010 size: 100 magic: 2 compresscodec: none crc: 2 isvalid: true
baseOffset: 5 lastOffset: 6 count: 2 baseSequence: 0 lastSequence: 1 producerId: 8 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty position: 190 CreateTime: 1700000000020 size: 90 magic: 2 compresscodec: gzip crc: 3 isvalid: true
baseOffset: 7 lastOffset: 7 count: 1 baseSequence: -1 lastSequence: -1 producerId: 8 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 280 CreateTime: 1700000000030 size: 78 magic: 2 compresscodec: none crc: 4 isvalid: true
| offset: 7 CreateTime: 1700000000030 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 0
Dumping /var/lib/kafka/data/orders-3/00000000000000000008.log
Log starting offset: 8
baseOffset: 8 lastOffset: 9 count: 2 baseSequence: 3 lastSequence: 4 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000040 size: 90 magic: 2 compresscodec: none crc: 5 isvalid: true
baseOffset: 10 lastOffset: 10 count: 1 baseSequence: -1 lastSequence: -1 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 90 CreateTime: 1700000000050 size: 78 magic: 2 compresscodec: none crc: 6 isvalid: true
| offset: 10 CreateTime: 1700000000050 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 3
baseOffset: 11 lastOffset: 11 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 168 CreateTime: 1700000000060 size: 70 magic: 2 compresscodec: none crc: 7 isvalid: true
Dumping /var/lib/kafka/data/orders-3/00000000000000000008.txnindex
version: 0 producerId: 7 firstOffset: 2 lastOffset: 10 lastStableOffset: 11
Dumping /var/lib/kafka/data/orders-3/00000000000000000012.snapshot
producerId: 7 producerEpoch: 0 coordinatorEpoch: 3 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1700000000050 firstSequence: 3 lastSequence: 4 lastOffset: 9 offsetDelta: 1 timestamp: 1700000000040
producerId: 8 producerEpoch: 0 coordinatorEpoch: 0 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1700000000030 
`

func TestReadSample(t *testing.T) {
	d, err := Read(strings.NewReader(sample), "sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Problems) != 0 {
		t.Fatalf("problems: %v", d.Problems)
	}
	if len(d.Partitions) != 1 {
		t.Fatalf("%d partitions", len(d.Partitions))
	}
	p := d.Partitions[0]
	if p.Topic != "orders" || p.Partition != 3 || len(p.Segments) != 2 || len(p.Batches) != 7 {
		t.Fatalf("partition %s-%d, %d segments, %d batches", p.Topic, p.Partition, len(p.Segments), len(p.Batches))
	}
	if p.Batches[3].Control() != txnindex.ControlCommit || p.Batches[5].Control() != txnindex.ControlAbort || p.Batches[5].CoordinatorEpoch() != 3 {
		t.Errorf("markers: %+v %+v", p.Batches[3], p.Batches[5])
	}
	if p.Batches[2].Compression() != txnindex.CompressionGzip {
		t.Errorf("codec %v", p.Batches[2].Compression())
	}
	if !p.Segments[1].TxnIndexOnDisk || len(p.Segments[1].TxnIndex) != 1 {
		t.Errorf("txnindex %+v", p.Segments[1])
	}
	if s := d.Snapshots["/var/lib/kafka/data/orders-3/00000000000000000012.snapshot"]; len(s) != 2 || s[0].CoordinatorEpoch != 3 {
		t.Errorf("snapshot %+v", s)
	}
	l := txnindex.Build(p)
	if len(l.Mismatches) != 0 {
		t.Errorf("mismatches %+v", l.Mismatches)
	}
	var got []string
	for dd := range l.Decisions(txnindex.ConsumeOptions{Isolation: txnindex.ReadCommitted}) {
		got = append(got, dd.Verdict.String())
	}
	want := "delivered aborted delivered control aborted control delivered"
	if strings.Join(got, " ") != want {
		t.Errorf("decisions %v, want %s", got, want)
	}
}

// Without --deep-iteration a marker's type is unknown, except for ABORTs a
// dumped .txnindex names.
func TestShallowDumpResolvesAbortsFromTxnIndex(t *testing.T) {
	var shallow []string
	for _, l := range strings.Split(sample, "\n") {
		if !strings.HasPrefix(l, "| ") {
			shallow = append(shallow, l)
		}
	}
	d, err := Read(strings.NewReader(strings.Join(shallow, "\n")), "shallow.txt")
	if err != nil {
		t.Fatal(err)
	}
	p := d.Partitions[0]
	if p.Batches[5].Control() != txnindex.ControlAbort || p.Batches[3].Control() != txnindex.ControlUnknown || d.Unresolved != 1 {
		t.Errorf("controls %v %v unresolved %d", p.Batches[3].Control(), p.Batches[5].Control(), d.Unresolved)
	}
	if len(d.Problems) != 1 || !strings.Contains(d.Problems[0].Error(), "--deep-iteration") {
		t.Errorf("problems %v", d.Problems)
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct{ name, in, err string }{
		{"NotADump", "hello\n", "dumplog: bad.txt:1 (byte 0x0): not kafka-dump-log.sh output: want a first line \"Dumping <file>\""},
		{"BadNumber", "Dumping x/t-0/00000000000000000000.log\nbaseOffset: zz lastOffset: 1 count: 1 baseSequence: 0 producerId: 1 producerEpoch: 0 partitionLeaderEpoch: 0 position: 0 size: 70 magic: 2\n",
			"dumplog: bad.txt:2 (byte 0x27): field \"baseOffset\": want an integer, found \"zz\""},
		{"BadMagic", "Dumping x/t-0/00000000000000000000.log\noffset: 1 position: 0 size: 70 magic: 7\n", "dumplog: bad.txt:2 (byte 0x27): field \"magic\": want 0, 1 or 2, found 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Read(strings.NewReader(tc.in), "bad.txt")
			msg := ""
			if err != nil {
				msg = err.Error()
			} else if len(d.Problems) > 0 {
				msg = d.Problems[0].Error()
			}
			if msg != tc.err {
				t.Errorf("got %q\nwant %q", msg, tc.err)
			}
		})
	}
}

// FuzzRead: any text parses without panicking; every batch kept has
// offsets a broker could write (0 <= base <= last < 2^63-1, a delta within
// int32, no more records than offsets); every problem is positioned inside
// the text; and the partitions build. Seeds:
// the sample, the hostile lines of TestHostileBatchLines (overflowing and
// negative offsets, truncated counts and fields, descending batches), a
// dump of many segments, and the committed corpus.
func FuzzRead(f *testing.F) {
	f.Add(sample)
	if b, err := os.ReadFile(filepath.Join("testdata", "sample.txt")); err == nil {
		f.Add(string(b))
	}
	for _, line := range []string{
		batchLine("-9223372036854775808", "9223372036854775807", "1", 240),
		batchLine("6", "6", "99999999999", 240),
		batchLine("6", "7", "3", 240),
		batchLine("9223372036854775800", "-9223372034707292170", "1", 240),
		batchLine("9223372036854775800", "9223372036854775807", "1", 240),
		batchLine("6", "2147483654", "1", 240),
		batchLine("8", "7", "1", 240),
		batchLine("-5", "-1", "1", 240),
		batchLine("3", "3", "1", 240),
		strings.Replace(batchLine("6", "6", "1", 240), "producerEpoch: -1", "producerEpoch: 65535", 1),
		"offset: -1 CreateTime: 1 keySize: -1 valueSize: 1 magic: 1 compresscodec: none crc: 1 isvalid: true size: 40 position: 240\n",
	} {
		f.Add(validHead + batchLine("0", "5", "6", 0) + line + batchLine("6", "6", "1", 320))
	}
	f.Add("Dumping /data/t-0/00000000000000000000.txnindex\nversion: 256 producerId: 7 firstOffset: -9223372036854775808 lastOffset: 9223372036854775807 lastStableOffset: -1\n")
	f.Add(manySegments(3))
	f.Fuzz(func(t *testing.T, s string) {
		d, _ := Read(strings.NewReader(s), "fuzz")
		for _, e := range d.Problems {
			if le, ok := e.(*LineError); !ok || le.Byte < 0 || le.Byte > int64(len(s)) {
				t.Fatalf("problem %T %v outside the %d bytes", e, e, len(s))
			}
		}
		for _, p := range d.Partitions {
			for _, b := range p.Batches {
				l := b.LastOffset()
				if b.BaseOffset < 0 || l < b.BaseOffset || l > math.MaxInt64-1 || l-b.BaseOffset > math.MaxInt32 ||
					b.Records < 0 || int64(b.Records) > l-b.BaseOffset+1 {
					t.Fatalf("batch %+v", b.Fields())
				}
			}
			txnindex.Build(p)
		}
	})
}
