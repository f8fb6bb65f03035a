//go:build linux

// Command scanmodes walks the batch headers of one .log file in one of the
// ways a scan can reach them and prints the CPU it took (getrusage), for
// scripts/bench-scan-batches.sh:
//
//	pread     pread blocks of -bs bytes (what the loader does)
//	pread2    the same on two goroutines, each a half of the file cut at
//	          the .index entry past its middle (a segment cut in two
//	          parts): the least a scan on two cores pays, decoding nothing
//	hdr       one pread of 61 bytes per header
//	mmap      a read-only mapping faulted in as the walk touches it
//	          (MADV_WILLNEED; what the loader did before)
//	populate  the mapping populated up front (MADV_POPULATE_READ)
//	mmapk     the mapping (faulted in, no advice) walked -k chains at a
//	          time (one per .index entry, a header of each per round), so
//	          that k header loads are in flight instead of one
//	mmapk2    the same on two goroutines, each a half of the chains
//	mmappf    the mapping walked as one chain that loads, as it passes each
//	          .index entry, the header -k entries ahead (a prefetch from
//	          the index: the page walk and that header's miss in flight)
//	mmappf2   the same on two goroutines
//	mix       -frac of the file by pread on one goroutine, the rest
//	          walked in the mapping -k chains at a time on another (the
//	          copy is bound by memory bandwidth, the walk by misses)
//	chunk     mappings of -bs bytes at a time, MAP_POPULATE, unmapped after
//	fresh     no walk: the first write to each page of 64 bytes per batch
//	          (the .index's batches are estimated from the file size and
//	          the first 8 MiB) of fresh memory advised MADV_HUGEPAGE, as
//	          the loader's batch array (txnindex.adviseHugePages): the
//	          memory a scan keeps and cat does not
//
// It only follows offsets and sizes: the cost of reaching the headers, not of
// decoding them.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

const madvPopulateRead = 22 // MADV_POPULATE_READ, Linux 5.14

// walk follows the batch sizes in d from its start and returns where the
// last whole batch ends.
func walk(d []byte, sum *int64) int64 {
	pos := int64(0)
	for pos+17 <= int64(len(d)) {
		l := int64(binary.BigEndian.Uint32(d[pos+8:]))
		if l < 14 || pos+12+l > int64(len(d)) {
			break
		}
		*sum += int64(binary.BigEndian.Uint64(d[pos:])) + int64(d[pos+16])
		pos += 12 + l
	}
	return pos
}

// walkK follows the batch chains between consecutive starts, k chains at a
// time, one header of each per round.
func walkK(d []byte, starts []int64, k int, sum *int64) {
	pos := make([]int64, k)
	end := make([]int64, k)
	for c := 0; c+1 < len(starts); c += k {
		n := min(k, len(starts)-1-c)
		for i := 0; i < n; i++ {
			pos[i], end[i] = starts[c+i], starts[c+i+1]
		}
		for live := n; live > 0; {
			live = 0
			for i := 0; i < n; i++ {
				p := pos[i]
				if p+17 > end[i] {
					continue
				}
				live++
				*sum += int64(binary.BigEndian.Uint64(d[p:])) + int64(d[p+16])
				pos[i] = p + 12 + int64(binary.BigEndian.Uint32(d[p+8:]))
			}
		}
	}
}

// walkAhead follows the chain from starts[0] to the last start, touching
// the header at the .index position ahead entries past the chain's, so the
// page walk and the cache miss of that header are in flight while the chain
// waits on its own.
func walkAhead(d []byte, starts []int64, ahead int, sum *int64) {
	var touch int64
	pos, end := starts[0], starts[len(starts)-1]
	j := 0
	for pos+17 <= end {
		for j+1 < len(starts) && starts[j] <= pos {
			j++
			if t := j + ahead; t < len(starts)-1 {
				touch += int64(d[starts[t]+16])
			}
		}
		*sum += int64(binary.BigEndian.Uint64(d[pos:])) + int64(d[pos+16])
		pos += 12 + int64(binary.BigEndian.Uint32(d[pos+8:]))
	}
	*sum += touch & 1
}

// indexPositions returns the positions of the .index beside the .log at
// path, in file order up to its zero-filled tail.
func indexPositions(path string) []int64 {
	idx, err := os.ReadFile(strings.TrimSuffix(path, ".log") + ".index")
	if err != nil {
		log.Fatal(err)
	}
	var ps []int64
	for i := 0; i+8 <= len(idx); i += 8 {
		if i > 0 && binary.BigEndian.Uint32(idx[i:]) == 0 {
			break
		}
		ps = append(ps, int64(binary.BigEndian.Uint32(idx[i+4:])))
	}
	return ps
}

// preadWalk walks [from, to) of f with pread blocks of buf's size.
func preadWalk(f *os.File, from, to int64, buf []byte, sum *int64) {
	for pos := from; pos < to; {
		k, _ := f.ReadAt(buf[:min(int64(len(buf)), to-pos)], pos)
		used := walk(buf[:k], sum)
		if used == 0 {
			break
		}
		pos += used
	}
}

