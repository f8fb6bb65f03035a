//go:build linux

package dumplog

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used: unlike wall time, it
// hardly moves when other processes load the machine.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestReadLinearInSegments: reading 8× the segments takes well under the
// 64× a quadratic reader needs (80K segments took
// 35.8 s; this test measured 43-46× before the fix, about 10× after). It
// compares CPU time, the small dump's averaged over four reads, the large
// one's measured again while over the bound.
func TestReadLinearInSegments(t *testing.T) {
	const n, bound = 2000, 20.0
	small, big := manySegments(n), manySegments(8*n)
	readAll(t, small, n) // warm up
	start := cpuTime(t)
	for range 4 {
		readAll(t, small, n)
	}
	ts := (cpuTime(t) - start) / 4
	tb := time.Duration(1<<63 - 1)
	ratio := 0.0
	for range 3 {
		start := cpuTime(t)
		readAll(t, big, 8*n)
		tb = min(tb, cpuTime(t)-start)
		if ratio = float64(tb) / float64(ts); ratio < bound {
			break
		}
	}
	t.Logf("CPU time: %d segments %v, %d segments %v: %.1f×", n, ts, 8*n, tb, ratio)
	if ratio >= bound {
		t.Fatalf("8× the segments took %.1f× the CPU time (%v vs %v): not linear", ratio, tb, ts)
	}
}
