package inspect

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testtool"
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
