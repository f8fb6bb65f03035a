package dumplog

import (
	"fmt"
	"strings"
	"testing"
)

// manySegments is the dump of one partition of n segments of one batch
// each, with only the fields the reader needs: per segment, the cost of a
// reader that searches the segments per batch grows with n, and the rest is
// small.
func manySegments(n int) string {
	var sb strings.Builder
	for s := 0; s < n; s++ {
		fmt.Fprintf(&sb, "Dumping /var/lib/kafka/data/big-0/%020d.log\n", 2*s)
		fmt.Fprintf(&sb, "baseOffset: %d lastOffset: %d count: 2 baseSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 position: 0 size: 80 magic: 2\n", 2*s, 2*s+1)
	}
	return sb.String()
}

// readAll reads a dump of segs single-batch segments and checks it.
func readAll(t testing.TB, text string, segs int) {
	d, err := Read(strings.NewReader(text), "big.txt")
	if err != nil || len(d.Problems) != 0 || len(d.Partitions) != 1 || len(d.Partitions[0].Segments) != segs || len(d.Partitions[0].Batches) != segs {
		t.Fatalf("%d segments: err %v, problems %v", segs, err, d.Problems)
	}
}

func BenchmarkRead(b *testing.B) {
	for _, n := range []int{1000, 10000, 80000} {
		text := manySegments(n)
		b.Run(fmt.Sprintf("segments=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				readAll(b, text, n)
			}
		})
	}
}
