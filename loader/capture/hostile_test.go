package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/hostile from the generators")

const hostileDir = "testdata/hostile"

var le = binary.LittleEndian

// hostile is one hand-built capture and what reading it must
// give: either Read fails (err) or it keeps packets and reports a problem.
type hostile struct {
	name    string
	data    []byte
	err     bool   // Read itself fails: nothing before the damage
	offset  int64  // file byte of the damaged block
	msg     string // in the problem's message
	packets int    // packets kept before the damage
}

// hostiles builds the shapes. Layout: a section header block is 28 bytes,
// an interface description block with one 1-byte option 32 (without
// options 20), an enhanced packet block 32 plus the padded packet.
func hostiles(t testing.TB) []hostile {
	pkt := newConv(t).pkts[0] // a SYN, 54 bytes
	epb := ngEPBlock(le, 0, 0, pkt)
	idb := func(res byte) []byte { return ngIDBlock(le, 65535, ngOption(le, 9, []byte{res})) }
	cat := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	shb := ngSHBlock(le)
	const afterIDB = 28 + 32
	var hs []hostile
	// Defect 3: if_tsresol 0x40 is 10^-64 s, 0xC0 2^-64 s; pcapgo's
	// units per second wrap to 0 and it divides by them.
	for _, res := range []byte{0x40, 0xC0, 0x7F, 0xFF} {
		hs = append(hs, hostile{name: "tsresol-" + hex2(res) + ".pcapng", data: cat(shb, idb(res), epb), err: true,
			offset: 28, msg: "if_tsresol option at byte 0x2c: resolution 0x" + hex2(res) + ", want 0x00..0x13"})
	}
	// 10^-20 s no longer fits 64 bits: pcapgo's arithmetic overflows
	// into a wrong clock rather than a panic; refused as libpcap does.
	hs = append(hs, hostile{name: "tsresol-14.pcapng", data: cat(shb, idb(0x14), epb), err: true, offset: 28, msg: "resolution 0x14"})
	// A second interface with a bad resolution after two packets: those
	// stay.
	late := cat(shb, idb(6), epb, epb)
	hs = append(hs, hostile{name: "tsresol-late.pcapng", data: cat(late, idb(0xC0), ngEPBlock(le, 1, 0, pkt)),
		offset: int64(len(late)), msg: "resolution 0xc0", packets: 2})
	// Defect 6: a 1,040-byte pcap whose snaplen, caplen and original
	// length say 0xfffffff0.
	hs = append(hs, hostile{name: "caplen-fffffff0.pcap", data: cat(pcapHeader(0xfffffff0), pcapRecord(0xfffffff0, 0xfffffff0, make([]byte, 1000))),
		offset: 24, msg: "captured length 4294967280, want at most 16777216"})
	hs = append(hs, hostile{name: "epb-caplen-giant.pcapng", data: cat(shb, idb(6), ngEPBlock(le, 0, 0, make([]byte, 1000), 0xfffffff0)),
		offset: afterIDB, msg: "captured length 4294967280, but the block holds 1000 bytes"})
	giant := cat(le.AppendUint32(nil, ngEPB), le.AppendUint32(nil, 0xfffffff0), make([]byte, 1000))
	hs = append(hs, hostile{name: "block-length-giant.pcapng", data: cat(shb, idb(6), epb, giant),
		offset: afterIDB + int64(len(epb)), msg: "total length 4294967280, want at most 16777216", packets: 1})
	// 8 MiB claimed, 1,000 bytes present: within the bound, beyond the
	// file.
	beyond := cat(le.AppendUint32(nil, ngEPB), le.AppendUint32(nil, 8<<20), make([]byte, 1000))
	hs = append(hs, hostile{name: "block-length-beyond.pcapng", data: cat(shb, idb(6), epb, beyond),
		offset: afterIDB + int64(len(epb)), msg: "pcapng block of 8388608 bytes cut after 1008", packets: 1})
	// Defect 12: a zero-length block used to end the read in silence.
	zero := cat(le.AppendUint32(nil, ngEPB), le.AppendUint32(nil, 0))
	hs = append(hs, hostile{name: "block-length-zero.pcapng", data: cat(shb, idb(6), epb, epb, zero, epb),
		offset: afterIDB + 2*int64(len(epb)), msg: "pcapng enhanced packet block (packet 3): total length 0, want at least 32", packets: 2})
	// Defect 12: pcapgo's own errors at the block they concern (packet 4
	// used to be reported at byte 0x0).
	hs = append(hs, hostile{name: "iface-missing.pcapng", data: cat(shb, idb(6), epb, epb, epb, ngEPBlock(le, 3, 0, pkt)),
		offset: afterIDB + 3*int64(len(epb)), msg: "pcapng enhanced packet block (packet 4): Interface id 3 not present", packets: 3})
	hs = append(hs, hostile{name: "trailer-mismatch.pcapng", data: cat(shb, idb(6), epb, epb[:len(epb)-4], le.AppendUint32(nil, 12)),
		offset: afterIDB + int64(len(epb)), msg: fmt.Sprintf("trailing total length 12, want %d (the leading one)", len(epb)), packets: 1})
	return hs
}