func main() {
	mode := flag.String("mode", "pread", "pread|pread2|hdr|mmap|populate|mmapk|mmapk2|mix|chunk|fresh")
	k := flag.Int("k", 16, "chains walked at once (mmapk)")
	frac := flag.Float64("frac", 0.5, "share of the file read by pread (mix)")
	bs := flag.Int("bs", 256<<10, "block (pread) or mapping (chunk) size")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: scanmodes [-mode M] [-bs N] FILE.log")
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		log.Fatal(err)
	}
	size := st.Size()
	t0 := time.Now()
	var sum int64
	switch *mode {
	case "pread":
		preadWalk(f, 0, size, make([]byte, *bs), &sum)
	case "pread2":
		cut := size
		for _, p := range indexPositions(flag.Arg(0)) {
			if p >= size/2 {
				cut = p
				break
			}
		}
		var sums [2]int64
		var wg sync.WaitGroup
		for h, r := range [][2]int64{{0, cut}, {cut, size}} {
			wg.Go(func() { preadWalk(f, r[0], r[1], make([]byte, *bs), &sums[h]) })
		}
		wg.Wait()
		sum = sums[0] + sums[1]
	case "hdr":
		buf := make([]byte, 61)
		for pos := int64(0); pos+61 <= size; {
			if _, err := f.ReadAt(buf, pos); err != nil {
				break
			}
			sum += int64(binary.BigEndian.Uint64(buf)) + int64(buf[16])
			pos += 12 + int64(binary.BigEndian.Uint32(buf[8:]))
		}
	case "mmap", "populate":
		d, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			log.Fatal(err)
		}
		advice := syscall.MADV_WILLNEED
		if *mode == "populate" {
			advice = madvPopulateRead
		}
		if err := syscall.Madvise(d, advice); err != nil {
			log.Fatal(err)
		}
		walk(d, &sum)
		_ = syscall.Munmap(d)
	case "mmapk", "mmapk2":
		d, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			log.Fatal(err)
		}
		starts := []int64{0}
		for _, p := range indexPositions(flag.Arg(0)) {
			if p > starts[len(starts)-1] && p < size {
				starts = append(starts, p)
			}
		}
		starts = append(starts, size)
		if *mode == "mmapk" {
			walkK(d, starts, *k, &sum)
		} else {
			h := len(starts) / 2
			var sums [2]int64
			var wg sync.WaitGroup
			for i, ss := range [][]int64{starts[:h+1], starts[h:]} {
				wg.Go(func() { walkK(d, ss, *k, &sums[i]) })
			}
			wg.Wait()
			sum = sums[0] + sums[1]
		}
		_ = syscall.Munmap(d)
	case "mix":
		// one half read by pread, the other walked in a mapping, at once:
		// the copy is bound by memory bandwidth, the walk by page walks.
		d, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			log.Fatal(err)
		}
		cutAt := int64(float64(size) * *frac)
		starts := []int64{}
		cut := size
		for _, p := range indexPositions(flag.Arg(0)) {
			if p >= cutAt && cut == size {
				cut = p
			}
			if p >= cut && p < size && (len(starts) == 0 || p > starts[len(starts)-1]) {
				starts = append(starts, p)
			}
		}
		starts = append(starts, size)
		var sums [2]int64
		var wg sync.WaitGroup
		wg.Go(func() { preadWalk(f, 0, cut, make([]byte, *bs), &sums[0]) })
		wg.Go(func() { walkK(d, starts, *k, &sums[1]) })
		wg.Wait()
		sum = sums[0] + sums[1]
		_ = syscall.Munmap(d)
	case "mmappf", "mmappf2":
		d, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			log.Fatal(err)
		}
		starts := []int64{0}
		for _, p := range indexPositions(flag.Arg(0)) {
			if p > starts[len(starts)-1] && p < size {
				starts = append(starts, p)
			}
		}
		starts = append(starts, size)
		if *mode == "mmappf" {
			walkAhead(d, starts, *k, &sum)
		} else {
			h := len(starts) / 2
			var sums [2]int64
			var wg sync.WaitGroup
			for i, ss := range [][]int64{starts[:h+1], starts[h:]} {
				wg.Go(func() { walkAhead(d, ss, *k, &sums[i]) })
			}
			wg.Wait()
			sum = sums[0] + sums[1]
		}
		_ = syscall.Munmap(d)
	case "fresh":
		// The batches a scan keeps: 64 bytes each, counted in the
		// file's first 8 MiB and scaled to its size.
		head := make([]byte, min(size, 8<<20))
		k, _ := f.ReadAt(head, 0)
		var n int64
		for pos := int64(0); pos+12 <= int64(k); n++ {
			pos += 12 + int64(binary.BigEndian.Uint32(head[pos+8:]))
		}
		bytes := int((n*size/max(int64(k), 1))*64) + 2<<20
		t0 = time.Now()
		d, err := syscall.Mmap(-1, 0, bytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			log.Fatal(err)
		}
		_ = syscall.Madvise(d, 14) // MADV_HUGEPAGE
		for i := 0; i < len(d); i += 4096 {
			d[i] = 1
		}
		sum = int64(len(d) >> 20) // MiB touched
		_ = syscall.Munmap(d)
	case "chunk":
		for pos := int64(0); pos < size; {
			al := pos &^ 4095
			c := min(int64(*bs), size-pos)
			d, err := syscall.Mmap(int(f.Fd()), al, int(c+pos-al), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
			if err != nil {
				log.Fatal(err)
			}
			used := walk(d[pos-al:], &sum)
			_ = syscall.Munmap(d)
			if used == 0 {
				break
			}
			pos += used
		}
	default:
		log.Fatalf("unknown mode %q", *mode)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	fmt.Printf("%s wall %.3f s, user %.3f s, sys %.3f s, peak RSS %d MB (checksum %d)\n", *mode, time.Since(t0).Seconds(),
		cpu(ru.Utime), cpu(ru.Stime), ru.Maxrss/1024, sum%1000)
}
