package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// maxBlock bounds one pcap record or pcapng block. libpcap's pcapng reader
// starts from the same 16 MiB bound (INITIAL_MAX_BLOCKSIZE in
// sf-pcapng.c); its largest per-link-type snapshot length is 256 KiB for
// Ethernet and cooked captures, so no capture of Kafka traffic comes near.
const maxBlock = 16 << 20

// maxSnapLen is libpcap's MAXIMUM_SNAPLEN (pcap-int.h), what tcpdump and
// dumpcap write: a snap length above it is handed to pcapgo as 0.
const maxSnapLen = 256 << 10

// pcapng block types (pcapng specification, section 11.1).
const (
	ngSHB = 0x0A0D0D0A // Section Header Block; the same in both byte orders
	ngIDB = 1          // Interface Description Block
	ngPB  = 2          // Packet Block (obsolete)
	ngSPB = 3          // Simple Packet Block
	ngISB = 5          // Interface Statistics Block
	ngEPB = 6          // Enhanced Packet Block
)

// guard sits between the capture file and gopacket's pcapgo readers and
// hands them one whole, validated record (pcap) or block (pcapng) at a
// time. pcapgo trusts the lengths it reads: a caplen of 0xfffffff0 makes
// it allocate 4 GiB before reading a byte of the packet, an if_tsresol of
// 0x40 or 0xC0 makes it divide by zero (docs/upstream/gopacket-tsresol.md),
// a block length below 12 underflows to 4 GiB and skips the rest of the
// file in silence. The guard reads each record or block into a buffer that
// grows only as its bytes arrive, so memory follows the bytes present, not
// the lengths claimed; it checks what libpcap's readers check (sf-pcap.c,
// sf-pcapng.c: lengths, trailer, options) and stops at the first damage
// with a *FormatError naming the byte where the block starts.
//
// Because a bufio.Reader refills only when empty and each Read of the
// guard returns bytes of one block only, the block pcapgo is parsing when
// it returns an error is the guard's current one: problem turns pcapgo's
// errors into positional ones.
type guard struct {
	r       io.Reader
	name    string
	ng      bool
	order   binary.ByteOrder
	size    int64 // bytes in the file; -1 if the reader cannot tell
	pos     int64 // bytes of the file read so far
	start   int64 // where the current block starts
	typ     uint32
	buf     bytes.Buffer // the current block, validated
	out     int          // bytes of buf already handed out
	err     error        // sticky
	header  bool         // pcap: the file header is behind us
	packets int          // packet records or blocks read, the current one included
	snaplen []uint32     // pcapng: per interface of the current section
	// pcapSnap is a pcap file's snap length: pcapgo sizes its reused
	// packet buffer by it (Read).
	pcapSnap uint32
}

func newGuard(r io.Reader, name string, ng bool, size int64) *guard {
	return &guard{r: r, name: name, ng: ng, order: binary.LittleEndian, size: size}
}

func (g *guard) Read(p []byte) (int, error) {
	if g.out == g.buf.Len() {
		if g.err != nil {
			return 0, g.err
		}
		if err := g.next(); err != nil {
			g.err = err
			return 0, err
		}
	}
	n := copy(p, g.buf.Bytes()[g.out:])
	g.out += n
	return n, nil
}

func (g *guard) damage(format string, args ...any) *FormatError {
	return &FormatError{File: g.name, Offset: g.start, Msg: fmt.Sprintf(format, args...)}
}

// take appends up to n more bytes of the file to buf and returns how many
// arrived; fewer than n means the file ended.
func (g *guard) take(n int64) (int64, error) {
	k, err := io.CopyN(&g.buf, g.r, n)
	g.pos += k
	if err != nil && !errors.Is(err, io.EOF) {
		return k, &FormatError{File: g.name, Offset: g.pos, Msg: "read: " + err.Error()}
	}
	return k, nil
}

func (g *guard) next() error {
	g.buf.Reset()
	g.out, g.start, g.typ = 0, g.pos, 0
	if g.ng {
		return g.nextBlock()
	}
	return g.nextRecord()
}

// what names the current block in errors.
func (g *guard) what() string {
	if !g.ng {
		if !g.header || g.start == 0 {
			return "pcap file header"
		}
		return fmt.Sprintf("pcap record (packet %d)", g.packets)
	}
	switch g.typ {
	case ngSHB:
		return "pcapng section header block"
	case ngIDB:
		return "pcapng interface description block"
	case ngISB:
		return "pcapng interface statistics block"
	case ngEPB:
		return fmt.Sprintf("pcapng enhanced packet block (packet %d)", g.packets)
	case ngSPB:
		return fmt.Sprintf("pcapng simple packet block (packet %d)", g.packets)
	case ngPB:
		return fmt.Sprintf("pcapng packet block (packet %d)", g.packets)
	}
	return fmt.Sprintf("pcapng block of type %#x", g.typ)
}

