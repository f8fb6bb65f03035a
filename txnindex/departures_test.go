package txnindex

import "testing"

// TestClientDeparturesCapped: past the bound on the batches decided, the
// clients' counts cover the first batches only, and say so.
func TestClientDeparturesCapped(t *testing.T) {
	const a, b ProducerID = 7, 9
	defer func(n int) { clientsMaxBatches = n }(clientsMaxBatches)
	clientsMaxBatches = 2
	// a's aborted 0-1 and its marker at 2 are decided; b's abort past them
	// is not.
	r := newLog().txn(a, 2).abort(a).txn(b, 1).abort(b).build().ClientDepartures()
	if r == nil || !r.Capped || r.From != 0 || r.To != 2 || r.Decided != 2 {
		t.Fatalf("report %+v, want offsets 0-2 capped after 2 batches", r)
	}
	want := map[string][2]int64{"kafkajs": {0, 0}, "kafka-go": {2, 1}, "kafka-python": {2, 1}}
	for _, c := range r.Clients {
		if got := [2]int64{c.AbortedDelivered, c.ControlDelivered}; got != want[c.Client] || c.UndecidedDelivered != 0 {
			t.Errorf("%s delivers %v aborted and control, %d undecided; want %v", c.Client, got, c.UndecidedDelivered, want[c.Client])
		}
	}
}
