package difftest

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// benchRecordSet encodes n v2 batches as a broker stores them: four
// interleaved transactional producers, one transaction in ten aborted,
// non-transactional batches between, 5 records per data batch.
var benchRecordSet = sync.OnceValue(func() []byte {
	const n = 1_000_000
	r := rand.New(rand.NewPCG(3, 5))
	var out []byte
	var records []byte
	for i := int32(0); i < 5; i++ {
		rec := kmsg.Record{OffsetDelta: i, Value: []byte("0123456789")}
		raw := rec.AppendTo(nil)
		rec.Length = int32(len(raw) - 1)
		records = rec.AppendTo(records)
	}
	marker := func(t int16) []byte {
		rec := kmsg.Record{Key: []byte{0, 0, 0, byte(t)}, Value: []byte{0, 0, 0, 0, 0, 0}}
		raw := rec.AppendTo(nil)
		rec.Length = int32(len(raw) - 1)
		return rec.AppendTo(nil)
	}
	commit, abort := marker(1), marker(0)
	inTxn := [5]int{}
	offset := int64(0)
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for range n {
		pid := int64(1 + r.IntN(4))
		rb := kmsg.RecordBatch{FirstOffset: offset, Magic: 2, PartitionLeaderEpoch: 0, FirstTimestamp: 1, MaxTimestamp: 1}
		switch {
		case r.IntN(5) == 0:
			rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence = -1, -1, -1
			rb.NumRecords, rb.LastOffsetDelta, rb.Records = 5, 4, records
		case inTxn[pid] >= 3:
			rb.ProducerID, rb.Attributes, rb.FirstSequence = pid, 0x30, -1
			rb.NumRecords, rb.Records = 1, commit
			if r.IntN(10) == 0 {
				rb.Records = abort
			}
			inTxn[pid] = 0
		default:
			rb.ProducerID, rb.Attributes = pid, 0x10
			rb.NumRecords, rb.LastOffsetDelta, rb.Records = 5, 4, records
			inTxn[pid]++
		}
		start := len(out)
		out = rb.AppendTo(out)
		raw := out[start:]
		binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
		binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
		offset += int64(rb.LastOffsetDelta) + 1
	}
	return out
})

// BenchmarkKmsgDecodeBatches is the baseline for BenchmarkDecideKmsgLog:
// decoding the same 1M batches' headers (and each control batch's first
// record) with kmsg, which is what any consumer must do before filtering.
func BenchmarkKmsgDecodeBatches(b *testing.B) {
	data := benchRecordSet()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		bs, err := kmsgBatches(data, 0)
		if err != nil {
			b.Fatal(err)
		}
		n = len(bs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/batch")
}

// BenchmarkDecideKmsgLog plays a read_committed consumer over the decoded
// batches: the engine's cost on top of decoding.
func BenchmarkDecideKmsgLog(b *testing.B) {
	bs, err := kmsgBatches(benchRecordSet(), 0)
	if err != nil {
		b.Fatal(err)
	}
	l := txnindex.Build(&txnindex.Partition{Topic: "bench", Batches: bs, LogStartOffset: -1, HighWatermark: -1})
	b.ReportAllocs()
	for b.Loop() {
		for range l.Decisions(txnindex.ConsumeOptions{Isolation: txnindex.ReadCommitted}) {
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(bs)), "ns/batch")
}
