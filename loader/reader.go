package loader

import "encoding/binary"

// reader is a sticky-error big-endian decoder in the style of franz-go's
// kbin.Reader: callers read a run of fields and check ok once. After the
// first short read every method returns zero values and nothing advances,
// so a length read from a damaged input can never move the cursor past the
// end of src.
type reader struct {
	src []byte
	off int
	bad bool
}

func (r *reader) ok() bool { return !r.bad }

// remaining is the number of unread bytes.
func (r *reader) remaining() int { return len(r.src) - r.off }

func (r *reader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.src)-r.off {
		r.bad = true
		return nil
	}
	b := r.src[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

func (r *reader) int8() int8 {
	b := r.take(1)
	if b == nil {
		return 0
	}
	return int8(b[0])
}

func (r *reader) int16() int16 {
	b := r.take(2)
	if b == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(b))
}

func (r *reader) int32() int32 { return int32(r.uint32()) }

func (r *reader) uint32() uint32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func (r *reader) int64() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// varint reads a zigzag varint the way ByteUtils.readVarint does: at most 5
// bytes, a 5th byte with its continuation bit set is an error, and bits
// beyond 32 are dropped.
func (r *reader) varint() int32 {
	v := uint32(r.uvarint(5))
	return int32(v>>1) ^ -int32(v&1)
}

// varlong is varint for int64: at most 10 bytes (ByteUtils.readVarlong).
func (r *reader) varlong() int64 {
	v := r.uvarint(10)
	return int64(v>>1) ^ -int64(v&1)
}

// uvarint reads base-128 groups, low first, of at most n bytes; bits past
// 64 are dropped, and a last byte with its continuation bit set is an
// error (0).
func (r *reader) uvarint(n int) uint64 {
	var v uint64
	for i := range n {
		b := r.take(1)
		if b == nil {
			return 0
		}
		v |= uint64(b[0]&0x7f) << (7 * i)
		if b[0] < 0x80 {
			return v
		}
	}
	r.bad = true
	return 0
}

// varintBytes reads a varint length and that many bytes; a negative length
// is a null (Utils.readBytes), returned as nil with isNull set.
func (r *reader) varintBytes() (b []byte, isNull bool) { return r.sized(r.varint()) }

// int32Bytes reads an int32 length and that many bytes; -1 (any negative)
// is null, as LegacyRecord's key and value.
func (r *reader) int32Bytes() (b []byte, isNull bool) { return r.sized(r.int32()) }

// sized reads the n bytes a length just read announced; a negative n is a
// null, an empty slice (not nil) is zero bytes.
func (r *reader) sized(n int32) (b []byte, isNull bool) {
	if r.bad {
		return nil, false
	}
	if n < 0 {
		return nil, true
	}
	b = r.take(int(n))
	if b == nil && !r.bad {
		b = []byte{}
	}
	return b, false
}
