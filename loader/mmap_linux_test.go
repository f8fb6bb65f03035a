//go:build linux

package loader

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestLargeFaultsAgreesWithSmaps: whatever folios the page cache holds a
// file in, largeFaults' answer from /proc/self/pagemap after touching one
// place of a fresh mapping is the kernel's own account of that mapping in
// /proc/self/smaps: its Rss, what the one fault mapped, is largeFault or
// more exactly when largeFaults says yes. The file is mapped as written in
// one 8 MiB write (large folios where the filesystem has them), as read
// back 4 KiB at a time after being dropped from the page cache, and in
// tmpfs without huge pages (4 KiB pages: both say no).
func TestLargeFaultsAgreesWithSmaps(t *testing.T) {
	check := func(what, path string) {
		t.Helper()
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		b, err := mapFile(fh, 8<<20)
		if err != nil {
			t.Fatal(err)
		}
		defer unmapFile(b)
		base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		large := largeFaults(b, []int64{4<<20 + 12345})
		kb, err := smapsRss(base)
		if err != nil {
			t.Fatal(err)
		}
		if large != (kb<<10 >= largeFault) {
			t.Fatalf("%s: largeFaults %v, smaps Rss %d kB after one fault", what, large, kb)
		}
		t.Logf("%s: largeFaults %v, one fault mapped %d kB", what, large, kb)
		if largeFaults(b, []int64{int64(len(b))}) {
			t.Errorf("%s: a probe past the mapping is not refused", what)
		}
	}
	data := bytes.Repeat([]byte{1}, 8<<20)
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	check("written in one write", path)
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Sync(); err != nil { // written back first: dirty pages stay
		t.Fatal(err)
	}
	const fadvDontneed = 4
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, fh.Fd(), 0, 0, fadvDontneed, 0, 0); e != 0 {
		t.Fatal(e)
	}
	buf := make([]byte, 4096)
	for off := int64(0); off < 8<<20; off += 4096 {
		if _, err := fh.ReadAt(buf, off); err != nil {
			t.Fatal(err)
		}
	}
	fh.Close()
	check("read back in 4 KiB reads", path)
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		shm := filepath.Join("/dev/shm", fmt.Sprintf("txnscope-test-%d", os.Getpid()))
		if err := os.WriteFile(shm, data, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(shm)
		check("in tmpfs", shm)
	}
}

// smapsRss is the Rss of the mapping starting at addr in /proc/self/smaps,
// in kB.
func smapsRss(addr uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if fs := strings.Fields(line); len(fs) >= 5 && strings.Contains(fs[0], "-") {
			lo, _, _ := strings.Cut(fs[0], "-")
			v, err := strconv.ParseUint(lo, 16, 64)
			in = err == nil && uintptr(v) == addr
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			return strconv.Atoi(strings.Fields(line)[1])
		}
	}
	return 0, fmt.Errorf("no mapping at %#x in /proc/self/smaps", addr)
}

// TestTouchesCheapAgreesWithAWholeWalk: touchesCheap's one timing of 2 MiB
// decides as a walk of a whole fresh mapping (a byte of every page) against
// pread of the whole file in scanFill blocks does, where those two differ
// by 3x or more (on hardware paging the walk is several times cheaper;
// under shadow paging, as on the development VM, several times dearer).
// And it says no, without a fault, for a file truncated under the mapping.
func TestTouchesCheapAgreesWithAWholeWalk(t *testing.T) {
	const size = 32 << 20
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte{1}, size), 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	probe, err := mapFile(fh, size)
	if err != nil {
		t.Fatal(err)
	}
	got := touchesCheap(fh, probe, size/2)
	// One walk, of a mapping at a fresh address (the probe's is kept
	// until then): under shadow paging a mapping placed where one was
	// just removed can find its pages' translations still there.
	b, err := mapFile(fh, size)
	if err != nil {
		t.Fatal(err)
	}
	var sum byte
	t0 := time.Now()
	for pos := 0; pos < size; pos += 4096 {
		sum += b[pos]
	}
	walk := time.Since(t0)
	runtime.KeepAlive(sum)
	unmapFile(b)
	unmapFile(probe)
	read := time.Duration(1 << 62)
	buf := make([]byte, scanFill)
	fh.ReadAt(buf, 0)
	for range 3 {
		t0 := time.Now()
		for pos := int64(0); pos < size; pos += scanFill {
			fh.ReadAt(buf, pos)
		}
		read = min(read, time.Since(t0))
	}
	t.Logf("touchesCheap %v; whole file: mapped walk %v, pread %v", got, walk, read)
	if walk*3 <= read || read*3 <= walk {
		if want := walk < read; got != want {
			t.Errorf("touchesCheap %v, but the whole walk took %v against pread's %v", got, walk, read)
		}
	}

	b, err = mapFile(fh, size)
	if err != nil {
		t.Fatal(err)
	}
	defer unmapFile(b)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if touchesCheap(fh, b, size/2) {
		t.Error("a truncated file's mapping is said cheap to touch")
	}
}
