package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/txnscope/txnscope/txnindex"
)

// bigDemoBatches is the size of the generated demo that exercises the
// timeline's level-of-detail path.
const bigDemoBatches = 1_000_000

// bigDemo is a generated partition of bigDemoBatches batches: four
// transactional producers interleaved, one transaction in ten aborted, a
// non-transactional batch in five, a compacted gap every 50,000 batches, a
// segment roll every 100,000, and a transaction left open near the end that
// pins the LSO. It is built on first request, not at start-up.
func bigDemo() *source {
	return &source{id: "big", title: "1M generated batches (level-of-detail demo)", topic: "demo-big",
		build: func() *txnindex.Log { return txnindex.Build(bigPartition(bigDemoBatches)) }}
}

func bigPartition(n int) *txnindex.Partition {
	w := &demoWriter{p: txnindex.Partition{Topic: "demo-big", LogStartOffset: -1, HighWatermark: -1}, ts: 1_767_225_600_000}
	w.p.Segments = []txnindex.Segment{{Name: fmt.Sprintf("%020d.log", 0)}}
	w.p.Batches = make([]txnindex.Batch, 0, n+8)
	r := rand.New(rand.NewPCG(3, 5))
	var inTxn [6]int
	hang := n * 9 / 10
	for len(w.p.Batches) < n {
		i := len(w.p.Batches)
		switch {
		case i > 0 && i%100_000 == 0:
			w.roll()
		case i > 0 && i%50_000 == 0:
			w.next += 7 // removed by the cleaner
		}
		if i == hang {
			w.data(99, 3, true) // never ends
			continue
		}
		pid := txnindex.ProducerID(1 + r.IntN(4))
		switch {
		case r.IntN(5) == 0:
			w.data(-1, 1+r.IntN(5), false)
		case inTxn[pid] >= 3:
			if r.IntN(10) == 0 {
				w.marker(pid, txnindex.ControlAbort)
			} else {
				w.marker(pid, txnindex.ControlCommit)
			}
			inTxn[pid] = 0
		default:
			w.data(pid, 1+r.IntN(8), true)
			inTxn[pid]++
		}
	}
	for pid := 1; pid <= 4; pid++ {
		if inTxn[pid] > 0 {
			w.marker(txnindex.ProducerID(pid), txnindex.ControlCommit)
		}
	}
	return &w.p
}
