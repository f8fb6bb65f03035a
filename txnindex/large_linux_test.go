//go:build linux

package txnindex

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags of the mapping of /proc/self/smaps that holds
// p, and the mapping's start.
func vmFlags(t *testing.T, p uintptr) (start uintptr, flags []string) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fs[0], "-"); ok && !strings.HasSuffix(fs[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				in = uintptr(a) <= p && p < uintptr(b)
				if in {
					start = uintptr(a)
				}
				continue
			}
		}
		if in && fs[0] == "VmFlags:" {
			return start, fs[1:]
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return 0, nil
}

// TestMakeLargeAdvisesEveryHugePageItTouches: the first and the last
// page of the slice are in memory advised for huge pages, whatever the
// slice's alignment. Before, the advice covered the aligned interior of an
// 8 KiB-aligned heap object: a 4 MB slice (a 1 GiB segment's .index
// entries) was advised over 2 MiB of it, or not at all under the old 4 MiB
// threshold.
func TestMakeLargeAdvisesEveryHugePageItTouches(t *testing.T) {
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || strings.Contains(string(b), "[never]") {
		t.Skip("transparent huge pages are off")
	}
	for _, n := range []int{131_072, 248_970, 1 << 20, 5_000_001} { // entries of 16 bytes
		s := MakeLarge[IndexEntry](n/2, n)
		if len(s) != n/2 || cap(s) != n {
			t.Fatalf("len %d cap %d, want %d %d", len(s), cap(s), n/2, n)
		}
		full := s[:cap(s)]
		for _, p := range []uintptr{uintptr(unsafe.Pointer(&full[0])), uintptr(unsafe.Pointer(&full[len(full)-1]))} {
			if _, flags := vmFlags(t, p); !strings.Contains(strings.Join(flags, " "), "hg") {
				t.Errorf("%d entries: the page at %#x is not advised for huge pages (VmFlags %v)", n, p, flags)
			}
		}
		for i, e := range full {
			if e != (IndexEntry{}) {
				t.Fatalf("entry %d not zero: %+v", i, e)
			}
		}
	}
	// Below 1 MiB: a plain slice.
	if s := MakeLarge[IndexEntry](0, 1000); cap(s) != 1000 {
		t.Errorf("small: cap %d", cap(s))
	}
}
