//go:build linux

package txnindex

import (
	"runtime"
	"syscall"
	"testing"
)

// threadCPU is the calling thread's CPU time (getrusage RUSAGE_THREAD).
func threadCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkDecideThreadCPU is BenchmarkDecide over 1M batches and the
// yield floor of BenchmarkDecideFloor, pass after pass in the same loop,
// timed by the thread's CPU time rather than the clock: on the shared
// 2-core machine the clock also counts the time other processes hold the
// core, which the two timings would not share alike. It reports both and
// their ratio.
func BenchmarkDecideThreadCPU(b *testing.B) {
	l := cachedBenchLog(1_000_000)
	n := float64(len(l.Batches))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range l.Decisions(ConsumeOptions{Isolation: ReadCommitted}) {
	}
	floor := func(yield func(Decision) bool) {
		for i := range l.Batches {
			bt := &l.Batches[i]
			d := Decision{From: bt.BaseOffset, To: bt.LastOffset(), Batch: bt, BatchIndex: int32(i), FetchOffset: -1}
			if bt.IsControl() {
				d.Verdict = Control
			}
			if !yield(d) {
				return
			}
		}
	}
	var decide, yield, delivered int64
	for b.Loop() {
		t0 := threadCPU()
		for d := range l.Decisions(ConsumeOptions{Isolation: ReadCommitted}) {
			if d.Verdict == Delivered {
				delivered += d.To - d.From + 1
			}
		}
		t1 := threadCPU()
		for d := range floor {
			if d.Verdict == Delivered {
				delivered += d.To - d.From + 1
			}
		}
		decide, yield = decide+t1-t0, yield+threadCPU()-t1
	}
	if delivered == 0 {
		b.Fatal("nothing delivered")
	}
	b.ReportMetric(float64(decide)/float64(b.N)/n, "cpu-ns/batch")
	b.ReportMetric(float64(yield)/float64(b.N)/n, "yield-cpu-ns/batch")
	b.ReportMetric(float64(decide)/float64(yield), "x-yield")
}
