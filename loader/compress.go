package loader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/txnscope/txnscope/txnindex"
)

// errTooLarge is returned when a batch would decompress past the bound.
var errTooLarge = errors.New("decompressed size exceeds the bound")

// decompress expands src, compressed with codec, to at most limit bytes. magic
// is the batch's magic: magic 0 LZ4 frames carry a wrong header checksum
// that Kafka ignores (Lz4BlockInputStream, ignoreFlagDescriptorChecksum).
func decompress(codec txnindex.Compression, src []byte, limit int64, magic int8) ([]byte, error) {
	if codec == txnindex.CompressionNone {
		return src, nil
	}
	r, release, err := decompressReader(codec, src, limit, magic)
	if err != nil {
		return nil, err
	}
	defer release()
	var buf bytes.Buffer
	buf.Grow(int(min(int64(len(src))*4, limit, 1<<20)))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decompressReader returns src decompressed with codec as a stream, and a
// func that releases the stream's decoder (call it once done). The stream
// never yields more than limit bytes: reading past them fails with
// errTooLarge. The codecs decode as the caller reads (one zstd block of at
// most 128 KiB, one LZ4 block of at most 4 MiB, one snappy chunk, a gzip
// window at a time), so the work and memory of a reader that stops early
// grow with what it read, not with what the batch claims or holds.
func decompressReader(codec txnindex.Compression, src []byte, limit int64, magic int8) (io.Reader, func(), error) {
	nop := func() {}
	var r io.Reader
	release := nop
	switch codec {
	case txnindex.CompressionNone:
		r = bytes.NewReader(src)
	case txnindex.CompressionGzip:
		// GZIPInputStream reads concatenated members; so does this
		// reader (multistream is its default).
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, nop, err
		}
		r = zr
	case txnindex.CompressionSnappy:
		r = newSnappyReader(src, limit)
	case txnindex.CompressionLZ4:
		if magic == 0 {
			src = fixLZ4HeaderChecksum(src)
		}
		r = lz4.NewReader(bytes.NewReader(src))
	case txnindex.CompressionZstd:
		d := zstdPool.Get().(*zstd.Decoder)
		if err := d.Reset(bytes.NewReader(src)); err != nil {
			zstdPool.Put(d)
			return nil, nop, err
		}
		r, release = d, func() { d.Reset(nil); zstdPool.Put(d) }
	default:
		// CompressionType.forId: "Unknown compression type id".
		return nil, nop, fmt.Errorf("unknown compression type id %d", codec)
	}
	return &boundedReader{r: r, left: limit, limit: limit}, release, nil
}

// boundedReader passes at most limit bytes of r through and then fails
// with errTooLarge if r has more.
type boundedReader struct {
	r           io.Reader
	left, limit int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		var one [1]byte
		n, err := io.ReadFull(b.r, one[:])
		if n > 0 {
			return 0, fmt.Errorf("%w (%d bytes)", errTooLarge, b.limit)
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// xerialMagic starts a snappy-java SnappyOutputStream: the Java producer's
// framing (SnappyCompression). A raw snappy block is accepted too, as
// Wireshark and franz-go do.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// snappyReader decodes xerial-framed snappy one chunk at a time, or a raw
// snappy block whole; each block's declared length is checked against the
// bytes still allowed before s2 allocates it.
type snappyReader struct {
	rest   []byte // xerial chunks not decoded yet
	out    []byte // decoded bytes not read yet
	left   int64  // bytes the blocks still to decode may produce
	xerial bool
	err    error
}

func newSnappyReader(src []byte, limit int64) *snappyReader {
	if len(src) < 16 || !bytes.HasPrefix(src, xerialMagic) {
		out, err := snappyBlock(src, limit)
		return &snappyReader{out: out, err: err}
	}
	// 8-byte magic, int32 version, int32 compatible version, then
	// [int32 length][raw snappy block] chunks.
	return &snappyReader{rest: src[16:], left: limit, xerial: true}
}

func (s *snappyReader) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if !s.xerial || len(s.rest) == 0 {
			return 0, io.EOF
		}
		if len(s.rest) < 4 {
			s.err = fmt.Errorf("xerial framing: %d trailing bytes, want a 4-byte chunk length", len(s.rest))
			continue
		}
		n := binary.BigEndian.Uint32(s.rest)
		s.rest = s.rest[4:]
		if int64(n) > int64(len(s.rest)) {
			s.err = fmt.Errorf("xerial framing: chunk length %d, only %d bytes left", n, len(s.rest))
			continue
		}
		s.out, s.err = snappyBlock(s.rest[:n], s.left)
		s.left -= int64(len(s.out))
		s.rest = s.rest[n:]
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// snappyBlock decodes one raw snappy block, checking its declared length
// against limit before s2 allocates it.
func snappyBlock(block []byte, limit int64) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if int64(n) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", errTooLarge, limit)
	}
	return s2.Decode(nil, block)
}

// zstdPool holds streaming zstd decoders, which are costly to build. They
// decode synchronously (concurrency 1), and boundedReader bounds their
// output. The window is bounded separately: streaming writers (zstd-jni,
// which the Java producer uses) declare a window from the compression
// level, not from the data, so a frame's window may exceed a small batch's
// output bound. A decoder allocates its history for the declared window
// (plus half a block, in low-memory mode) on the first frame that needs it
// and keeps it for the next frames, so a scan of many batches pays for the
// largest window once, not once per batch (8 MiB for a 64 MiB stream
// from klauspost's default encoder).
var zstdPool = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(zstdMaxWindow),
		zstd.WithDecoderMaxMemory(zstdMaxWindow))
	if err != nil {
		// Only invalid options fail; these are constant.
		panic("loader: zstd.NewReader: " + err.Error())
	}
	return d
}}

// zstdMaxWindow is the largest window accepted: zstd's level 19-22 windows
// reach 8-128 MiB, but Kafka producers use the default level 3 (2 MiB).
const zstdMaxWindow = 64 << 20

// fixLZ4HeaderChecksum rewrites the header checksum of an LZ4 frame. Kafka
// 0.8-0.10 (magic 0) computed it over the magic number as well as the frame
// descriptor, so a conforming reader rejects those frames; Kafka reads them
// with the check disabled and Wireshark patches the byte, as this does.
// Anything that does not look like an LZ4 frame is returned unchanged.
func fixLZ4HeaderChecksum(src []byte) []byte {
	if len(src) < 7 || binary.LittleEndian.Uint32(src) != 0x184D2204 {
		return src
	}
	flg := src[4]
	n := 2 // FLG, BD
	if flg&0x08 != 0 {
		n += 8 // content size
	}
	if flg&0x01 != 0 {
		n += 4 // dictionary id
	}
	if len(src) < 4+n+1 {
		return src
	}
	hc := byte(xxh32(src[4:4+n]) >> 8)
	if src[4+n] == hc {
		return src
	}
	out := bytes.Clone(src)
	out[4+n] = hc
	return out
}

// xxh32 is XXH32 with seed 0 for inputs under 16 bytes, all an LZ4 frame
// descriptor can be.
func xxh32(b []byte) uint32 {
	const (
		p1 = 2654435761
		p2 = 2246822519
		p3 = 3266489917
		p4 = 668265263
		p5 = 374761393
	)
	h := uint32(p5) + uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		h += binary.LittleEndian.Uint32(b) * p3
		h = bits.RotateLeft32(h, 17) * p4
	}
	for _, c := range b {
		h += uint32(c) * p5
		h = bits.RotateLeft32(h, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
