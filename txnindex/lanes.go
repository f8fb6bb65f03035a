package txnindex

import (
	"math"
)

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

// EpochLabel names the epochs a producer's lane spans. A producer id is one
// lane whatever its epochs: under transactions v2 (KIP-890) the coordinator
// bumps the epoch before every marker, so a busy producer climbs through
// thousands of epochs with no fencing at all, and a bare "epochs 0–3000"
// would read as 3000 restarts. The label says which it is:
//
//	epoch 4
//	epochs 0–2                                   (bumps without markers: fencing, KIP-360)
//	epochs 0–3,000 (transactions v2: one bump per transaction)
//	epochs 32,700–32,767 (transactions v2: one bump per transaction; epoch 32,767 exhausted the producer id, its transactional id went on under a new one)
//
// The last: a transactions v2 marker at epoch 32767 (Short.MaxValue) is
// written after the coordinator allocated the next producer id
// (TransactionCoordinator: isProducerEpochExhausted at epoch >= 32766),
// and completes the transaction under that new id at epoch 0
// (TransactionMetadata.prepareComplete), which is another lane.
func (p *Producer) EpochLabel() string {
	if p.FirstEpoch == p.LastEpoch {
		return "epoch " + Count(int64(p.FirstEpoch))
	}
	s := "epochs " + Count(int64(p.FirstEpoch)) + "–" + Count(int64(p.LastEpoch))
	if p.TV2Markers == 0 {
		return s
	}
	s += " (transactions v2: one bump per transaction"
	if p.LastEpoch == math.MaxInt16 {
		s += "; epoch 32,767 exhausted the producer id, its transactional id went on under a new one"
	}
	return s + ")"
}
