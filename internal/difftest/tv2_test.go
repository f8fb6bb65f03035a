package difftest

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// tv2Txn is one transaction as the workload generator knows it, the ground
// truth the engine's replay is checked against.
type tv2Txn struct {
	pid     int64
	epoch   int16 // of its data
	first   int64
	marker  int64 // -1 while open
	aborted bool
	lso     int64 // the lastStableOffset of its .txnindex entry, when aborted
}

// tv2Workload is a partition written by transactions v2 producers (KIP-890)
// as a Kafka 4.x leader accepts it: kfake writes markers at the data's epoch,
// so these batches are encoded here with kmsg. Each producer's data is at
// epoch E and the coordinator's marker at E+1 (the bump of
// TransactionMetadata.prepareAbortOrCommit); the next transaction runs at
// E+1; a marker that reaches epoch 32767 moves the producer to a new
// producer id at epoch 0 (prepareComplete). Some markers are written twice:
// a coordinator retrying a marker the leader already appended gets it
// appended again when no transaction is open (KAFKA-19999: markerEpoch ==
// current epoch and currentTxnFirstOffset empty), and it closes nothing.
type tv2Workload struct {
	data []byte
	txns []tv2Txn // in order of first offset
	leo  int64
}

func genTV2(seed uint64) tv2Workload {
	r := rand.New(rand.NewPCG(seed, 890))
	type prod struct {
		id      int64
		epoch   int16
		seq     int32
		open    int // index in txns, -1
		lastCtl int16
	}
	nextID := int64(100)
	ps := make([]*prod, 3)
	for i := range ps {
		ps[i] = &prod{id: int64(i + 1), open: -1, lastCtl: -1}
		if r.IntN(2) == 0 {
			// Close to exhaustion, so that workloads overflow.
			ps[i].epoch = math.MaxInt16 - 1 - int16(r.IntN(4))
		} else {
			ps[i].epoch = int16(r.IntN(100))
		}
	}
	var w tv2Workload
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	ts := int64(1_767_225_600_000)
	emit := func(rb kmsg.RecordBatch) {
		rb.FirstOffset, rb.Magic, rb.FirstTimestamp, rb.MaxTimestamp = w.leo, 2, ts, ts
		start := len(w.data)
		w.data = rb.AppendTo(w.data)
		raw := w.data[start:]
		binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
		binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
		w.leo += int64(rb.LastOffsetDelta) + 1
		ts += 10
	}
	records := func(n int) []byte {
		var out []byte
		for i := range n {
			rec := kmsg.Record{OffsetDelta: int32(i), Value: []byte(fmt.Sprintf("v%d", i))}
			rec.Length = int32(len(rec.AppendTo(nil)) - 1)
			out = rec.AppendTo(out)
		}
		return out
	}
	marker := func(p *prod, typ int16) {
		rec := kmsg.Record{Key: []byte{0, 0, 0, byte(typ)}, Value: []byte{0, 0, 0, 0, 0, 0}}
		rec.Length = int32(len(rec.AppendTo(nil)) - 1)
		emit(kmsg.RecordBatch{ProducerID: p.id, ProducerEpoch: p.epoch, Attributes: 0x30, FirstSequence: -1,
			NumRecords: 1, Records: rec.AppendTo(nil)})
		p.lastCtl = typ
	}
	steps := 10 + r.IntN(60)
	for range steps {
		p := ps[r.IntN(len(ps))]
		switch op := r.IntN(12); {
		case op < 6:
			if p.open < 0 {
				w.txns = append(w.txns, tv2Txn{pid: p.id, epoch: p.epoch, first: w.leo, marker: -1})
				p.open = len(w.txns) - 1
			}
			n := 1 + r.IntN(4)
			emit(kmsg.RecordBatch{ProducerID: p.id, ProducerEpoch: p.epoch, Attributes: 0x10, FirstSequence: p.seq,
				LastOffsetDelta: int32(n - 1), NumRecords: int32(n), Records: records(n)})
			p.seq += int32(n)
		case op < 9:
			if p.open < 0 {
				continue
			}
			t := &w.txns[p.open]
			t.aborted = r.IntN(2) == 0
			t.marker = w.leo
			if t.aborted {
				// ProducerStateManager.lastStableOffset(completedTxn).
				t.lso = w.leo + 1
				for _, q := range ps {
					if q != p && q.open >= 0 {
						t.lso = min(t.lso, w.txns[q.open].first)
					}
				}
			}
			p.open = -1
			p.epoch++ // the coordinator's bump, before the marker
			typ := int16(1)
			if t.aborted {
				typ = 0
			}
			marker(p, typ)
			p.seq = 0
			if p.epoch == math.MaxInt16 {
				p.id, p.epoch, nextID = nextID, 0, nextID+1
				p.lastCtl = -1
			}
		case op < 10:
			// A retried marker: same epoch, no transaction open.
			if p.open < 0 && p.lastCtl >= 0 {
				marker(p, p.lastCtl)
			}
		default:
			n := 1 + r.IntN(3)
			emit(kmsg.RecordBatch{ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
				LastOffsetDelta: int32(n - 1), NumRecords: int32(n), Records: records(n)})
		}
	}
	return w
}

// lso is the partition's last stable offset by the generator's own
// account: the first offset of the earliest open transaction, else the log
// end (the high watermark of this single-replica log).
func (w *tv2Workload) lso() int64 {
	for _, t := range w.txns {
		if t.marker < 0 {
			return t.first
		}
	}
	return w.leo
}

