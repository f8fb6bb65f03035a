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
	switch codec {
	case txnindex.CompressionNone:
		return src, nil
	case txnindex.CompressionGzip:
		// GZIPInputStream reads concatenated members; so does this
		// reader (multistream is its default).
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		return readBounded(zr, len(src), limit)
	case txnindex.CompressionSnappy:
		return decompressSnappy(src, limit)
	case txnindex.CompressionLZ4:
		if magic == 0 {
			src = fixLZ4HeaderChecksum(src)
		}
		return readBounded(lz4.NewReader(bytes.NewReader(src)), len(src), limit)
	case txnindex.CompressionZstd:
		d := zstdPool.Get().(*zstd.Decoder)
		defer zstdPool.Put(d)
		if err := d.Reset(bytes.NewReader(src)); err != nil {
			return nil, err
		}
		out, err := readBounded(d, len(src), limit)
		d.Reset(nil)
		return out, err
	}
	// CompressionType.forId: "Unknown compression type id".
	return nil, fmt.Errorf("unknown compression type id %d", codec)
}

// readBounded reads r to the end, failing once more than limit bytes arrive;
// memory grows with the bytes actually produced, never with a claimed size.
func readBounded(r io.Reader, srcLen int, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(min(int64(srcLen)*4, limit, 1<<20)))
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%w (%d bytes)", errTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// xerialMagic starts a snappy-java SnappyOutputStream: the Java producer's
// framing (SnappyCompression). A raw snappy block is accepted too, as
// Wireshark and franz-go do.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

func decompressSnappy(src []byte, limit int64) ([]byte, error) {
	if len(src) < 16 || !bytes.HasPrefix(src, xerialMagic) {
		return snappyBlock(nil, src, limit)
	}
	// 8-byte magic, int32 version, int32 compatible version, then
	// [int32 length][raw snappy block] chunks.
	var out []byte
	rest := src[16:]
	for len(rest) > 0 {
		if len(rest) < 4 {
			return nil, fmt.Errorf("xerial framing: %d trailing bytes, want a 4-byte chunk length", len(rest))
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if int64(n) > int64(len(rest)) {
			return nil, fmt.Errorf("xerial framing: chunk length %d, only %d bytes left", n, len(rest))
		}
		var err error
		if out, err = snappyBlock(out, rest[:n], limit-int64(len(out))); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	return out, nil
}

// snappyBlock appends the decoding of one raw snappy block to dst, checking
// the block's declared length against limit before s2 allocates it.
func snappyBlock(dst, block []byte, limit int64) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if int64(n) > limit {
		return nil, fmt.Errorf("%w (%d bytes)", errTooLarge, limit)
	}
	out, err := s2.Decode(nil, block)
	if err != nil {
		return nil, err
	}
	return append(dst, out...), nil
}

// zstdPool holds streaming zstd decoders, which are costly to build. They
// decode synchronously (concurrency 1), and readBounded bounds their output.
// The window is bounded separately: streaming writers (zstd-jni, which the
// Java producer uses) declare a window from the compression level, not from
// the data, so a frame's window may exceed a small batch's output bound.
// The decoder grows its history as data arrives, up to that window.
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
