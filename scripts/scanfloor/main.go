// Command scanfloor is an experiment, not a loader: the least a header
// scan of a partition directory's .log files can do in Go, to show what
// loader's scan costs above it. Every .log is read whole with 256 KiB
// preads into one buffer (as loader's window does), each v2 header is
// parsed into a txnindex.Batch appended to ONE slice shared by all
// segments and pre-sized from the directory's bytes (no per-segment slices,
// no copy into a partition slice afterwards), and txnindex.Build runs on
// the result. It skips everything loader checks that does not cost time
// (damage reporting, legacy magic, compressed markers).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"

	"github.com/txnscope/txnscope/txnindex"
)

func main() {
	avg := flag.Int64("avg", 2048, "expected average batch size, for the initial capacity")
	thp := flag.Bool("thp", false, "allocate the batch array outside the Go heap with mmap and MADV_HUGEPAGE (txnindex.Batch holds no pointers, so the GC need not see it)")
	flag.Parse()
	segs, err := filepath.Glob(filepath.Join(flag.Arg(0), "*.log"))
	if err != nil || len(segs) == 0 {
		log.Fatalf("no .log in %s", flag.Arg(0))
	}
	t0 := time.Now()
	var total int64
	for _, s := range segs {
		if st, err := os.Stat(s); err == nil {
			total += st.Size()
		}
	}
	n := int(total / *avg + 1024)
	var batches []txnindex.Batch
	if *thp {
		mem, err := syscall.Mmap(-1, 0, n*int(unsafe.Sizeof(txnindex.Batch{})), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			log.Fatal(err)
		}
		syscall.Madvise(mem, 14) // MADV_HUGEPAGE
		batches = unsafe.Slice((*txnindex.Batch)(unsafe.Pointer(&mem[0])), n)[:0]
	} else {
		batches = make([]txnindex.Batch, 0, n)
	}
	p := &txnindex.Partition{Topic: "bench", LogStartOffset: -1, HighWatermark: -1}
	buf := make([]byte, 256<<10)
	for si, s := range segs {
		f, err := os.Open(s)
		if err != nil {
			log.Fatal(err)
		}
		st, _ := f.Stat()
		var base int64
		fmt.Sscanf(filepath.Base(s), "%020d.log", &base)
		p.Segments = append(p.Segments, txnindex.Segment{Name: filepath.Base(s), BaseOffset: base, Size: st.Size()})
		var start, pos int64 // buf holds [start, start+n)
		n := 0
		for pos < st.Size() {
			if pos+61 > start+int64(n) {
				k, err := f.ReadAt(buf, pos)
				if err != nil && err != io.EOF {
					log.Fatal(err)
				}
				start, n = pos, k
			}
			h := buf[pos-start:]
			size := int64(binary.BigEndian.Uint32(h[8:])) + 12
			b := txnindex.BatchFields{
				BaseOffset: int64(binary.BigEndian.Uint64(h)), PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(h[12:])), Magic: int8(h[16]),
				Attributes: int16(h[22]), BaseTimestamp: int64(binary.BigEndian.Uint64(h[27:])), MaxTimestamp: int64(binary.BigEndian.Uint64(h[35:])),
				ProducerID: txnindex.ProducerID(binary.BigEndian.Uint64(h[43:])), ProducerEpoch: int16(binary.BigEndian.Uint16(h[51:])),
				BaseSequence: int32(binary.BigEndian.Uint32(h[53:])), Records: int32(binary.BigEndian.Uint32(h[57:])),
				Position: pos, Size: int32(size), Segment: int32(si), Control: txnindex.ControlNone, CoordinatorEpoch: -1,
			}.Batch()
			b.SetLastOffset(b.BaseOffset + int64(int32(binary.BigEndian.Uint32(h[23:]))))
			if b.IsControl() {
				// A broker-written marker: key (version, type) at a
				// fixed place when its varints are one byte each.
				if pos+78 > start+int64(n) {
					k, _ := f.ReadAt(buf, pos)
					start, n, h = pos, k, buf[:k]
				}
				b.SetControl(txnindex.ParseControlType(int16(binary.BigEndian.Uint16(h[61+6:]))))
			}
			if len(batches) == cap(batches) && *thp {
				log.Fatal("scanfloor: -avg too large for this directory")
			}
			batches = append(batches, b)
			pos += size
		}
		f.Close()
	}
	p.Batches = batches
	t1 := time.Now()
	l := txnindex.Build(p)
	fmt.Fprintf(os.Stderr, "scan %v, build %v\n%s\n", t1.Sub(t0), time.Since(t1), l)
}
