//go:build linux

package loader

import (
	"encoding/binary"
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"
)

// largeFaults reports whether a fault on b, a read-only mapping of a file,
// maps a large run of it (largeFault bytes or more) at each of offs: it
// touches a byte there and counts the pages of the mapping present in
// /proc/self/pagemap in the 2 MiB around it, which after one touch are
// what that fault mapped. The kernel maps the whole folio a fault lands in
// (up to a 2 MiB page), or fault_around_bytes (64 KiB) of smaller ones: the
// page cache holds a file written in large writes, or read with a growing
// readahead, in folios of 1-2 MiB, and one read back in pieces after an
// eviction in small ones. False when pagemap cannot be read, or a touch
// faults (the file shrank).
func largeFaults(b []byte, offs []int64) (large bool) {
	const page, region = 4096, 2 << 20
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return false
	}
	defer f.Close()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer onFault(func() { large = false })
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	entries := make([]byte, region/page*8)
	var touched byte
	defer runtime.KeepAlive(&touched) // the touches are not optimised away
	for _, off := range offs {
		if off < 0 || off >= int64(len(b)) {
			return false
		}
		touched += b[off]
		lo := max((base+uintptr(off))&^(region-1), base)
		hi := min(lo&^(region-1)+region, base+uintptr(len(b)))
		n := int((hi - lo + page - 1) / page)
		if _, err := f.ReadAt(entries[:n*8], int64(lo/page*8)); err != nil {
			return false
		}
		present := 0
		for i := 0; i < n; i++ {
			present += int(binary.LittleEndian.Uint64(entries[i*8:]) >> 63) // PM_PRESENT
		}
		if present*page < largeFault {
			return false
		}
	}
	return true
}
