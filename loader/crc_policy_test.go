package loader_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario/gen"
)

// TestServedCRCsKeepTheSameBatches: with every CRC good, the batches a
// whole load keeps do not depend on how its policy checks them: every CRC
// checked (no recovery point), each batch read whole for a note (every
// segment below the recovery point, or under the clean shutdown marker).
// The generated partitions hold batches of every size, hostile control
// batches among them, so a read whole that refills the scan's window
// under a header already taken would show here.
func TestServedCRCsKeepTheSameBatches(t *testing.T) {
	for _, seed := range []uint64{3, 9, 11} {
		root := t.TempDir()
		st, err := gen.WriteLog(root, gen.LogOptions{SegmentBytes: 1 << 20, TotalBytes: 4 << 20, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		rp := filepath.Join(root, loader.RecoveryPointOffsetCheckpoint)
		load := func(how string) *loader.Partition {
			p, err := loader.OpenPartition(st.Dir)
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, how, err)
			}
			return p
		}
		below := load("every segment below the recovery point")
		if err := os.WriteFile(filepath.Join(root, loader.CleanShutdownFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		clean := load("clean shutdown")
		if err := os.Remove(filepath.Join(root, loader.CleanShutdownFile)); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(rp); err != nil {
			t.Fatal(err)
		}
		checked := load("every CRC checked")
		if len(checked.Input.Batches) < 1000 {
			t.Fatalf("seed %d: %d batches", seed, len(checked.Input.Batches))
		}
		for how, p := range map[string]*loader.Partition{"below the recovery point": below, "clean shutdown": clean} {
			if !slices.Equal(p.Input.Batches, checked.Input.Batches) {
				t.Errorf("seed %d, %s: %d batches differ from the %d of a load checking every CRC", seed, how, len(p.Input.Batches), len(checked.Input.Batches))
			}
		}
	}
}
