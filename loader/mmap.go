package loader

import (
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"time"
)

// Mapping a segment for its header scan. A header-only scan of batches of
// a few KiB or more reads one header per page or fewer: reading the mapped
// file touches just those (the kernel maps 16 pages a fault), where pread
// copies every byte out of the page cache first, which is what cat costs.
// For 1 KiB batches the copy is cheaper: it streams the bytes through the
// cache, while a walk of the mapping waits on a memory load per header
// (scripts/bench-scan-batches.sh, the scanmodes lines: 1 GiB of 1 KiB
// batches, mapped 0.12 s against pread 0.05 s; of 4 KiB batches 0.04 s
// against 0.05 s; of 64 KiB, 0.01 s against 0.04 s). So a segment is mapped
// when the scan checks no CRC (which reads every byte anyway) and the mean
// batch size at its start is at least mmapMinMean; otherwise it is read
// with pread (scanFileContext says why that is the default).
//
// And only where a fault maps a large run of the file (largeFaults,
// probed at a quarter, half and three quarters of it): the page cache
// holds a file in folios of 1-2 MiB when it was written in large writes or
// read with a growing readahead, and a fault maps a whole folio; read back
// in pieces after an eviction, it holds small ones, and a fault maps 64
// KiB. 1 GiB of 4 KiB batches, 15 alternating runs: with 1 MiB faults the
// mapped scan took 0.030 s against pread's 0.043 s (cat 0.043 s); with
// 64 KiB faults 0.079 s against 0.055 s (cat 0.066 s).
//
// And only where touching the mapped pages costs less than reading them
// (touchesCheap, one 2 MiB region timed each way): under a hypervisor that
// shadows the guest's page tables, every page's first touch exits to the
// host however much a fault mapped, and 1 GiB of 4 KiB batches took 0.34 s
// mapped against 0.06 s with pread (cat 0.08 s).
//
// Nor is it mapped when the batches are so large that pread reads only
// their headers (window.spacing: a mean of more than an eighth of the
// read-ahead, mmapMaxMean): what a fault costs depends on how the page
// cache holds the file. Filled by large writes, it holds 2 MiB folios and a
// fault maps one whole (64 KiB batches: 0.009 s a GiB); read back through
// readahead after an eviction, it holds small ones, the kernel maps 64-200
// KiB a fault and a mapped walk of 64 KiB batches cost 0.030 s a GiB, where
// a pread per header costs 0.013 s either way.
//
// A file truncated while it is mapped raises SIGBUS on the pages past its
// new end: every goroutine reading the mapping does so with
// debug.SetPanicOnFault, and a fault is reported as the short read pread
// would have given (scanner.readFailed). The mapping is removed when the
// scan ends; records are read later with pread, as for any segment.

// mmapMinMean is the mean batch size from which a header scan maps the
// segment; mmapMinBytes the least a scan reads for it to be worth a
// mapping (variables for the tests).
var (
	mmapMinMean  int64 = 2 << 10
	mmapMinBytes int64 = 16 << 20
)

// mapsLarge is largeFaults and touchesCheap, a variable for the tests
// (which map whatever the page cache holds, on whatever machine).
var mapsLarge = func(fh *os.File, b []byte, offs []int64) bool {
	return largeFaults(b, offs) && touchesCheap(fh, b, offs[len(offs)/2])
}

