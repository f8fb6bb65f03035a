package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSegmentNameOffsetOverflow: a segment, index or snapshot file whose
// 20-digit name passes the largest int64 was ignored as "not a segment,
// index, snapshot or checkpoint file", though it is named as one and
// Kafka's Long.parseLong refuses it. It is damage now, naming the file,
// what was expected and what was found, and the rest of the partition is
// read as before.
func TestSegmentNameOffsetOverflow(t *testing.T) {
	for _, tc := range []struct {
		name, file string
	}{
		{"segment past int64", "99999999999999999999.log"},
		{"segment one past int64", "09223372036854775808.log"},
		{"index past int64", "99999999999999999999.index"},
		{"txnindex past int64", "99999999999999999999.txnindex"},
		{"snapshot past int64", "99999999999999999999.snapshot"},
		{"pending delete past int64", "99999999999999999999.log.deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t-0")
			writeFile(t, filepath.Join(dir, "00000000000000000000.log"), concat(dataBatch(t, 0, -1, false, 2), dataBatch(t, 2, -1, false, 1)))
			if err := os.WriteFile(filepath.Join(dir, tc.file), make([]byte, 100), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, d := range p.Damage {
				msgs = append(msgs, d.Error())
			}
			all := strings.Join(msgs, "\n")
			want := tc.file + ": file name at byte 0x0: offset " + tc.file[:20] + ": want at most 9223372036854775807 (the largest offset), found a larger number"
			if !strings.Contains(all, want) {
				t.Errorf("damage %q\nwant %q", all, want)
			}
			found := false
			for _, ig := range p.Ignored {
				found = found || ig.Name == tc.file && strings.Contains(ig.Reason, "Long.parseLong")
			}
			if !found {
				t.Errorf("ignored %+v: want %s with why", p.Ignored, tc.file)
			}
			if len(p.Segments) != 1 || len(p.Input.Batches) != 2 {
				t.Errorf("%d segments, %d batches: want the partition read as before", len(p.Segments), len(p.Input.Batches))
			}
		})
	}
}
