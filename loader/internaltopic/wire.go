package internaltopic

import (
	"encoding/binary"
	"fmt"
)

// wire is a sticky reader of Kafka's generated message encodings, for the
// record types kmsg has no type for (the newer group records' keys,
// __share_group_state, __cluster_metadata). The first problem is kept
// with its byte position and every later read returns zero values, so a
// decoder reads its fields and checks err once; every length is checked
// against the bytes left before anything is allocated.
type wire struct {
	b   []byte
	off int
	err error
}

func (w *wire) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("byte %d: %s", w.off, fmt.Sprintf(format, args...))
	}
	w.off = len(w.b)
}

func (w *wire) need(n int, what string) bool {
	if w.err != nil {
		return false
	}
	if n > len(w.b)-w.off {
		w.fail("%s needs %d bytes, %d left", what, n, len(w.b)-w.off)
		return false
	}
	return true
}

func (w *wire) int8(what string) int8 {
	if !w.need(1, what) {
		return 0
	}
	w.off++
	return int8(w.b[w.off-1])
}

func (w *wire) int16(what string) int16 {
	if !w.need(2, what) {
		return 0
	}
	w.off += 2
	return int16(binary.BigEndian.Uint16(w.b[w.off-2:]))
}

func (w *wire) int32(what string) int32 {
	if !w.need(4, what) {
		return 0
	}
	w.off += 4
	return int32(binary.BigEndian.Uint32(w.b[w.off-4:]))
}

func (w *wire) int64(what string) int64 {
	if !w.need(8, what) {
		return 0
	}
	w.off += 8
	return int64(binary.BigEndian.Uint64(w.b[w.off-8:]))
}

func (w *wire) uuid(what string) (u [16]byte) {
	if !w.need(16, what) {
		return u
	}
	copy(u[:], w.b[w.off:])
	w.off += 16
	return u
}

// uvarint reads an unsigned varint of at most 5 bytes (Kafka's
// ByteUtils.readUnsignedVarint refuses longer ones).
func (w *wire) uvarint(what string) uint32 {
	if w.err != nil {
		return 0
	}
	var v uint32
	for i := range 5 {
		if w.off >= len(w.b) {
			w.fail("%s: varint cut short", what)
			return 0
		}
		c := w.b[w.off]
		w.off++
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v
		}
	}
	w.fail("%s: varint longer than 5 bytes", what)
	return 0
}

// str reads a non-flexible, non-null string: an int16 length, then the
// bytes.
func (w *wire) str(what string) string {
	n := w.int16(what + " length")
	if w.err != nil {
		return ""
	}
	if n < 0 {
		w.fail("%s: null (length %d), want a string", what, n)
		return ""
	}
	if !w.need(int(n), what) {
		return ""
	}
	w.off += int(n)
	return string(w.b[w.off-int(n) : w.off])
}

// compactStr reads a flexible version's string: an unsigned varint of
// the length plus one, 0 for null (refused unless nullable).
func (w *wire) compactStr(what string, nullable bool) (s string, null bool) {
	n := w.uvarint(what + " length")
	if w.err != nil {
		return "", false
	}
	if n == 0 {
		if !nullable {
			w.fail("%s: null, want a string", what)
		}
		return "", true
	}
	l := int(n - 1)
	if l > MaxStringLen {
		w.fail("%s of %d bytes, longer than the %d a string may hold", what, l, MaxStringLen)
		return "", false
	}
	if !w.need(l, what) {
		return "", false
	}
	w.off += l
	return string(w.b[w.off-l : w.off]), false
}

// compactArray reads a flexible array's length (varint of length plus
// one; 0, null, is refused), checked against the bytes left at minElem
// bytes an element.
func (w *wire) compactArray(what string, minElem int) int {
	n := w.uvarint(what + " length")
	if w.err != nil {
		return 0
	}
	if n == 0 {
		w.fail("%s: null, want an array", what)
		return 0
	}
	l := int(n - 1)
	if l > (len(w.b)-w.off)/max(minElem, 1) {
		w.fail("%s of %d elements, at least %d bytes each, %d bytes left", what, l, minElem, len(w.b)-w.off)
		return 0
	}
	return l
}

// skipTags skips a flexible version's tagged fields: a count, then per
// field a tag and a size, each an unsigned varint, then the bytes.
func (w *wire) skipTags(what string) {
	n := w.uvarint(what + " tagged fields")
	if n > uint32(len(w.b)-w.off) {
		w.fail("%s: %d tagged fields, %d bytes left", what, n, len(w.b)-w.off)
		return
	}
	for range n {
		w.uvarint(what + " tag")
		size := w.uvarint(what + " tagged field size")
		if !w.need(int(min(size, 1<<30)), what+" tagged field") {
			return
		}
		w.off += int(size)
	}
}

// end refuses bytes left over (AbstractApiMessageSerde: "Found N byte(s)
// of garbage after").
func (w *wire) end(what string) {
	if w.err == nil && w.off != len(w.b) {
		w.fail("%d bytes after the end of %s", len(w.b)-w.off, what)
	}
}