// touchesCheap reports whether touching the pages of b, a mapping of fh,
// in the 2 MiB around off, a byte each, took less time than reading the
// same bytes of fh with pread in scanFill blocks (what the scan does
// instead). largeFaults counts what a fault maps, which is what a page
// costs where the processor walks the guest's page tables itself; under a
// hypervisor that shadows them (PVM, as on the development VM of session
// 17), the first touch of each 4 KiB page of a mapping exits to the host
// whatever the guest mapped: a walk of 1 GiB of 4 KiB batches took 0.42 s
// mapped against 0.06 s by pread (scanmodes), and the scan 4.3x cat. The
// two costs differ by 5x or more either way (a touch of a mapped page
// costs tens of ns on hardware paging, 1-2 µs shadowed; pread 2 MiB some
// 100 µs), so one timing of each decides. The pread buffer is touched
// first, as the scan's window is by then.
func touchesCheap(fh *os.File, b []byte, off int64) (cheap bool) {
	const page, region = 4096, 2 << 20
	lo := max(off&^(region-1), 0)
	hi := min(lo+region, int64(len(b)))
	if hi-lo < scanFill {
		return false
	}
	buf := make([]byte, scanFill)
	if _, err := fh.ReadAt(buf, lo); err != nil {
		return false
	}
	// The faster of two reads: a read slowed by preemption would make
	// the mapping look cheap, and a mapped walk under shadow paging costs
	// 4x cat, where pread chosen wrongly costs a little over 1x.
	read := time.Duration(math.MaxInt64)
	for range 2 {
		t0 := time.Now()
		for pos := lo; pos < hi; pos += scanFill {
			if _, err := fh.ReadAt(buf[:min(scanFill, hi-pos)], pos); err != nil && err != io.EOF {
				return false
			}
		}
		read = min(read, time.Since(t0))
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer onFault(func() { cheap = false })
	var sum byte
	t0 := time.Now()
	for pos := lo; pos < hi; pos += page {
		sum += b[pos]
	}
	touch := time.Since(t0)
	runtime.KeepAlive(sum)
	return touch < read
}

// largeFault is the least a fault must map for a mapped scan: 512 KiB, a
// 32nd of the faults of fault_around_bytes.
const largeFault = 512 << 10

// mmapMaxMean is the mean batch size from which the window reads headers
// only (window.at: fewer than 8 of them in a fill).
const mmapMaxMean = scanFill / 8

// mappedReaderAt is a read-only mapping of a file's first len(b) bytes.
type mappedReaderAt struct{ b []byte }

func (m *mappedReaderAt) ReadAt(p []byte, off int64) (n int, err error) {
	if off < 0 || off > int64(len(m.b)) {
		return 0, io.EOF
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer onFault(func() { n, err = 0, io.ErrUnexpectedEOF })
	n = copy(p, m.b[off:])
	if n < len(p) {
		err = io.EOF
	}
	return n, err
}

// onFault, deferred by a goroutine reading a mapping with
// debug.SetPanicOnFault set, runs then on a memory fault (the file shrank
// under the mapping) instead of the panic; any other panic goes on.
func onFault(then func()) {
	if r := recover(); r != nil {
		if _, fault := r.(interface{ Addr() uintptr }); !fault {
			panic(r)
		}
		then()
	}
}

// scanReader is what a header scan of fh's [from, size) reads: a mapping
// of the file when o and the batches there make it worth one (see above),
// else fh itself. done removes the mapping, in the background.
func scanReader(fh *os.File, size, from int64, o ScanOptions) (r io.ReaderAt, done func()) {
	if o.VerifyCRC || size-from < mmapMinBytes || size > 1<<31 {
		return fh, func() {}
	}
	if m := sampleMean(fh, from, size); m < mmapMinMean || m > mmapMaxMean {
		return fh, func() {}
	}
	b, err := mapFile(fh, size)
	if err != nil {
		return fh, func() {}
	}
	// Probed inside: the file's last folio is a smaller one.
	n := size - from
	if !mapsLarge(fh, b, []int64{from + n/4, from + n/2, from + n*3/4}) {
		unmapFile(b)
		return fh, func() {}
	}
	// Removing the mapping tears down a page table entry for every page
	// faulted in (a 1 GiB segment of 4 KiB batches: 15 ms), which nothing
	// waits for: nothing reads the mapping once the scan is done.
	return &mappedReaderAt{b}, func() { go unmapFile(b) }
}

// mapped is the mapping r reads, nil if r is not one.
func mapped(r io.ReaderAt) []byte {
	if m, ok := r.(*mappedReaderAt); ok {
		return m.b
	}
	return nil
}

// scanWindow is a scan's window over the first size bytes of r: over the
// mapping itself when r is one.
func scanWindow(r io.ReaderAt, size int64) window {
	m := mapped(r)
	return window{r: r, size: size, fill: scanFill, data: m, mappedFile: m != nil}
}
