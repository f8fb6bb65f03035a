// Command diagnosephases times the phases of a seeded `txnscope diagnose` of
// a partition directory in one process: the load from the newest producer
// snapshot (loader.OpenPartitionTail, with the CPU it took on all cores),
// txnindex.Build and diagnosis.Diagnose. -n repeats it (the first run of a
// process pays the VM's first-touch page faults; later ones reuse the Go
// heap, which zeroes what it hands out again).
//
//	go run ./scripts/diagnosephases -n 5 /tmp/bd/logdir/bench-0
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"syscall"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

func main() {
	n := flag.Int("n", 1, "runs")
	position := flag.Int64("position", -1, "diagnose --position")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: diagnosephases [-n RUNS] [-position N] PARTITION_DIR")
	}
	for range *n {
		c0, t0 := cpu(), time.Now()
		p, err := loader.OpenPartitionTail(context.Background(), flag.Arg(0), loader.DefaultScanOptions, loader.TailOptions{Position: *position})
		if err != nil {
			log.Fatal(err)
		}
		t1, c1 := time.Now(), cpu()
		l := txnindex.Build(p.Input)
		t2 := time.Now()
		d := diagnosis.Diagnose(l, diagnosis.Options{Position: *position, Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
		t3 := time.Now()
		fmt.Printf("%d batches kept: load %v (cpu %v), build %v, diagnose %v: %s\n",
			len(p.Input.Batches), t1.Sub(t0).Round(time.Millisecond), (c1 - c0).Round(time.Millisecond),
			t2.Sub(t1).Round(time.Millisecond), t3.Sub(t2).Round(time.Millisecond), present.Status(d))
	}
}

// cpu is the process's user and system time so far.
func cpu() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
