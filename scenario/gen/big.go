package gen

import (
	"math/rand/v2"

	"github.com/txnscope/txnscope/txnindex"
)

// BigBatches is the size of the generated demo that exercises the
// timeline's level-of-detail path.
const BigBatches = 1_000_000

// BigTopic is the big demo's topic.
const BigTopic = "demo-big"

// BigTitle is the big demo's title, as the index and an export name it.
const BigTitle = "1M generated batches (level-of-detail demo)"

// Big is a generated partition of n batches: four transactional producers
// interleaved, one transaction in ten aborted, a non-transactional batch in
// five, a compacted gap every 50,000 batches below the open transaction, a segment roll every 100,000,
// and a transaction left open near the end that pins the LSO. The seed is
// fixed: the same n gives the same partition.
func Big(n int) *txnindex.Partition {
	w := NewWriter(BigTopic)
	p := w.Partition()
	p.Batches = make([]txnindex.Batch, 0, n+8)
	r := rand.New(rand.NewPCG(3, 5))
	var inTxn [6]int
	hang := n * 9 / 10
	for len(p.Batches) < n {
		i := len(p.Batches)
		switch {
		case i > 0 && i%100_000 == 0:
			w.Roll()
		case i > 0 && i%50_000 == 0 && i < hang:
			// Removed by the cleaner, which never cleans at or past the
			// LSO (LogCleanerManager.cleanableOffsets): a gap above the
			// open transaction would say its marker had been removed.
			w.Skip(7)
		}
		if i == hang {
			w.Data(99, 3, true) // never ends
			continue
		}
		pid := txnindex.ProducerID(1 + r.IntN(4))
		switch {
		case r.IntN(5) == 0:
			w.Data(-1, 1+r.IntN(5), false)
		case inTxn[pid] >= 3:
			if r.IntN(10) == 0 {
				w.Marker(pid, txnindex.ControlAbort)
			} else {
				w.Marker(pid, txnindex.ControlCommit)
			}
			inTxn[pid] = 0
		default:
			w.Data(pid, 1+r.IntN(8), true)
			inTxn[pid]++
		}
	}
	for pid := 1; pid <= 4; pid++ {
		if inTxn[pid] > 0 {
			w.Marker(txnindex.ProducerID(pid), txnindex.ControlCommit)
		}
	}
	return p
}
