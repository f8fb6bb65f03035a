package txnindex

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

// benchLog builds n batches: four transactional producers interleaved, one
// transaction in ten aborted, a non-transactional batch every fifth, and a
// segment roll every 100,000 batches.
func benchLog(n int) *Log {
	b := newLog()
	// In one array of plain memory, as the loader keeps them.
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

var benchLogs sync.Map // batch count -> *Log, shared by the benchmarks of one run

func cachedBenchLog(n int) *Log {
	if l, ok := benchLogs.Load(n); ok {
		return l.(*Log)
	}
	l, _ := benchLogs.LoadOrStore(n, benchLog(n))
	return l.(*Log)
}

// BenchmarkDecide plays a read_committed Java consumer over 100k and 1M
// batches in memory, fetches emulated at the default 1 MiB, and reports the
// cost per batch and the allocations per pass (allocs/op), which do not grow
// with the batch count. BenchmarkDecideFloor is its baseline.
func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(batchesName(n), func(b *testing.B) {
			l := cachedBenchLog(n)
			// One pass first: it builds the segments' lazy .index
			// (kept by the Log, not by a pass), so allocs/op is the
			// pass's own.
			for range l.Decisions(ConsumeOptions{Isolation: ReadCommitted}) {
			}
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
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(l.Batches)), "ns/batch")
		})
	}
}

// BenchmarkDecideFloor is Decide's baseline over the same 1M batches:
// "read" loads the header fields a decision reads from every 64-byte Batch
// (offsets, producer id, records, flags), the least any pass over the kept
// batches costs; "yield" also hands the consumer loop of BenchmarkDecide one
// Decision per batch through an iterator, with no fetch, aborted set or
// transaction lookup, the least a pass through the Decisions API costs.
func BenchmarkDecideFloor(b *testing.B) {
	l := cachedBenchLog(1_000_000)
	n := len(l.Batches)
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		var sum int64
		for b.Loop() {
			for i := range l.Batches {
				bt := &l.Batches[i]
				sum += bt.LastOffset() + int64(bt.ProducerID) + int64(bt.Records)
				if bt.IsTransactional() {
					sum++
				}
			}
		}
		if sum == 0 {
			b.Fatal("nothing read")
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/batch")
	})
	b.Run("yield", func(b *testing.B) {
		seq := func(yield func(Decision) bool) {
			for i := range l.Batches {
				bt := &l.Batches[i]
				d := Decision{From: bt.BaseOffset, To: bt.LastOffset(), Batch: bt, BatchIndex: int32(i), FetchOffset: -1}
				if bt.IsControl() {
					d.Verdict = Control
				}
				if !yield(d) {
					return
				}
			}
		}
		b.ReportAllocs()
		var delivered int64
		for b.Loop() {
			for d := range seq {
				if d.Verdict == Delivered {
					delivered += d.To - d.From + 1
				}
			}
		}
		if delivered == 0 {
			b.Fatal("nothing delivered")
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/batch")
	})
}

func batchesName(n int) string {
	if n%1_000_000 == 0 {
		return "batches=" + strconv.Itoa(n/1_000_000) + "M"
	}
	return "batches=" + strconv.Itoa(n/1000) + "k"
}

// TestDecideAllocsPerPass checks that a pass allocates the same whatever
// the number of batches: its state (aborted list, queue, set, cursor) is
// sized by the fetches, not the log, and no decision allocates.
func TestDecideAllocsPerPass(t *testing.T) {
	pass := func(l *Log, v Variant) func() {
		return func() {
			for range l.Decisions(ConsumeOptions{Isolation: ReadCommitted, Variant: v}) {
			}
		}
	}
	small, large := benchLog(10_000), benchLog(100_000)
	for _, v := range []Variant{VariantJava, VariantLibrdkafka, VariantFranzGo} {
		a, z := testing.AllocsPerRun(3, pass(small, v)), testing.AllocsPerRun(3, pass(large, v))
		t.Logf("%s: %.0f allocations per pass over %d batches, %.0f over %d", v, a, len(small.Batches), z, len(large.Batches))
		if z > a {
			t.Errorf("%s: %.0f allocations per pass over %d batches, %.0f over %d: they grow with the log", v, a, len(small.Batches), z, len(large.Batches))
		}
	}
}

// BenchmarkBuild replays the same 1M batches (broker emulation).
func BenchmarkBuild(b *testing.B) {
	l := cachedBenchLog(1_000_000)
	p := &Partition{Topic: "t", Segments: l.Segments, Batches: l.Batches, LogStartOffset: -1, HighWatermark: -1}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Build(p)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(l.Batches)), "ns/batch")
}
