package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKRaftSnapshotNameOverflow: a .checkpoint name of 20 and 10 digits
// whose offset passes the largest int64, or whose epoch passes the largest
// int32, is refused with an error naming the file; it showed as a
// snapshot at 9223372036854775807 (or an epoch wrapped negative).
func TestKRaftSnapshotNameOverflow(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		refused string // in the damage; "" when the snapshot is listed
		end     int64
		epoch   int32
	}{
		{"valid", "00000000000000004321-0000000003.checkpoint", "", 4321, 3},
		{"largest_offset_and_epoch", "09223372036854775807-2147483647.checkpoint", "", 9223372036854775807, 2147483647},
		{"offset_past_int64", "99999999999999999999-0000000001.checkpoint", "end offset 99999999999999999999: want at most 9223372036854775807", 0, 0},
		{"offset_just_past_int64", "09223372036854775808-0000000001.checkpoint", "end offset 09223372036854775808", 0, 0},
		{"epoch_past_int32", "00000000000000000010-9999999999.checkpoint", "epoch 9999999999: want at most 2147483647", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tc.file), make([]byte, 96), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.refused == "" {
				if len(p.KRaftSnapshots) != 1 || p.KRaftSnapshots[0].EndOffset != tc.end || p.KRaftSnapshots[0].Epoch != tc.epoch {
					t.Fatalf("snapshots %+v, want one ending at %d, epoch %d", p.KRaftSnapshots, tc.end, tc.epoch)
				}
				return
			}
			if len(p.KRaftSnapshots) != 0 {
				t.Errorf("snapshots %+v, want none", p.KRaftSnapshots)
			}
			var msgs []string
			for _, d := range p.Damage {
				msgs = append(msgs, d.Error())
			}
			all := strings.Join(msgs, "\n")
			if !strings.Contains(all, tc.file) || !strings.Contains(all, tc.refused) {
				t.Errorf("damage %q, want one naming %s and saying %q", all, tc.file, tc.refused)
			}
		})
	}
}
