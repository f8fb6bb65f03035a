package loader

import (
	"bytes"
	"encoding/binary"
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

// TestStoppedWhereRecoveryTruncates: a segment's scan stops at any damage,
// but the broker's recovery truncates only at a CorruptRecordException or
// an InvalidRecordException (LogSegment.recover): a file cut short, a size
// below the minimum, a bad CRC. Offsets that go backwards or a negative
// records count it keeps, so they say nothing of a truncation.
func TestStoppedWhereRecoveryTruncates(t *testing.T) {
	good := concat(dataBatch(t, 0, 7, true, 3), marker(t, 3, 7, true, 5), dataBatch(t, 4, -1, false, 2))
	first := len(dataBatch(t, 0, 7, true, 3))
	second := first + 78
	backwards := concat(good, dataBatch(t, 1, -1, false, 1))
	tests := []struct {
		name string
		data []byte
		// want is where the truncation is and the offset the segment's
		// batches end at; at < 0: none.
		at, offset int64
	}{
		{"read to the end", good, -1, 0},
		{"bad CRC", corrupt(good, func(b []byte) []byte { b[second-2] ^= 1; return b }), int64(first), 3},
		{"cut short", good[:len(good)-5], int64(second), 4},
		{"size below the minimum", corrupt(good, func(b []byte) []byte { binary.BigEndian.PutUint32(b[first+8:], 13); return b }), int64(first), 3},
		{"offsets go backwards", backwards, -1, 0},
		{"negative records count", fixCRC(corrupt(good, func(b []byte) []byte { binary.BigEndian.PutUint32(b[second+57:], 0xffffffff); return b }), second), -1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewSegmentWith(bytes.NewReader(tc.data), int64(len(tc.data)), "00000000000000000000.log", DefaultScanOptions)
			if err != nil {
				t.Fatal(err)
			}
			d := f.StoppedAt()
			switch {
			case tc.at < 0 && d != nil:
				t.Errorf("truncation at %+v, want none (damage %v)", *d, f.Damage)
			case tc.at >= 0 && (d == nil || d.Position != tc.at || d.Offset != tc.offset):
				t.Errorf("truncation %+v, want at byte %d, offset %d (damage %v)", d, tc.at, tc.offset, f.Damage)
			}
		})
	}
}

// fixCRC sets the CRC of the v2 batch at pos in b to match its bytes.
func fixCRC(b []byte, pos int) []byte {
	n := int(binary.BigEndian.Uint32(b[pos+8:])) + 12
	binary.BigEndian.PutUint32(b[pos+17:], crc32c(b[pos+21:pos+n]))
	return b
}