// cut is the problem of a file that ends inside a block (tcpdump or
// dumpcap killed mid-write, a capture copied while being written), or
// whose block claims more bytes than the file has left: both read the
// same, and the message is the one a cut capture has always had.
func (g *guard) cut(total, have int64) *FormatError {
	what := "pcapng block"
	if !g.ng {
		what = "pcap record"
	}
	return g.damage("%s of %d bytes cut after %d (capture ended mid-packet; that packet is lost)", what, total, have)
}

func (g *guard) headerCut(want int, have int64) *FormatError {
	what := "pcapng block"
	if !g.ng {
		what = "pcap record"
	}
	return g.damage("%s header cut after %d bytes, want %d (capture ended mid-packet)", what, have, want)
}

// left is the number of bytes the file holds from the current block's
// start, or -1 if unknown.
func (g *guard) left() int64 {
	if g.size < 0 {
		return -1
	}
	return max(g.size-g.start, 0)
}

// nextRecord reads pcap's 24-byte file header, then one record: a 16-byte
// header whose incl_len (bytes 8..12) counts the packet bytes after it.
func (g *guard) nextRecord() error {
	if !g.header {
		k, err := g.take(24)
		if err != nil {
			return err
		}
		if k < 24 {
			return g.damage("pcap file header cut after %d bytes, want 24", k)
		}
		if m := binary.BigEndian.Uint32(g.buf.Bytes()); m == 0xa1b2c3d4 || m == 0xa1b23c4d {
			g.order = binary.BigEndian
		}
		g.pcapSnap = g.order.Uint32(g.buf.Bytes()[16:20])
		g.header = true
		return nil
	}
	k, err := g.take(16)
	if err != nil {
		return err
	}
	if k == 0 {
		return io.EOF
	}
	if k < 16 {
		return g.headerCut(16, k)
	}
	g.packets++
	incl := int64(g.order.Uint32(g.buf.Bytes()[8:12]))
	if incl > maxBlock {
		return g.damage("pcap record (packet %d): captured length %d, want at most %d", g.packets, incl, maxBlock)
	}
	if l := g.left(); l >= 0 && 16+incl > l {
		return g.cut(16+incl, l)
	}
	if l := g.left(); l >= 0 {
		g.buf.Grow(int(incl))
	}
	if k, err = g.take(incl); err != nil {
		return err
	}
	if k < incl {
		return g.cut(16+incl, 16+k)
	}
	return nil
}

// minBlockLen is the smallest total length of a pcapng block of type t:
// the 12 bytes of type, length and trailer plus the fixed fields pcapgo
// reads unconditionally (its length arithmetic underflows below these).
func minBlockLen(t uint32) int64 {
	switch t {
	case ngSHB:
		return 28 // byte-order magic, versions, section length
	case ngIDB:
		return 20 // link type, reserved, snap length
	case ngEPB, ngPB:
		return 32 // interface, timestamp, captured and original lengths
	case ngSPB:
		return 16 // original length
	case ngISB:
		return 24 // interface, timestamp
	}
	return 12
}

// nextBlock reads one pcapng block: type, total length (the whole block),
// body, and the total length again as a trailer. The Section Header Block
// sets the byte order with its magic 0x1A2B3C4D at bytes 8..12.
func (g *guard) nextBlock() error {
	k, err := g.take(8)
	if err != nil {
		return err
	}
	if k == 0 {
		return io.EOF
	}
	if k < 8 {
		return g.headerCut(8, k)
	}
	hl := int64(8)
	g.typ = g.order.Uint32(g.buf.Bytes())
	if binary.LittleEndian.Uint32(g.buf.Bytes()) == ngSHB {
		g.typ = ngSHB
		if k, err = g.take(4); err != nil {
			return err
		}
		if k < 4 {
			return g.headerCut(12, 8+k)
		}
		switch bom := g.buf.Bytes()[8:12]; {
		case binary.BigEndian.Uint32(bom) == 0x1A2B3C4D:
			g.order = binary.BigEndian
		case binary.LittleEndian.Uint32(bom) == 0x1A2B3C4D:
			g.order = binary.LittleEndian
		default:
			return g.damage("pcapng section header block: byte-order magic % x, want 1a 2b 3c 4d in either byte order", bom)
		}
		g.snaplen = g.snaplen[:0] // interfaces are per section
		hl = 12
	}
	total := int64(g.order.Uint32(g.buf.Bytes()[4:8]))
	switch g.typ {
	case ngEPB, ngPB, ngSPB:
		g.packets++
	}
	// As libpcap's read_block: at least header and trailer, a multiple
	// of 4, bounded.
	if m := minBlockLen(g.typ); total < m {
		return g.damage("%s: total length %d, want at least %d", g.what(), total, m)
	}
	if total%4 != 0 {
		return g.damage("%s: total length %d, want a multiple of 4", g.what(), total)
	}
	if total > maxBlock {
		return g.damage("%s: total length %d, want at most %d", g.what(), total, maxBlock)
	}
	if l := g.left(); l >= 0 && total > l {
		return g.cut(total, l)
	}
	if g.left() >= 0 {
		g.buf.Grow(int(total - hl))
	}
	if k, err = g.take(total - hl); err != nil {
		return err
	}
	if k < total-hl {
		return g.cut(total, hl+k)
	}
	b := g.buf.Bytes()
	if tr := int64(g.order.Uint32(b[total-4:])); tr != total {
		return g.damage("%s: trailing total length %d, want %d (the leading one)", g.what(), tr, total)
	}
	o := g.order
	switch g.typ {
	case ngSHB:
		return g.options(b, 24, false)
	case ngIDB:
		if err := g.options(b, 16, true); err != nil {
			return err
		}
		g.snaplen = append(g.snaplen, o.Uint32(b[12:16]))
		if o.Uint32(b[12:16]) > maxSnapLen {
			// pcapgo's ZeroCopyReadPacketData sizes its one packet
			// buffer by the interface's snap length: a claimed 4 GiB
			// would be allocated before a packet is read. pcapgo is
			// told 0 (no limit) instead and sizes the buffer by the
			// packets, which are in the file.
			o.PutUint32(b[12:16], 0)
		}
	case ngISB:
		return g.options(b, 20, false)
	case ngEPB, ngPB:
		// pcapgo allocates the captured length before reading it.
		if c := int64(o.Uint32(b[20:24])); c > total-32 {
			return g.damage("%s: captured length %d, but the block holds %d bytes of packet data", g.what(), c, total-32)
		}
	case ngSPB:
		// The captured length is the original one cut to the first
		// interface's snap length (pcapng specification, 4.4).
		c := int64(o.Uint32(b[8:12]))
		if len(g.snaplen) > 0 && g.snaplen[0] != 0 {
			c = min(c, int64(g.snaplen[0]))
		}
		if c > total-16 {
			return g.damage("%s: packet length %d, but the block holds %d bytes of packet data", g.what(), c, total-16)
		}
	}
	return nil
}