// brokerFetch is the read_committed response the broker would send for a
// fetch at from with no size limit: every batch from the one holding from
// up to the LSO, and the aborted transactions LocalLog.collectAbortedTxns
// finds for that range (marker at or after from, first offset below the
// upper bound), from the generator's transactions.
func (w *tv2Workload) brokerFetch(t *testing.T, from int64) *kmsg.FetchResponseTopicPartition {
	t.Helper()
	lso := w.lso()
	p := &kmsg.FetchResponseTopicPartition{HighWatermark: w.leo, LastStableOffset: lso, LogStartOffset: 0}
	data := w.data
	for len(data) > 0 {
		var rb kmsg.RecordBatch
		size := int(binary.BigEndian.Uint32(data[8:])) + 12
		if err := rb.ReadFrom(data[:size]); err != nil {
			t.Fatal(err)
		}
		if last := rb.FirstOffset + int64(rb.LastOffsetDelta); last >= from && rb.FirstOffset < lso {
			p.RecordBatches = append(p.RecordBatches, data[:size]...)
		}
		data = data[size:]
	}
	for _, tx := range w.txns {
		if tx.aborted && tx.marker >= from && tx.first < lso {
			a := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
			a.ProducerID, a.FirstOffset = tx.pid, tx.first
			p.AbortedTransactions = append(p.AbortedTransactions, a)
		}
	}
	return p
}

// TestDifferentialTV2: for many random transactions v2 workloads (epoch
// bumped at every marker, epoch overflow to a new producer id, retried
// markers), the engine's replay closes exactly the generator's
// transactions, rebuilds the .txnindex entries the broker writes
// (producer, first offset, marker, lastStableOffset) and the LSO, and its
// read_committed decisions from the start and from a random position equal
// what kgo.ProcessFetchPartition delivers from the response the broker
// would send.
func TestDifferentialTV2(t *testing.T) {
	const n = 300
	var overflowed, aborted, retried int
	shift := seedOffset(t)
	for i := range uint64(n) {
		seed := shift + i
		w := genTV2(seed + 1)
		bs, err := kmsgBatches(w.data, 0)
		if err != nil {
			t.Fatal(err)
		}
		l := txnindex.Build(&txnindex.Partition{Topic: "tv2", Batches: bs, LogStartOffset: -1, HighWatermark: -1})
		name := fmt.Sprintf("seed %d", seed+1)
		if l.LastStableOffset != w.lso() {
			t.Fatalf("%s: engine LSO %d, generator %d", name, l.LastStableOffset, w.lso())
		}
		if len(l.Txns) != len(w.txns) {
			t.Fatalf("%s: engine replayed %d transactions, generator wrote %d", name, len(l.Txns), len(w.txns))
		}
		var want []txnindex.AbortedTxn
		for i, g := range w.txns {
			e := &l.Txns[i]
			state := txnindex.TxnOpen
			switch {
			case g.marker >= 0 && g.aborted:
				state = txnindex.TxnAborted
				want = append(want, txnindex.AbortedTxn{ProducerID: txnindex.ProducerID(g.pid), FirstOffset: g.first, LastOffset: g.marker, LastStableOffset: g.lso})
				aborted++
			case g.marker >= 0:
				state = txnindex.TxnCommitted
			}
			if e.ProducerID != txnindex.ProducerID(g.pid) || e.FirstOffset != g.first || e.MarkerOffset != g.marker || e.State != state || e.ProducerEpoch != g.epoch {
				t.Fatalf("%s: transaction %d: engine %+v, generator %+v", name, i, *e, g)
			}
			if g.marker >= 0 && (!e.TV2() || e.MarkerEpoch != g.epoch+1) {
				t.Fatalf("%s: transaction %d: marker epoch %d for data at %d, TV2 %v", name, i, e.MarkerEpoch, e.ProducerEpoch, e.TV2())
			}
			if g.marker >= 0 && e.MarkerEpoch == math.MaxInt16 {
				overflowed++
			}
		}
		// The broker appends an entry when it appends the marker.
		slices.SortFunc(want, func(a, b txnindex.AbortedTxn) int { return int(a.LastOffset - b.LastOffset) })
		if got := l.RebuiltIndex[0]; !slices.Equal(got, want) {
			t.Fatalf("%s: rebuilt .txnindex\n%v\ngenerator\n%v", name, got, want)
		}
		markers := 0
		for i := range bs {
			if bs[i].IsEndTxnMarker() {
				markers++
			}
		}
		retried += markers - len(want) - committed(w.txns)
		r := rand.New(rand.NewPCG(seed, 3))
		for _, from := range []int64{0, int64(r.IntN(int(w.leo) + 1))} {
			fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
				Topic: "tv2", Partition: 0, Offset: from, IsolationLevel: kgo.ReadCommitted(),
			}, w.brokerFetch(t, from), kgo.DefaultDecompressor(), nil)
			if fp.Err != nil {
				t.Fatalf("%s: ProcessFetchPartition: %v", name, fp.Err)
			}
			var oracle []int64
			for _, rec := range fp.Records {
				oracle = append(oracle, rec.Offset)
			}
			for _, v := range []txnindex.Variant{txnindex.VariantJava, txnindex.VariantFranzGo, txnindex.VariantLibrdkafka} {
				if got := engineDelivered(l, from, v); !slices.Equal(got, oracle) {
					t.Fatalf("%s from %d (%s): engine delivers\n%v\nProcessFetchPartition\n%v", name, from, v, got, oracle)
				}
			}
		}
	}
	if overflowed == 0 || aborted == 0 || retried == 0 {
		t.Fatalf("workloads too tame: %d overflows, %d aborts, %d retried markers", overflowed, aborted, retried)
	}
	t.Logf("%d workloads: %d aborted transactions, %d epoch overflows, %d retried markers", n, aborted, overflowed, retried)
}

func committed(ts []tv2Txn) int {
	n := 0
	for _, t := range ts {
		if t.marker >= 0 && !t.aborted {
			n++
		}
	}
	return n
}
