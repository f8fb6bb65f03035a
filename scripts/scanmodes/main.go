//go:build linux

// Command scanmodes walks the batch headers of one .log file in one of the
// ways a scan can reach them and prints the CPU it took (getrusage), for
// scripts/bench-scan-batches.sh:
//
//	pread     pread blocks of -bs bytes (what the loader does)
//	hdr       one pread of 61 bytes per header
//	mmap      a read-only mapping faulted in as the walk touches it
//	          (MADV_WILLNEED; what the loader did before)
//	populate  the mapping populated up front (MADV_POPULATE_READ)
//	chunk     mappings of -bs bytes at a time, MAP_POPULATE, unmapped after
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

func main() {
	mode := flag.String("mode", "pread", "pread|hdr|mmap|populate|chunk")
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
		buf := make([]byte, *bs)
		for pos := int64(0); pos < size; {
			k, _ := f.ReadAt(buf[:min(int64(*bs), size-pos)], pos)
			used := walk(buf[:k], &sum)
			if used == 0 {
				break
			}
			pos += used
		}
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
