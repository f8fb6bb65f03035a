package inspect

import (
	"fmt"
	"strings"
	"testing"
)

// TestTextSaysWhatItLeftOut: the text report listed neither the files a
// partition directory holds but the broker does not load (a directory
// named 00000000000000000000.log, a symlink, a FIFO: the log start moved
// to the next segment without a word), nor bounded its .txnindex
// differences: a 256 MiB .txnindex of zeros printed 2.4 GB of them. Each
// ignored file is now a line with why, and both lists hold --entries
// lines and count the rest.
func TestTextSaysWhatItLeftOut(t *testing.T) {
	p := Partition{Topic: "t", Partition: 0, Segments: []Segment{}, Gaps: []Gap{},
		Ignored: []string{"00000000000000000000.log: directory", "00000000000000000010.log: symlink, not followed"}}
	for i := range 50 {
		p.Mismatches = append(p.Mismatches, Mismatch{Segment: "00000000000000000000.txnindex", Kind: "extra_on_disk",
			Disk: fmt.Sprintf("version: 0 producerId: %d", i), Explanation: "unknown", Note: "n"})
	}
	for i := range 30 {
		p.Ignored = append(p.Ignored, fmt.Sprintf("%020d.log.deleted: pending delete (.deleted)", i))
	}
	for _, tc := range []struct {
		name    string
		max     int
		want    []string
		notWant []string
	}{
		{"every ignored file with why, at --entries 20", 20, []string{
			"  ignored 00000000000000000000.log: directory\n",
			"  ignored 00000000000000000010.log: symlink, not followed\n",
			"    … and 12 more ignored files (--entries -1 lists them)\n",
			"txnindex mismatch in 00000000000000000000.txnindex: extra_on_disk disk[version: 0 producerId: 19]",
			"    … and 30 more .txnindex differences (--entries -1 lists them)\n",
		}, []string{"producerId: 20]"}},
		{"all of them at --entries -1", -1, []string{"producerId: 49]", "00000000000000000029.log.deleted"}, []string{"more"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			WriteTextEntries(&b, Report{Kind: "partition directory", Partitions: []Partition{p}}, tc.max)
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("%q in\n%s", w, out)
				}
			}
		})
	}
}
