package main

import (
	"os"
	"runtime/debug"

	"github.com/txnscope/txnscope/segsum"
)

// oneShotGCPercent is the collector's GOGC for the commands that load,
// answer and exit (decide, diagnose, inspect, export). They keep almost all
// they allocate until they exit (the batches, the built log), so at the
// default GOGC=100 the collector runs cycle after cycle over a heap that
// only grows, and the scavenger hands back pages that the next allocations
// fault in again (on the development VM a page fault costs 5-15 µs).
// Measured on a 7.6 GiB partition of 1 KiB batches (scripts/bench-diagnose.sh's),
// nothing else running, alternating: the full replay 2.9-3.0 s at GOGC=100
// against 2.5 s; the seeded diagnose within the noise (0.63 s median both);
// peak RSS the same within 3% (2.84-2.91 GB, 243 MB), the garbage being
// small beside what is kept.
const oneShotGCPercent = 400

// oneShotGC sets the collector for a one-shot command (args as main gets
// them), unless GOGC or GOMEMLIMIT says otherwise: GOGC=oneShotGCPercent,
// and a memory limit of --max-memory's default (a quarter of the machine's
// memory) so that the laxer GOGC never lets garbage grow past it. serve
// keeps the defaults, which segsum's --max-memory budget assumes; so do the
// tests, which call run, not main.
func oneShotGC(args []string) {
	if len(args) == 0 {
		return
	}
	switch args[0] {
	case "decide", "diagnose", "inspect", "export":
	default:
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(oneShotGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(segsum.DefaultMaxMemory())
	}
}
