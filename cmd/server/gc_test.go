package main

import (
	"runtime/debug"
	"testing"
)

// TestOneShotGC: the one-shot commands collect at oneShotGCPercent under a
// memory limit; serve and an empty command line keep the defaults; GOGC in
// the environment wins.
func TestOneShotGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	prev := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prev); debug.SetMemoryLimit(prevLimit) })
	for _, c := range []struct {
		args  []string
		want  int
		limit bool
	}{
		{[]string{"diagnose", "DIR"}, oneShotGCPercent, true},
		{[]string{"decide"}, oneShotGCPercent, true},
		{[]string{"serve", "--load", "DIR"}, 100, false},
		{nil, 100, false},
	} {
		debug.SetGCPercent(100)
		const none = 1<<63 - 1
		debug.SetMemoryLimit(none)
		oneShotGC(c.args)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("%q: GOGC %d, want %d", c.args, got, c.want)
		}
		if got := debug.SetMemoryLimit(-1); (got != none) != c.limit {
			t.Errorf("%q: memory limit %d, want one set: %v", c.args, got, c.limit)
		}
	}
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(100)
	oneShotGC([]string{"diagnose"})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=150 in the environment: oneShotGC set %d", got)
	}
}
