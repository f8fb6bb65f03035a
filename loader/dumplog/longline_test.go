package dumplog

import (
	"fmt"
	"strings"
	"testing"
)

// TestLongLines: a line longer than maxLine stopped the read with
// "bufio.Scanner: token too long", and everything with it: a dump made
// with --print-data-log of one 2 MiB message could not be read at all,
// and `serve --load` of it would not start. A record line is now read by
// its first maxLine bytes (what txnscope reads of one, a control record's
// type and epoch, comes first), and any other long line is a problem at
// its line and byte that says how long it is; reading goes on, and the
// batches before and after it are kept.
func TestLongLines(t *testing.T) {
	const big = 3 << 20
	record := "| offset: 0 CreateTime: 1700000000000 keySize: 1 valueSize: 3145728 sequence: -1 headerKeys: [] key: k payload: " + strings.Repeat("x", big) + "\n"
	marker := "| offset: 6 CreateTime: 1700000000000 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 3 " + strings.Repeat("y", big) + "\n"
	control := strings.NewReplacer("producerId: -1", "producerId: 7", "producerEpoch: -1", "producerEpoch: 0",
		"isTransactional: false", "isTransactional: true", "isControl: false", "isControl: true").Replace(batchLine("6", "6", "1", 240))
	hugeBatch := strings.TrimSuffix(batchLine("6", "6", "1", 240), "\n") + strings.Repeat(" z", big/2) + "\n"
	for _, tc := range []struct {
		name     string
		in       string
		batches  int
		control  string // the control type of the last batch, "" when it is data
		problems []string
	}{
		{"a record line of 3 MiB is read past", validHead + batchLine("0", "0", "1", 0) + record + batchLine("1", "1", "1", 80), 2, "", nil},
		{"a control record line of 3 MiB still says ABORT", validBatches() + control + marker, 4, "ABORT", nil},
		{"a batch line of 3 MiB is a problem at its line", validBatches() + hugeBatch + batchLine("7", "7", "1", 320), 4, "",
			[]string{fmt.Sprintf("dumplog: long.txt:6 (byte %#x): a line of %d bytes, more than the %d a dump line may hold: skipped", len(validBatches()), len(hugeBatch)-1, maxLine)}},
		{"a long last line without a newline", validBatches() + strings.TrimSuffix(hugeBatch, "\n"), 3, "",
			[]string{fmt.Sprintf("dumplog: long.txt:6 (byte %#x): a line of %d bytes, more than the %d a dump line may hold: skipped", len(validBatches()), len(hugeBatch)-1, maxLine)}},
		{"CRLF and no newline at the end", strings.ReplaceAll(validBatches(), "\n", "\r\n") + strings.TrimSuffix(batchLine("6", "6", "1", 240), "\n"), 4, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Read(strings.NewReader(tc.in), "long.txt")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range d.Problems {
				got = append(got, p.Error())
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.problems) {
				t.Errorf("problems %q\nwant %q", got, tc.problems)
			}
			if len(d.Partitions) != 1 || len(d.Partitions[0].Batches) != tc.batches {
				t.Fatalf("%d partitions, want 1 of %d batches", len(d.Partitions), tc.batches)
			}
			bs := d.Partitions[0].Batches
			if last := bs[len(bs)-1]; tc.control != "" && last.Control().String() != tc.control {
				t.Errorf("last batch control %v, want %s", last.Control(), tc.control)
			}
		})
	}
}
