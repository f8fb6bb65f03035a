package capture

import (
	"encoding/binary"
	"fmt"
	"io"
)

// tailCheck follows a capture file's block framing as pcapgo reads it, so
// that a file cut inside its last block (tcpdump or dumpcap killed
// mid-write, a capture copied while still being written) is reported with
// the block's byte position. pcapgo's pcapng reader returns a plain io.EOF
// there, and the packet would vanish without a word; its pcap reader says
// io.ErrUnexpectedEOF without a position.
//
// Framing: pcap is a 24-byte file header, then records of a 16-byte header
// whose incl_len (bytes 8..12) counts the data after it. pcapng is blocks
// of type (4 bytes) and total length (4 bytes, the whole block); the
// Section Header Block (type 0x0A0D0D0A, the same in both byte orders)
// sets the byte order with its magic 0x1A2B3C4D at bytes 8..12.
type tailCheck struct {
	r     io.Reader
	ng    bool
	order binary.ByteOrder
	pos   int64  // bytes read so far
	start int64  // where the current block starts
	end   int64  // where it ends, once its header is complete; -1 before
	head  []byte // the current block's header bytes so far
	seen  bool   // pcap: the file header is behind us
	lost  bool   // a length made no sense: pcapgo reports that itself
}

const ngSHB = 0x0A0D0D0A

func newTailCheck(r io.Reader, ng bool) *tailCheck {
	return &tailCheck{r: r, ng: ng, order: binary.LittleEndian, end: -1}
}

func (t *tailCheck) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	b := p[:n]
	for len(b) > 0 && !t.lost {
		if t.end >= 0 { // in a block's body
			k := min(int64(len(b)), t.end-t.pos)
			t.pos += k
			b = b[k:]
			if t.pos == t.end {
				t.start, t.end, t.head = t.end, -1, t.head[:0]
			}
			continue
		}
		need := t.headerLen()
		k := min(len(b), need-len(t.head))
		t.head = append(t.head, b[:k]...)
		t.pos += int64(k)
		b = b[k:]
		if len(t.head) == t.headerLen() {
			t.end = t.start + t.blockLen()
			if t.end < t.pos {
				t.lost = true
			} else if t.end == t.pos {
				t.start, t.end, t.head = t.end, -1, t.head[:0]
			}
		}
	}
	return n, err
}

func (t *tailCheck) headerLen() int {
	switch {
	case !t.ng && !t.seen:
		return 24
	case !t.ng:
		return 16
	case len(t.head) >= 4 && binary.LittleEndian.Uint32(t.head) == ngSHB:
		return 12
	}
	return 8
}

func (t *tailCheck) blockLen() int64 {
	h := t.head
	if !t.ng {
		if !t.seen {
			t.seen = true
			if m := binary.BigEndian.Uint32(h); m == 0xa1b2c3d4 || m == 0xa1b23c4d {
				t.order = binary.BigEndian
			}
			return 24
		}
		return 16 + int64(t.order.Uint32(h[8:12]))
	}
	if binary.LittleEndian.Uint32(h) == ngSHB {
		t.order = binary.LittleEndian
		if binary.BigEndian.Uint32(h[8:12]) == 0x1A2B3C4D {
			t.order = binary.BigEndian
		}
	}
	return int64(t.order.Uint32(h[4:8]))
}

// cut returns the problem of a file that ended inside a block, or nil.
func (t *tailCheck) cut(name string) *FormatError {
	if t.lost || (len(t.head) == 0 && t.end < 0) {
		return nil
	}
	what := "pcapng block"
	if !t.ng {
		what = "pcap record"
	}
	if t.end < 0 {
		return &FormatError{File: name, Offset: t.start, Msg: fmt.Sprintf("%s header cut after %d bytes (capture ended mid-packet)", what, len(t.head))}
	}
	return &FormatError{File: name, Offset: t.start, Msg: fmt.Sprintf("%s of %d bytes cut after %d (capture ended mid-packet; that packet is lost)", what, t.end-t.start, t.pos-t.start)}
}
