package txnindex

import "testing"

// TestLanes: lane 0 counts the batches without a producer id, then one lane
// per producer in order of first appearance, whatever order their ids are
// in; every batch is on exactly one lane.
func TestLanes(t *testing.T) {
	l := newLog().plain(-1, 2).txn(7, 3).plain(9, 1).commit(7).plain(-1, 1).txn(8, 1).txn(7, 1).build()
	lanes := l.Lanes()
	type lane struct {
		pid     ProducerID
		batches int
	}
	want := []lane{{NoProducerID, 2}, {7, 3}, {9, 1}, {8, 1}}
	if len(lanes) != len(want) {
		t.Fatalf("%d lanes, want %d: %+v", len(lanes), len(want), lanes)
	}
	total := 0
	for i, ln := range lanes {
		pid := NoProducerID
		if ln.Producer != nil {
			pid = ln.Producer.ID
		}
		if ln.Index != i || pid != want[i].pid || ln.Batches != want[i].batches {
			t.Errorf("lane %d: index %d producer %d batches %d, want producer %d batches %d", i, ln.Index, pid, ln.Batches, want[i].pid, want[i].batches)
		}
		if (i == 0) != (ln.Producer == nil) {
			t.Errorf("lane %d: producer %v", i, ln.Producer)
		}
		total += ln.Batches
	}
	if total != len(l.Batches) {
		t.Errorf("lanes hold %d batches, the log %d", total, len(l.Batches))
	}
}
