package inspect

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/dumplog"
	"github.com/txnscope/txnscope/loader/input"
)

const realdata = "../../testdata/realdata"

// TestInspectTextIsDumpLogFormat: the text report with records prints
// batches in kafka-dump-log.sh's format; read back by the dump-text loader,
// every real partition gives the batches the segment loader read from the
// bytes, and a record line for each record.
func TestInspectTextIsDumpLogFormat(t *testing.T) {
	testtool.NeedDir(t, realdata)
	dirs, _ := filepath.Glob(filepath.Join(realdata, "*", "*", "*-[0-9]*"))
	checked := 0
	for _, dir := range dirs {
		if logs, _ := filepath.Glob(filepath.Join(dir, "*.log")); len(logs) == 0 {
			continue
		}
		ld, err := input.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var buf strings.Builder
		WriteText(&buf, New(ld, Options{Records: true}))
		out := buf.String()
		i := strings.Index(out, "Dumping ")
		if i < 0 {
			continue // no batch
		}
		d, err := dumplog.Read(strings.NewReader(out[i:]), dir)
		if err != nil || len(d.Problems) != 0 || len(d.Partitions) != 1 {
			t.Errorf("%s: %v %v", dir, err, d.Problems)
			continue
		}
		want, got := ld.Partitions[0].Log.Batches, d.Partitions[0].Batches
		if len(got) != len(want) {
			t.Errorf("%s: %d batches from the text, %d from the bytes", dir, len(got), len(want))
			continue
		}
		for k := range want {
			w, g := want[k], got[k]
			if w.BaseOffset != g.BaseOffset || w.LastOffset() != g.LastOffset() || w.Records != g.Records || w.ProducerID != g.ProducerID ||
				w.ProducerEpoch != g.ProducerEpoch || w.IsTransactional() != g.IsTransactional() || w.IsControl() != g.IsControl() ||
				w.Control() != g.Control() || w.Position() != g.Position() || w.Size != g.Size || w.Compression() != g.Compression() {
				t.Errorf("%s batch %d:\nbytes %+v\ntext  %+v", dir, k, w, g)
			}
		}
		// One line per record, each with its offset.
		records := int64(0)
		for _, b := range want {
			records += int64(b.Records)
		}
		if n := int64(strings.Count(out, "\n| offset: ")); n != records {
			t.Errorf("%s: %d record lines, %d records in the batch headers", dir, n, records)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d partitions checked", checked)
	}
}

// TestDumpSnapshotEntry: kafka-dump-log.sh's wording, with the batch
// metadata only when the entry has a last offset (readSnapshot keeps none
// otherwise), and firstSequence wrapping as decrementSequence does.
func TestDumpSnapshotEntry(t *testing.T) {
	for _, tc := range []struct {
		e    loader.SnapshotEntry
		want string
	}{
		{loader.SnapshotEntry{ProducerID: 7, Epoch: 2, LastSequence: 9, LastOffset: 120, OffsetDelta: 4, Timestamp: 1000, CoordinatorEpoch: 3, CurrentTxnFirstOffset: 100},
			"producerId: 7 producerEpoch: 2 coordinatorEpoch: 3 currentTxnFirstOffset: OptionalLong[100] lastTimestamp: 1000 firstSequence: 5 lastSequence: 9 lastOffset: 120 offsetDelta: 4 timestamp: 1000"},
		{loader.SnapshotEntry{ProducerID: 7, Epoch: 2, LastSequence: 1, LastOffset: 120, OffsetDelta: 3, Timestamp: 1000, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1},
			"producerId: 7 producerEpoch: 2 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1000 firstSequence: 2147483646 lastSequence: 1 lastOffset: 120 offsetDelta: 3 timestamp: 1000"},
		{loader.SnapshotEntry{ProducerID: 8, Epoch: 0, LastSequence: -1, LastOffset: -1, Timestamp: 5, CoordinatorEpoch: 0, CurrentTxnFirstOffset: 40},
			"producerId: 8 producerEpoch: 0 coordinatorEpoch: 0 currentTxnFirstOffset: OptionalLong[40] lastTimestamp: 5 "},
	} {
		if got := DumpSnapshotEntry(tc.e); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
