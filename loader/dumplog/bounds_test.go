package dumplog

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/heappeak"
	"github.com/txnscope/txnscope/txnindex"
)

// heapPeak reads r through Read and returns what Read returned and the
// live heap's peak over the read (heappeak), less what it was before.
func heapPeak(t *testing.T, r io.Reader) (*Dump, uint64) {
	t.Helper()
	h := heappeak.New(r, 0)
	d, err := Read(h, "hostile.txt")
	if err != nil {
		t.Fatal(err)
	}
	h.Sample()
	return d, h.Peak()
}

// TestDumpProblemsListedThenCounted: a segment's dump followed by 4 MB
// of two-byte lines, each a problem. Listed one by one they took 195 MB
// of heap; now the first maxProblems are listed and one last problem
// counts the rest, at the first of them.
func TestDumpProblemsListedThenCounted(t *testing.T) {
	const size = 4 << 20
	head := "Dumping /data/t-0/00000000000000000000.log\n"
	in := head + strings.Repeat("x\n", (size-len(head))/2)
	d, peak := heapPeak(t, strings.NewReader(in))
	lines := strings.Count(in, "\n") - 1
	t.Logf("%d bytes of two-byte lines: peak heap %d KB, %d problems", len(in), peak>>10, len(d.Problems))
	if peak > size/4 {
		t.Errorf("peak heap %d MB reading %d MB of two-byte lines", peak>>20, size>>20)
	}
	if len(d.Problems) != maxProblems+1 {
		t.Fatalf("%d problems, want %d listed and one counting the rest", len(d.Problems), maxProblems)
	}
	first := len(head) + 2*maxProblems
	want := fmt.Sprintf("dumplog: hostile.txt:%d (byte %#x): %d more problems not listed, the first of them here", maxProblems+2, first, lines-maxProblems)
	want = strings.Replace(want, fmt.Sprint(lines-maxProblems), txnindex.Count(int64(lines-maxProblems)), 1)
	if got := d.Problems[maxProblems].Error(); got != want {
		t.Errorf("last problem %q\nwant %q", got, want)
	}
}

// TestDumpPartitionsBounded: each "Dumping" line of a new directory is a
// partition of about 1 KB once built, whatever it holds. A dump naming
// more than maxPartitions follows the first maxPartitions; the files of
// the later ones are read past, their batch lines too, and said in one
// problem at the first of them.
func TestDumpPartitionsBounded(t *testing.T) {
	var b strings.Builder
	const extra = 50
	for i := range maxPartitions + extra {
		fmt.Fprintf(&b, "Dumping /data/p%d-0/00000000000000000000.log\n", i)
		if i == maxPartitions {
			b.WriteString(batchLine("0", "0", "1", 0))
		}
	}
	in := b.String()
	d, err := Read(strings.NewReader(in), "hostile.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Partitions) != maxPartitions {
		t.Errorf("%d partitions, want the first %d", len(d.Partitions), maxPartitions)
	}
	at := strings.Index(in, fmt.Sprintf("Dumping /data/p%d-0/", maxPartitions))
	want := fmt.Sprintf("dumplog: hostile.txt:%d (byte %#x): %d files of partitions past the first %s not read, the first of them here",
		maxPartitions+1, at, extra, txnindex.Count(maxPartitions))
	if len(d.Problems) != 1 || d.Problems[0].Error() != want {
		t.Errorf("problems %v\nwant [%s]", d.Problems, want)
	}
}
