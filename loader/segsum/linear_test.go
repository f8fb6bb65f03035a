package segsum

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestSummariesLinearInSegments: a summary's build lists its own segment,
// not every segment of the partition, so the segments the summaries'
// builds list grow with the segments, not with their square. Before, each
// of n summaries listed all n (12,500 empty segments took 50 s, 48,000
// one-byte ones 15 min). The segments here are empty (as the cleaner
// leaves them) and one byte long (a read that stops at damage), so that
// no batch is before any of them and each is seeded as the log start is.
func TestSummariesLinearInSegments(t *testing.T) {
	for _, n := range []int{4000, 8000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t-0")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				data := []byte{}
				if i%2 == 1 {
					data = []byte{0}
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.log", i)), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sums, b, err := s.Summaries(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) != n || b.LogEndOffset != int64(n-1) {
				t.Fatalf("%d summaries, log end %d; want %d, %d", len(sums), b.LogEndOffset, n, n-1)
			}
			for _, k := range []int{0, 1, n - 1} {
				if x := sums[k]; x.Batches != 0 || (x.Damaged != nil) != (k%2 == 1) || (x.Damage != "") != (k%2 == 1) {
					t.Errorf("segment %d: %d batches, damaged %v, damage %q", k, x.Batches, x.Damaged, x.Damage)
				}
			}
			// One listing a summary, and the bounds' build over all of them.
			if got, want := s.listed.Load(), int64(2*n); got > want {
				t.Errorf("the builds listed %d segments, want at most %d (2 × %d)", got, want, n)
			}
		})
	}
}
