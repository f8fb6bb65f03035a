package segsum

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// swapScenario has eight segments: an aborted transaction of a with data
// in the second and marker in the third, one of b (transactions v2)
// spanning the second to the fourth.
const swapScenario = `topic swaps
producer a transactional
producer b transactional tv2
plain 2
begin a
send a 2
roll
plain 3
begin b
send b 2
plain
roll
send a
abort a
send b
roll
commit b
plain 2
roll
plain
begin a
send a
roll
abort a
plain 2
roll
plain
roll
plain
`

// TestSwapAndCleanedAsLoader: a partition directory the broker left in
// the middle of a cleaning (LogLoader.load completes it on startup): a
// valid .swap (with its .index.swap, .timeindex.swap and .txnindex.swap)
// that replaces the second and third segments with a cleaned copy of them,
// a .cleaned file, and a .swap past it that the broker deletes. segsum's
// segments are the loader's (the swap in, the segments it replaces and the
// invalid swap out), its windows and overview equal a full pass, and
// nothing in the directory is written, renamed or deleted.
func TestSwapAndCleanedAsLoader(t *testing.T) {
	dir, bases := writeScenario(t, swapScenario)
	if len(bases) != 8 {
		t.Fatalf("%d segments, the scenario has 8", len(bases))
	}
	name := func(k int, ext string) string { return filepath.Join(dir, fmt.Sprintf("%020d%s", bases[k], ext)) }
	read := func(p string) []byte {
		data, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return data
	}
	write := func(p string, data []byte) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The cleaner's copy of segments 1 and 2: segment 1 without its
	// non-transactional batch of 3 records, then segment 2, as one
	// segment at segment 1's base offset.
	plain3 := func(b *txnindex.Batch) bool { return !b.HasProducerID() && b.Records == 3 }
	swap := append(dropBatches(t, read(name(1, ".log")), plain3), read(name(2, ".log"))...)
	if len(swap) == len(read(name(1, ".log")))+len(read(name(2, ".log"))) {
		t.Fatal("nothing cleaned from segment 1")
	}
	write(name(1, ".log.swap"), swap)
	write(name(1, ".index.swap"), nil)
	write(name(1, ".timeindex.swap"), nil)
	write(name(1, ".txnindex.swap"), append(read(name(1, ".txnindex")), read(name(2, ".txnindex"))...))
	// An unfinished cleaning of segment 4 (.cleaned) and a swap of
	// segment 5 past it, which LogLoader deletes (KAFKA-6264): segment
	// 5's .log stays.
	write(name(4, ".log.cleaned"), read(name(4, ".log")))
	write(name(5, ".log.swap"), dropBatches(t, read(name(5, ".log")), func(b *txnindex.Batch) bool { return !b.HasProducerID() }))
	before := listing(t, dir)

	p, err := loader.OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	var loaded []string
	for _, s := range p.Segments {
		loaded = append(loaded, s.Log.Name)
	}
	want := []string{filepath.Base(name(0, ".log")), filepath.Base(name(1, ".log.swap")), filepath.Base(name(3, ".log")),
		filepath.Base(name(4, ".log")), filepath.Base(name(5, ".log")), filepath.Base(name(6, ".log")), filepath.Base(name(7, ".log"))}
	if !slices.Equal(loaded, want) {
		t.Fatalf("the loader's segments %v, want %v", loaded, want)
	}
	if d := differ(t, dir, 1); d != "" {
		t.Fatal(d)
	}
	if after := listing(t, dir); after != before {
		t.Fatalf("the partition directory changed:\n%s\n%s", before, after)
	}
}

// dropBatches returns the batches of a segment's bytes that drop does not
// match, as the cleaner leaves a segment.
func dropBatches(t testing.TB, data []byte, drop func(*txnindex.Batch) bool) []byte {
	t.Helper()
	f, err := loader.NewSegment(bytes.NewReader(data), int64(len(data)), "x.log")
	if err != nil || len(f.Damage) > 0 {
		t.Fatal(err, f.Damage)
	}
	var out []byte
	pos := 0
	for i := range f.Batches {
		b := &f.Batches[i]
		if !drop(b) {
			out = append(out, data[pos:pos+int(b.Size)]...)
		}
		pos += int(b.Size)
	}
	return out
}
