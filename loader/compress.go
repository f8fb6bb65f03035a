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
	r, release, err := decompressReader(codec, bytes.NewReader(src), limit, magic)
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

// Decompress expands src, the records of a magic 2 batch compressed with
// codec, to at most limit bytes; a larger output is an error. It is the
// bounded decoding of this package for callers that decode batches through
// another library's interface (kgo.Decompressor).
func Decompress(codec txnindex.Compression, src []byte, limit int64) ([]byte, error) {
	return decompress(codec, src, limit, 2)
}

// decompressReader returns src decompressed with codec as a stream, and a
// func that releases the stream's decoder (call it once done). The stream
// never yields more than limit bytes: reading past them fails with
// errTooLarge. The codecs decode as the caller reads (one zstd block of at
// most 128 KiB, one LZ4 block of at most 4 MiB, one snappy chunk, a gzip
// window at a time) and read src as they go, so the work and memory of a
// reader that stops early grow with what it read, not with what the batch
// claims or holds.
func decompressReader(codec txnindex.Compression, src io.Reader, limit int64, magic int8) (io.Reader, func(), error) {
	return decompressReaderWith(codec, src, limit, magic, nil)
}

// decompressReaderWith is decompressReader decoding zstd with zd (reset
// for src, and reset to nil by the release func) instead of a pooled
// decoder, when zd is not nil.
func decompressReaderWith(codec txnindex.Compression, src io.Reader, limit int64, magic int8, zd *zstd.Decoder) (io.Reader, func(), error) {
	nop := func() {}
	var r io.Reader
	release := nop
	switch codec {
	case txnindex.CompressionNone:
		r = src
	case txnindex.CompressionGzip:
		// GZIPInputStream reads concatenated members; so does this
		// reader (multistream is its default).
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, nop, err
		}
		r = zr
	case txnindex.CompressionSnappy:
		r = newSnappyReader(src, limit)
	case txnindex.CompressionLZ4:
		if magic == 0 {
			src = fixLZ4Stream(src)
		}
		r = lz4.NewReader(src)
	case txnindex.CompressionZstd:
		d, put := zd, func(*zstd.Decoder) {}
		if d == nil {
			d, put = zstdPool.Get().(*zstd.Decoder), func(d *zstd.Decoder) { zstdPool.Put(d) }
		}
		if err := d.Reset(src); err != nil {
			put(d)
			return nil, nop, err
		}
		r, release = d, func() { d.Reset(nil); put(d) }
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
	src   io.Reader // xerial chunks not decoded yet; nil for a raw block
	out   []byte    // decoded bytes not read yet
	left  int64     // bytes the blocks still to decode may produce
	err   error
	chunk bytes.Buffer
}

func newSnappyReader(src io.Reader, limit int64) *snappyReader {
	s := &snappyReader{left: limit}
	var head [16]byte
	n, err := io.ReadFull(src, head[:])
	if err == nil && bytes.HasPrefix(head[:], xerialMagic) {
		// 8-byte magic, int32 version, int32 compatible version, then
		// [int32 length][raw snappy block] chunks.
		s.src = src
		return s
	}
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		s.err = err
		return s
	}
	// A raw block: no valid block of at most limit decoded bytes is
	// longer than MaxEncodedLen(limit), so that bounds the read.
	if _, err := s.readChunk(io.MultiReader(bytes.NewReader(head[:n]), src), maxEncodedLen(limit)+1); err != nil {
		s.err = err
		return s
	}
	s.out, s.err = snappyBlock(s.chunk.Bytes(), limit)
	return s
}

// maxEncodedLen is s2.MaxEncodedLen, saturated for lengths it refuses.
func maxEncodedLen(n int64) int64 {
	if e := s2.MaxEncodedLen(int(min(n, 1<<31))); e >= 0 {
		return int64(e)
	}
	return 1 << 32
}

// readChunk reads at most n bytes of r into s.chunk (growing it with the
// bytes that arrive, not with n) and returns how many.
func (s *snappyReader) readChunk(r io.Reader, n int64) (int64, error) {
	s.chunk.Reset()
	return s.chunk.ReadFrom(io.LimitReader(r, n))
}

func (s *snappyReader) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.src == nil {
			return 0, io.EOF
		}
		var l [4]byte
		switch k, err := io.ReadFull(s.src, l[:]); {
		case err == io.EOF:
			s.err = io.EOF
			continue
		case err == io.ErrUnexpectedEOF:
			s.err = fmt.Errorf("xerial framing: %d trailing bytes, want a 4-byte chunk length", k)
			continue
		case err != nil:
			s.err = err
			continue
		}
		n := int64(binary.BigEndian.Uint32(l[:]))
		if n > maxEncodedLen(s.left) {
			s.err = fmt.Errorf("xerial framing: chunk length %d is more than %d decompressed bytes can take: %w", n, s.left, errTooLarge)
			continue
		}
		k, err := s.readChunk(s.src, n)
		if err != nil {
			s.err = err
			continue
		}
		if k < n {
			s.err = fmt.Errorf("xerial framing: chunk length %d, only %d bytes left", n, k)
			continue
		}
		s.out, s.err = snappyBlock(s.chunk.Bytes(), s.left)
		s.left -= int64(len(s.out))
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
var zstdPool = sync.Pool{New: func() any { return newZstdDecoder(zstdMaxWindow) }}

// newZstdDecoder returns a synchronous low-memory decoder refusing frames
// whose window exceeds window bytes.
func newZstdDecoder(window uint64) *zstd.Decoder {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(window),
		zstd.WithDecoderMaxMemory(zstdMaxWindow))
	if err != nil {
		// Only invalid options fail; these are constant.
		panic("loader: zstd.NewReader: " + err.Error())
	}
	return d
}

// zstdMaxWindow is the largest window accepted: zstd's level 19-22 windows
// reach 8-128 MiB, but Kafka producers use the default level 3 (2 MiB).
const zstdMaxWindow = 64 << 20

// fixLZ4Stream is fixLZ4HeaderChecksum over the start of a stream: an LZ4
// frame header is at most 19 bytes.
func fixLZ4Stream(src io.Reader) io.Reader {
	head := make([]byte, 19)
	n, err := io.ReadFull(src, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return io.MultiReader(bytes.NewReader(head[:n]), &errReader{err})
	}
	return io.MultiReader(bytes.NewReader(fixLZ4HeaderChecksum(head[:n])), src)
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }

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
