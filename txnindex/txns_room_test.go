package txnindex

import (
	"runtime"
	"testing"
)

// TestLogKeepsNoRoomForTransactionsItCannotHave: a log keeps its Txns
// array as long as it lives. An empty log reserved 64 transactions
// (6 KB), which a log directory of empty partitions or a dump naming a
// new partition on each line paid for each of them; and transactions
// left open, one a batch, grew the array by doubling, keeping up to
// twice their 96 bytes.
func TestLogKeepsNoRoomForTransactionsItCannotHave(t *testing.T) {
	const n = 2000
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	logs := make([]*Log, n)
	for i := range logs {
		logs[i] = newLog().build()
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	per := (int64(m1.HeapAlloc) - int64(m0.HeapAlloc)) / n
	t.Logf("an empty log keeps %d bytes", per)
	if per > 2048 {
		t.Errorf("an empty log keeps %d bytes, want at most 2 KB", per)
	}
	runtime.KeepAlive(logs)

	b := newLog()
	for pid := ProducerID(1); pid <= 5000; pid++ {
		b.txn(pid, 1)
	}
	l := b.build()
	if len(l.Txns) != 5000 || len(l.Open) != 5000 {
		t.Fatalf("%d transactions, %d open; want 5000 each", len(l.Txns), len(l.Open))
	}
	if spare := cap(l.Txns) - len(l.Txns); spare > len(l.Txns)/8+64 {
		t.Errorf("5000 open transactions kept in an array of %d", cap(l.Txns))
	}
}
