package loader

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestReaderVarints: varint and varlong read what binary.AppendVarint
// writes, and refuse a last byte with its continuation bit set, as
// ByteUtils.readVarint and readVarlong do.
func TestReaderVarints(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, 300, -300, math.MaxInt32, math.MinInt32} {
		r := reader{src: binary.AppendVarint(nil, v)}
		if got := r.varint(); !r.ok() || int64(got) != v || r.remaining() != 0 {
			t.Errorf("varint(%d) = %d, ok %v, %d left", v, got, r.ok(), r.remaining())
		}
	}
	for _, v := range []int64{0, -1, math.MaxInt32 + 1, math.MaxInt64, math.MinInt64} {
		r := reader{src: binary.AppendVarint(nil, v)}
		if got := r.varlong(); !r.ok() || got != v || r.remaining() != 0 {
			t.Errorf("varlong(%d) = %d, ok %v, %d left", v, got, r.ok(), r.remaining())
		}
	}
	for _, tc := range []struct {
		name string
		src  []byte
		long bool
	}{
		{"varint of 6 bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, false},
		{"varlong of 11 bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, true},
		{"cut short", []byte{0x80}, false},
	} {
		r := reader{src: tc.src}
		if tc.long {
			r.varlong()
		} else {
			r.varint()
		}
		if r.ok() {
			t.Errorf("%s: read", tc.name)
		}
	}
	// A 5-byte varint's bits past 32 are dropped, not an error.
	r := reader{src: []byte{0xff, 0xff, 0xff, 0xff, 0x7f}}
	if got := r.varint(); !r.ok() || got != math.MinInt32 {
		t.Errorf("5-byte varint = %d, ok %v", got, r.ok())
	}
}

// TestReaderSized: a negative length is a null, a zero length an empty
// slice, a length past the input makes the reader bad.
func TestReaderSized(t *testing.T) {
	r := reader{src: binary.AppendVarint(binary.AppendVarint(nil, -1), 0)}
	if b, null := r.varintBytes(); b != nil || !null {
		t.Errorf("null: %v %v", b, null)
	}
	if b, null := r.varintBytes(); b == nil || len(b) != 0 || null {
		t.Errorf("empty: %v %v", b, null)
	}
	r = reader{src: []byte{0, 0, 0, 3, 'a', 'b'}}
	if b, null := r.int32Bytes(); b != nil || null || r.ok() {
		t.Errorf("past the end: %v %v ok %v", b, null, r.ok())
	}
}