// options walks the options of a block that pcapgo parses (section header,
// interface description, interface statistics), from byte from to the
// trailer: a 2-byte code, a 2-byte length, the value padded to 4 bytes.
// In an interface description block it checks the two options pcapgo
// computes with, as libpcap's process_idb_options does.
func (g *guard) options(b []byte, from int, idb bool) error {
	o, end := g.order, len(b)-4
	for p := from; p < end; {
		if end-p < 4 {
			return g.damage("%s: option at byte %#x: header cut after %d bytes, want 4", g.what(), g.start+int64(p), end-p)
		}
		code, n := o.Uint16(b[p:]), int(o.Uint16(b[p+2:]))
		if code == 0 { // opt_endofopt
			if n != 0 {
				return g.damage("%s: end-of-options option at byte %#x of length %d, want 0", g.what(), g.start+int64(p), n)
			}
			return nil
		}
		if padded := (n + 3) &^ 3; padded > end-p-4 {
			return g.damage("%s: option %d at byte %#x of %d bytes runs past the block's end (%d bytes left)", g.what(), code, g.start+int64(p), n, end-p-4)
		}
		v := b[p+4 : p+4+n]
		if idb {
			if err := g.idbOption(code, v, g.start+int64(p)); err != nil {
				return err
			}
		}
		p += 4 + (n+3)&^3
	}
	return nil
}

func (g *guard) idbOption(code uint16, v []byte, at int64) error {
	switch code {
	case 9: // if_tsresol
		if len(v) != 1 {
			return g.damage("%s: if_tsresol option at byte %#x of length %d, want 1", g.what(), at, len(v))
		}
		// Bit 7 set: the resolution is 2^-(bits 0..6) s, else 10^-value s.
		// Units per second must fit in 64 bits (2^63, 10^19), as libpcap
		// requires; pcapgo computes them in a uint64 and divides by the
		// result, which wraps to 0 from 2^-64 and 10^-64 on.
		if r := v[0]; r&0x80 != 0 && r&0x7f > 63 || r&0x80 == 0 && r > 19 {
			return g.damage("%s: if_tsresol option at byte %#x: resolution %#02x, want 0x00..0x13 (10^-0..10^-19 s) or 0x80..0xbf (2^-0..2^-63 s)", g.what(), at, r)
		}
	case 14: // if_tsoffset
		if len(v) != 8 {
			return g.damage("%s: if_tsoffset option at byte %#x of length %d, want 8", g.what(), at, len(v))
		}
	}
	return nil
}

// problem turns an error of pcapgo into a positional one: the guard's own
// errors already are; others happened in the block being parsed.
func (g *guard) problem(err error) *FormatError {
	var fe *FormatError
	if errors.As(err, &fe) {
		return fe
	}
	return g.damage("%s: %v", g.what(), err)
}

// panicked is the last guard: a panic inside pcapgo that the checks above
// did not foresee becomes damage at the block being parsed.
func (g *guard) panicked(v any) *FormatError {
	return g.damage("%s: the packet reader failed on this block (%v); reading stopped here", g.what(), v)
}
