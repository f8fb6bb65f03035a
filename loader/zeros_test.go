package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestZeroRunsInSegmentFiles: a run of zero bytes where a batch should
// start is read to its end, holes passed over without reading them (a
// preallocated segment's tail is a hole of up to segment.bytes), and the
// damage says whether data follows it. Each case is a real file, sparse
// where the filesystem allows, so that the hole path and the read path
// both run.
func TestZeroRunsInSegmentFiles(t *testing.T) {
	good := concat(dataBatch(t, 0, 7, true, 3), marker(t, 3, 7, true, 5))
	tests := []struct {
		name string
		// write makes the file: good at 0, then what the case adds.
		write func(f *os.File) error
		want  string
	}{
		{"preallocated_tail_as_a_hole", func(f *os.File) error {
			return f.Truncate(1 << 30)
		}, "zero bytes from here to the end of the file (1073741631 bytes): a preallocated segment"},
		{"zero_tail_written", func(f *os.File) error {
			_, err := f.WriteAt(make([]byte, 3*zeroChunk+1), int64(len(good)))
			return err
		}, "zero bytes from here to the end of the file (196609 bytes)"},
		{"data_after_a_hole", func(f *os.File) error {
			_, err := f.WriteAt(good, 64<<20)
			return err
			// The copy's offset and the size's high bytes are zeros too.
		}, "found 0: 67108682 zero bytes from here, then data again at byte 0x400000b; the broker's recovery truncates the segment here, and the 182 bytes from there to the end of the file are lost with it"},
		{"data_after_written_zeros", func(f *os.File) error {
			_, err := f.WriteAt(append(make([]byte, zeroChunk+3), 1), int64(len(good)))
			return err
		}, "found 0: 65539 zero bytes from here, then data again at byte 0x100c4; the broker's recovery truncates the segment here, and the 1 bytes from there to the end of the file are lost with it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "00000000000000000000.log")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(good); err != nil {
				t.Fatal(err)
			}
			if err := tc.write(f); err != nil {
				t.Fatal(err)
			}
			f.Close()
			sf, err := OpenSegment(path)
			if err != nil {
				t.Fatal(err)
			}
			defer sf.Close()
			if len(sf.Batches) != 2 || sf.ValidBytes != int64(len(good)) {
				t.Errorf("kept %d batches, %d valid bytes; want 2, %d", len(sf.Batches), sf.ValidBytes, len(good))
			}
			if len(sf.Damage) != 1 || !strings.Contains(sf.Damage[0].Error(), tc.want) {
				t.Errorf("damage %v, want one holding %q", sf.Damage, tc.want)
			}
			if len(sf.Damage) > 0 && !strings.Contains(sf.Damage[0].Error(), "00000000000000000000.log: batch at byte 0xc1: ") {
				t.Errorf("damage %q does not name the file and position", sf.Damage[0])
			}
		})
	}
}
