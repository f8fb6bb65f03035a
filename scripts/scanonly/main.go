// Command scanonly is txnscope's decision-path load of a partition
// directory and nothing else: the header-only segment scan
// (loader.HeaderScanOptions) and txnindex.Build. With -mem it reports what
// the loaded partition keeps in memory.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
	"unsafe"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

func main() {
	mem := flag.Bool("mem", false, "report heap kept per batch (forces a GC after loading)")
	verbose := flag.Bool("v", false, "print the time of each phase")
	repeat := flag.Int("n", 1, "scan this many times (the last is kept)")
	heapprofile := flag.String("heapprofile", "", "with -mem, write a heap profile of what the loaded partition keeps to this file")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	build := flag.Bool("build", true, "run txnindex.Build after the scan")
	verify := flag.Bool("crc", false, "use DefaultScanOptions (read every batch whole, check CRCs) instead of the header scan")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: scanonly [-mem] [-crc] PARTITION_DIR")
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	var before runtime.MemStats
	if *mem {
		runtime.GC()
		runtime.ReadMemStats(&before)
	}
	o := loader.HeaderScanOptions
	if *verify {
		o = loader.DefaultScanOptions
	}
	var p *loader.Partition
	var err error
	t0, t1 := time.Now(), time.Now()
	for range *repeat {
		t0 = time.Now()
		p, err = loader.OpenPartitionWith(flag.Arg(0), o)
		t1 = time.Now()
		if err == nil && *verbose && *repeat > 1 {
			fmt.Fprintf(os.Stderr, "scan %v\n", t1.Sub(t0))
		}
	}
	if err != nil {
		log.Fatal(err)
	}
	if len(p.Damage) != 0 {
		log.Fatalf("damage: %v", p.Damage)
	}
	if !*build {
		fmt.Fprintf(os.Stderr, "%d segments, %d batches\n", len(p.Segments), len(p.Input.Batches))
		return
	}
	l := txnindex.Build(p.Input)
	if *verbose {
		fmt.Fprintf(os.Stderr, "scan %v, build %v\n", t1.Sub(t0), time.Since(t1))
	}
	fmt.Fprintln(os.Stderr, l.String())
	if *mem {
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		n := len(l.Batches)
		kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		fmt.Printf("batches %d\nsizeof_batch %d\nper_batch_index_bytes %d\nheap_kept_bytes %d\nheap_kept_per_batch %.1f\ntxns %d\nsizeof_txn %d\n",
			n, unsafe.Sizeof(txnindex.Batch{}), unsafe.Sizeof(int32(0)), kept, float64(kept)/float64(max(n, 1)), len(l.Txns), unsafe.Sizeof(txnindex.Txn{}))
		if *heapprofile != "" {
			f, err := os.Create(*heapprofile)
			if err != nil {
				log.Fatal(err)
			}
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				log.Fatal(err)
			}
			f.Close()
		}
		runtime.KeepAlive(p)
		runtime.KeepAlive(l)
	}
}
