package txnindex

import "testing"

// TestTxnCursorSharedSlots interleaves producers whose ids share the
// cursor's slots (ids equal modulo cursorSlots), and one that jumps back, so
// a pass must fall back to TxnOf instead of trusting another producer's slot.
func TestTxnCursorSharedSlots(t *testing.T) {
	b := newLog()
	for round := 0; round < 3; round++ {
		for _, pid := range []ProducerID{1, 1 + cursorSlots, 1 + 2*cursorSlots, 0, cursorSlots} {
			b.txn(pid, 2)
		}
		b.commit(1).abort(1+cursorSlots).plain(-1, 1).commit(0)
		if round == 1 {
			b.roll()
		}
		b.abort(cursorSlots).commit(1 + 2*cursorSlots)
	}
	l := b.build()
	checkTxnOf(t, l, nil)
	// A consumer that goes back over the log answers by binary search.
	var c txnCursor
	for _, i := range []int{len(l.Batches) - 1, 0, 3, 2} {
		if got, want := c.of(l, i), l.TxnOf(i); got != want {
			t.Fatalf("batch %d after a backwards lookup: %p, want %p", i, got, want)
		}
	}
}

// TestTxnCursorStepsBackThenOn: a consumer that re-reads the batch its last
// fetch ended in asks for a batch behind the walk, then goes on forward;
// every answer, before and after the step back, is TxnOf's.
func TestTxnCursorStepsBackThenOn(t *testing.T) {
	b := newLog()
	for round := 0; round < 4; round++ {
		b.txn(7, 2).txn(8, 1).plain(-1, 1).commit(7).txn(7, 1).abort(8).abort(7)
	}
	l := b.build()
	var c txnCursor
	for i := 0; i < len(l.Batches); i++ {
		for _, j := range []int{i, max(i-1, 0), i} {
			if got, want := c.of(l, j), l.TxnOf(j); got != want {
				t.Fatalf("batch %d (walk at %d): %p, want %p", j, i, got, want)
			}
		}
	}
}
