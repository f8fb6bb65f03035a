package present

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/txnindex"
)

// kcatRun is what the kcat lines of cmd print, read_uncommitted, from l:
// each line starts at its -o offset and prints its -c data records, of
// whichever producer (kcat cannot filter by producer; control records are
// never delivered). A batch the cleaner compacted holds its last records.
func kcatRun(t *testing.T, l *txnindex.Log, cmd string) (offsets []int64, comments []string) {
	t.Helper()
	re := regexp.MustCompile(` -o (\d+) -c (\d+) `)
	for _, line := range strings.Split(cmd, "\n") {
		if strings.HasPrefix(line, "#") {
			comments = append(comments, line)
			continue
		}
		m := re.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(line, "kcat -C ") {
			t.Fatalf("not a kcat line: %q", line)
		}
		from, _ := strconv.ParseInt(m[1], 10, 64)
		count, _ := strconv.Atoi(m[2])
		for i := range l.Batches {
			b := &l.Batches[i]
			if b.IsControl() {
				continue
			}
			for off := b.LastOffset() - int64(b.Records) + 1; off <= b.LastOffset() && count > 0; off++ {
				if off >= from {
					offsets = append(offsets, off)
					count--
				}
			}
		}
		if count > 0 {
			t.Errorf("%q: the log ends %d records short", line, count)
		}
	}
	return offsets, comments
}

// txnRecordOffsets is every offset of a record of the open transaction of
// pid: what aborting it discards.
func txnRecordOffsets(l *txnindex.Log, pid txnindex.ProducerID) []int64 {
	var out []int64
	for i := range l.Batches {
		b := &l.Batches[i]
		if t := l.TxnOf(i); b.ProducerID != pid || b.IsControl() || t == nil || t.State != txnindex.TxnOpen {
			continue
		}
		for off := b.LastOffset() - int64(b.Records) + 1; off <= b.LastOffset(); off++ {
			out = append(out, off)
		}
	}
	return out
}

// TestSeeThemFirstPrintsOnlyTheDiscarded: with producers interleaved, "to
// see them first" prints exactly the records the abort discards, not the
// other producers' between them: one kcat per range, each counting the
// range's records; past kcatMostRanges ranges a comment counts the rest.
// (A compacted batch, whose records are fewer than its offsets, is in
// TestTopicCommandsInBash: here the cleaner's evidence would report the
// transactions decided, their markers removed.)
func TestSeeThemFirstPrintsOnlyTheDiscarded(t *testing.T) {
	b := testfixture.NewLog().Txn(p1, 3).Txn(p2, 2).Plain(-1, 4).Txn(p2, 1).Txn(p3, 2).Commit(p1).Txn(p3, 5)
	b = b.Txn(p2, 3).Txn(p1, 2).Abort(p1).Plain(-1, 1)
	interleaved := b.Build()

	many := testfixture.NewLog()
	for range kcatMostRanges + 3 {
		many.Txn(p2, 2).Plain(-1, 3)
	}
	long := many.Build()

	for _, tc := range []struct {
		name     string
		l        *txnindex.Log
		pid      txnindex.ProducerID
		lines    int
		printed  int // how many of the discarded records the commands print
		comments string
	}{
		{"interleaved p2", interleaved, p2, 3, 6, ""},
		{"interleaved p3", interleaved, p3, 2, 7, ""},
		{"more ranges than printed", long, p2, kcatMostRanges, 2 * kcatMostRanges, "# and 3 more ranges (6 records) up to offset 36"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(tc.l, diagnosis.Options{Position: -1, Bootstrap: "k:9092"})
			var cmd string
			for _, tr := range d.OpenTransactions {
				if tr.ProducerID == tc.pid {
					cmd = tr.Discards.PrintCommand
				}
			}
			if cmd == "" {
				t.Fatalf("no open transaction of producer %d: %+v (open %v, txns %+v)", tc.pid, d.OpenTransactions, tc.l.Open, tc.l.Txns)
			}
			got, comments := kcatRun(t, tc.l, cmd)
			want := txnRecordOffsets(tc.l, tc.pid)
			if n := strings.Count(cmd, "kcat -C"); n != tc.lines {
				t.Errorf("%d kcat lines, want %d:\n%s", n, tc.lines, cmd)
			}
			if len(want) < tc.printed || !slices.Equal(got, want[:tc.printed]) {
				t.Errorf("the commands print offsets %v; the abort discards %v\n%s", got, want, cmd)
			}
			if c := strings.Join(comments, "\n"); !strings.HasPrefix(c, tc.comments) || (tc.comments == "") != (c == "") {
				t.Errorf("comments %q, want %q", c, tc.comments)
			}
			if testing.Verbose() {
				fmt.Println(cmd)
			}
		})
	}
}
