package live

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/hostilebroker"
)

// FuzzCommittedFilter holds the read_committed path of a poll to its
// bounds: whatever a broker answers, kgo decodes at most maxFetchRecords
// records and never panics.
func FuzzCommittedFilter(f *testing.F) {
	good := hostilebroker.Batch(kmsg.RecordBatch{ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}, 1,
		hostilebroker.Records(kmsg.Record{Value: []byte("v")}))
	f.Add(good)
	f.Add(hostilebroker.ZstdRecordsBomb(f, 0, 100_000_000, 1<<20))
	f.Add(hostilebroker.ZstdRecordsBomb(f, 0, maxFetchRecords, 1<<20))
	f.Add(hostilebroker.ZstdRecordsBomb(f, 0, 1000, maxFetchDecompressed+1))
	f.Add(append(append([]byte{}, good...), hostilebroker.ControlZstdBombs(f, 1, 4, 32<<20)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := &Watcher{cfg: Config{Topic: "f"}}
		p := &partState{id: 0, rcPos: 0}
		r := &kmsg.FetchResponseTopicPartition{HighWatermark: 1 << 62, LastStableOffset: 1 << 62, RecordBatches: data}
		fp, next, err := w.committedFilter(p, r)
		if len(fp.Records) > maxFetchRecords {
			t.Fatalf("%d records decoded", len(fp.Records))
		}
		if err == nil && next < p.rcPos {
			t.Fatalf("next offset %d below the fetch offset %d", next, p.rcPos)
		}
	})
}