func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

// TestHostileCaptures reads each hostile shape (from testdata/hostile,
// which must match the generators; -update rewrites it): no panic, and
// the damage is reported once, at the file byte where its block starts,
// with what was expected and what was found, after the packets before it.
func TestHostileCaptures(t *testing.T) {
	for _, h := range hostiles(t) {
		t.Run(h.name, func(t *testing.T) {
			path := filepath.Join(hostileDir, h.name)
			if *update {
				if err := os.WriteFile(path, h.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, h.data) {
				t.Fatalf("%s does not match its generator (%v): go test -run TestHostileCaptures -update", path, err)
			}
			c, err := Open(path)
			var fe *FormatError
			if h.err {
				if !errors.As(err, &fe) {
					t.Fatalf("Read: %v, %v; want a positional error", c, err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Problems) != 1 || !errors.As(c.Problems[0], &fe) {
					t.Fatalf("problems %v, want one", c.Problems)
				}
				if c.Packets != h.packets {
					t.Errorf("%d packets kept, want %d", c.Packets, h.packets)
				}
			}
			if fe.Offset != h.offset || !strings.Contains(fe.Msg, h.msg) || fe.File != path {
				t.Errorf("got %q (offset %#x), want %q at %#x", fe.Error(), fe.Offset, h.msg, h.offset)
			}
			if n := strings.Count(fe.Error(), "byte 0x"); n != 1+strings.Count(fe.Msg, "byte 0x") {
				t.Errorf("%q: %d positions", fe.Error(), n)
			}
		})
	}
}

// TestGiantLengthsAllocateLittle: a capture claiming 4 GiB packets
// allocates in proportion to its bytes, whether the reader knows the file
// size (the server's uploads and files) or not (a pipe). The floor is
// about 2.4 MB: tcpassembly's page cache starts with 1,024 pages of 1,900
// bytes.
func TestGiantLengthsAllocateLittle(t *testing.T) {
	for _, h := range hostiles(t) {
		if !strings.Contains(h.name, "giant") && !strings.Contains(h.name, "caplen") && !strings.Contains(h.name, "beyond") {
			continue
		}
		for _, sized := range []bool{true, false} {
			var r io.Reader = bytes.NewReader(h.data)
			if !sized {
				r = struct{ io.Reader }{r} // hides Size
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			_, err := Read(r, h.name)
			runtime.ReadMemStats(&m1)
			if d := m1.TotalAlloc - m0.TotalAlloc; d > 4<<20 {
				t.Errorf("%s (size known %v): %d bytes allocated for a %d-byte file (%v)", h.name, sized, d, len(h.data), err)
			}
		}
	}
}
