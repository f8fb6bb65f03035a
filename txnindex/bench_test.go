package txnindex

import (
	"math/rand/v2"
	"testing"
)

// benchLog builds n batches: four transactional producers interleaved, one
// transaction in ten aborted, a non-transactional batch every fifth, and a
// segment roll every 100,000 batches.
func benchLog(n int) *Log {
	b := newLog()
	b.p.Batches = make([]Batch, 0, n+8)
	r := rand.New(rand.NewPCG(3, 5))
	inTxn := [5]int{}
	for len(b.p.Batches) < n {
		if len(b.p.Batches)%100_000 == 99_999 {
			b.roll()
		}
		pid := ProducerID(1 + r.IntN(4))
		switch {
		case r.IntN(5) == 0:
			b.plain(NoProducerID, 5)
		case inTxn[pid] >= 3:
			if r.IntN(10) == 0 {
				b.abort(pid)
			} else {
				b.commit(pid)
			}
			inTxn[pid] = 0
		default:
			b.txn(pid, 5)
			inTxn[pid]++
		}
	}
	for pid := ProducerID(1); pid <= 4; pid++ {
		if inTxn[pid] > 0 {
			b.commit(pid)
		}
	}
	return b.build()
}

// BenchmarkDecide plays a read_committed Java consumer over 1M batches in
// memory, fetches emulated at the default 1 MiB, and reports the cost per
// batch. The steady state allocates nothing per batch.
func BenchmarkDecide(b *testing.B) {
	l := benchLog(1_000_000)
	n := len(l.Batches)
	b.ReportAllocs()
	b.ResetTimer()
	var delivered int64
	for b.Loop() {
		for d := range l.Decisions(ConsumeOptions{Isolation: ReadCommitted}) {
			if d.Verdict == Delivered {
				delivered += d.To - d.From + 1
			}
		}
	}
	b.StopTimer()
	if delivered == 0 {
		b.Fatal("nothing delivered")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/batch")
	// allocs/batch from the runtime's counters over the timed loop.
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() {
		for range l.Decisions(ConsumeOptions{Isolation: ReadCommitted}) {
		}
	}))/float64(n), "allocs/batch")
}

// BenchmarkBuild replays the same 1M batches (broker emulation).
func BenchmarkBuild(b *testing.B) {
	l := benchLog(1_000_000)
	p := &Partition{Topic: "t", Segments: l.Segments, Batches: l.Batches, LogStartOffset: -1, HighWatermark: -1}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Build(p)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(l.Batches)), "ns/batch")
}
