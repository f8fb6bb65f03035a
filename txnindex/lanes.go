package txnindex

// Lane is one row of the timeline. Lane 0 holds the batches without a
// producer id (non-transactional, non-idempotent writes and magic 0/1
// entries); lane i+1 holds the batches of l.Producers[i], so producers keep
// their order of first appearance. The page's lane rows (package web), the
// meta message's lane list and the stream's per-decision lane number
// (package api) all follow this one rule.
type Lane struct {
	Index int
	// Producer is the lane's producer, nil for lane 0. It points into
	// l.Producers; the log is read-only, so callers must not modify it.
	Producer *Producer
	// Batches is the lane's batch count (Producer.Batches, or for lane 0
	// the batches without a producer id).
	Batches int
}

// Lanes returns the timeline lanes of l: lane 0 first, then one per
// producer in order of first appearance. It walks the batches once to
// count lane 0.
func (l *Log) Lanes() []Lane {
	none := 0
	for i := range l.Batches {
		if !l.Batches[i].HasProducerID() {
			none++
		}
	}
	out := make([]Lane, 0, len(l.Producers)+1)
	out = append(out, Lane{Index: 0, Batches: none})
	for i := range l.Producers {
		p := &l.Producers[i]
		out = append(out, Lane{Index: i + 1, Producer: p, Batches: p.Batches})
	}
	return out
}
