package segsum

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// hangGuard is how long a test waits for something that must happen
// before it says it hung: a guard against a deadlock, not a timing.
const hangGuard = 2 * time.Minute

// TestPanNotBlockedByOtherScan: while one request's scan of a segment is
// stopped inside the scan (a hook that blocks until released), a pan over
// a segment the LRU holds is answered, for the consumer it was decided for
// and for another one (decided again from the LRU's log), and a second
// request for the segment being scanned waits for that scan instead of
// scanning it again.
func TestPanNotBlockedByOtherScan(t *testing.T) {
	dir := genPartition(t, gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 200 << 10, HangingFrom: -1, Seed: 21})
	st, err := Open(dir, Options{MaxMemory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sums, _, err := st.Summaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) < 4 {
		t.Fatalf("%d segments; the test wants 4", len(sums))
	}
	rc := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted}
	ru := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadUncommitted}
	if _, err := st.Window(ctx, 0, rc); err != nil {
		t.Fatal(err)
	}
	const slow = 2
	entered, joined, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once, joinOnce sync.Once
	st.scanHook = func(k int) {
		if k == slow {
			once.Do(func() { close(entered) })
			<-release
		}
	}
	st.joinHook = func(k int) {
		if k == slow {
			joinOnce.Do(func() { close(joined) })
		}
	}
	scansBefore := st.Scans()
	var wg sync.WaitGroup
	results := make([]*Window, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := st.Window(ctx, slow, rc)
			if err != nil {
				t.Error(err)
			}
			results[i] = w
		}()
	}
	select {
	case <-entered:
	case <-time.After(hangGuard):
		close(release)
		t.Fatal("the scan of the slow segment never started")
	}
	for _, o := range []txnindex.ConsumeOptions{rc, ru} {
		done := make(chan error, 1)
		go func() {
			_, err := st.Window(ctx, 0, o)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(hangGuard):
			close(release)
			t.Fatalf("%+v: the window of a segment in the LRU waited for the scan of segment %d", o, slow)
		}
	}
	// The second request for the slow segment waits for the scan under
	// way (released only once it has joined it, so that it cannot come
	// after the scan and find the window in the LRU).
	select {
	case <-joined:
	case <-time.After(hangGuard):
		close(release)
		t.Fatalf("the second request for segment %d did not join the scan under way", slow)
	}
	close(release)
	wg.Wait()
	if results[0] == nil || results[1] == nil || results[0].Log != results[1].Log {
		t.Fatalf("two requests for segment %d got windows %p and %p of logs that differ", slow, results[0], results[1])
	}
	if n := st.Scans() - scansBefore; n != 1 {
		t.Fatalf("%d scans of segment %d for two requests at once (and none of the LRU's segment), want 1", n, slow)
	}
}
