package gen

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// DirOptions control WriteDir. Zero fields take the defaults.
type DirOptions struct {
	Size         int64  // total bytes of .log data; default 1 GiB
	SegmentBytes int64  // roll a segment before it would exceed this; default 256 MiB
	Seed         uint64 // default 1
	Producers    int    // transactional producers; default 8
}

// DirStats describe what WriteDir wrote.
type DirStats struct {
	Dir                       string
	Segments                  []string
	Bytes                     int64
	Batches, DataBatches      int
	Commits, Aborts, NonTxn   int
	Compressed, Records, Open int
	NextOffset                int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// producer is a producer's state while WriteDir writes.
type producer struct {
	id      int64
	epoch   int16
	seq     int32
	inTxn   bool
	batches int // data batches in the current transaction
	target  int
}

// WriteDir writes a synthetic but realistic partition directory dir
// (created; its base name should be <topic>-<partition>) for benchmarks:
// Kafka-named .log segments of v2 record batches, mostly transactional
// data batches of 1 to 50 records (about 1 to 16 KiB each) from several
// interleaved producers, their COMMIT and ABORT markers, and some
// non-transactional idempotent batches, a tenth of the data batches
// compressed. No index files are written: loaders rebuild what they need.
func WriteDir(dir string, o DirOptions) (*DirStats, error) {
	if o.Size <= 0 {
		o.Size = 1 << 30
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 256 << 20
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Producers <= 0 {
		o.Producers = 8
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	// Payloads: incompressible bytes for most values, text for the
	// compressed batches (so codecs have something to do).
	noise := make([]byte, 1<<20)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	var text []byte
	for i := 0; len(text) < 1<<20; i++ {
		text = fmt.Appendf(text, `{"order":%d,"customer":"c-%d","sku":"sku-%d","qty":%d,"state":"PLACED"}`, i, r.IntN(100000), r.IntN(5000), 1+r.IntN(9))
	}
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer zw.Close()

	st := &DirStats{Dir: dir}
	txn := make([]*producer, o.Producers)
	for i := range txn {
		txn[i] = &producer{id: 1000 + int64(i), epoch: int16(i % 3)}
	}
	idem := []*producer{{id: 5000, epoch: 0}, {id: 5001, epoch: 0}}

	var (
		f       *os.File
		w       *bufio.Writer
		segSize int64
		off     int64
		ts      = int64(1_700_000_000_000)
		buf     []byte
		recs    []byte
	)
	closeSeg := func() error {
		if f == nil {
			return nil
		}
		if err := w.Flush(); err != nil {
			return err
		}
		return f.Close()
	}
	write := func(b []byte) error {
		if f == nil || segSize+int64(len(b)) > o.SegmentBytes {
			if err := closeSeg(); err != nil {
				return err
			}
			name := fmt.Sprintf("%020d.log", off)
			var err error
			if f, err = os.Create(filepath.Join(dir, name)); err != nil {
				return err
			}
			w = bufio.NewWriterSize(f, 1<<20)
			segSize = 0
			st.Segments = append(st.Segments, name)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		segSize += int64(len(b))
		st.Bytes += int64(len(b))
		st.Batches++
		return nil
	}

	for st.Bytes < o.Size {
		ts += int64(r.IntN(5))
		var p *producer
		transactional := r.IntN(100) >= 15
		if transactional {
			p = txn[r.IntN(len(txn))]
			if p.inTxn && p.batches >= p.target {
				// End the transaction: 90% commit, 10% abort.
				ctrl := int16(1)
				if r.IntN(10) == 0 {
					ctrl = 0
					st.Aborts++
				} else {
					st.Commits++
				}
				buf = marker(buf[:0], off, p, ctrl, ts)
				if err := write(buf); err != nil {
					return nil, err
				}
				off++
				p.inTxn = false
				continue
			}
			if !p.inTxn {
				p.inTxn, p.batches, p.target = true, 0, 1+r.IntN(6)
			}
			p.batches++
		} else {
			p = idem[r.IntN(len(idem))]
			st.NonTxn++
		}
		// 1-50 records of 20-600 bytes: batches of about 1-16 KiB.
		n := 1 + r.IntN(50)
		vlen := 20 + r.IntN(300)
		if n < 8 {
			vlen = 200 + r.IntN(1800)
		}
		codec := int16(0)
		src := noise
		if r.IntN(10) == 0 {
			codec, src = int16(3+r.IntN(2)), text // lz4 or zstd
		}
		recs = recs[:0]
		for i := 0; i < n; i++ {
			start := r.IntN(len(src) - vlen)
			recs = record(recs, int64(i), int32(i), fmt.Appendf(nil, "key-%d", r.IntN(1000)), src[start:start+vlen])
		}
		body := recs
		switch codec {
		case 3:
			var bb bytes.Buffer
			lw := lz4.NewWriter(&bb)
			lw.Write(recs)
			lw.Close()
			body = bb.Bytes()
		case 4:
			body = zw.EncodeAll(recs, nil)
		}
		if codec != 0 {
			st.Compressed++
		}
		attr := codec
		if transactional {
			attr |= 0x10
		}
		buf = header(buf[:0], off, attr, int32(n-1), ts, ts+int64(n), p.id, p.epoch, p.seq, int32(n), body)
		if err := write(buf); err != nil {
			return nil, err
		}
		p.seq += int32(n)
		off += int64(n)
		st.DataBatches++
		st.Records += n
	}
	if err := closeSeg(); err != nil {
		return nil, err
	}
	for _, p := range txn {
		if p.inTxn {
			st.Open++
		}
	}
	st.NextOffset = off
	return st, nil
}

func record(dst []byte, tsDelta int64, offDelta int32, key, value []byte) []byte {
	var body []byte
	body = append(body, 0) // attributes
	body = binary.AppendVarint(body, tsDelta)
	body = binary.AppendVarint(body, int64(offDelta))
	body = binary.AppendVarint(body, int64(len(key)))
	body = append(body, key...)
	body = binary.AppendVarint(body, int64(len(value)))
	body = append(body, value...)
	body = binary.AppendVarint(body, 0) // headers
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

// header appends a whole v2 batch: the 61-byte header, then body.
func header(dst []byte, base int64, attr int16, lastDelta int32, firstTS, maxTS, pid int64, epoch int16, seq, count int32, body []byte) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(base))
	dst = binary.BigEndian.AppendUint32(dst, uint32(49+len(body))) // bytes after the length field
	dst = binary.BigEndian.AppendUint32(dst, 7)                    // partition leader epoch
	dst = append(dst, 2)                                           // magic
	dst = binary.BigEndian.AppendUint32(dst, 0)                    // crc, patched below
	dst = binary.BigEndian.AppendUint16(dst, uint16(attr))
	dst = binary.BigEndian.AppendUint32(dst, uint32(lastDelta))
	dst = binary.BigEndian.AppendUint64(dst, uint64(firstTS))
	dst = binary.BigEndian.AppendUint64(dst, uint64(maxTS))
	dst = binary.BigEndian.AppendUint64(dst, uint64(pid))
	dst = binary.BigEndian.AppendUint16(dst, uint16(epoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(seq))
	dst = binary.BigEndian.AppendUint32(dst, uint32(count))
	dst = append(dst, body...)
	binary.BigEndian.PutUint32(dst[start+17:], crc32.Checksum(dst[start+21:], castagnoli))
	return dst
}

// marker appends an end-transaction control batch (ctrl 0 ABORT, 1 COMMIT).
func marker(dst []byte, off int64, p *producer, ctrl int16, ts int64) []byte {
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(ctrl))
	value := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 3) // version 0, coordinator epoch 3
	rec := record(nil, 0, 0, key, value)
	return header(dst, off, 0x30, 0, ts, ts, p.id, p.epoch, -1, 1, rec)
}
