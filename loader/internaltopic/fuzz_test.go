package internaltopic

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// realRecords returns the key/value pairs of every record of the corpus's
// partitions of topic, read through loader.
func realRecords(f *testing.F, topic string) [][2][]byte {
	var out [][2][]byte
	for _, dir := range realInternalDirs(f, topic) {
		p, err := loader.OpenPartition(dir)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range p.Segments {
			for _, b := range s.Log.Batches {
				recs, err := s.Log.Records(b)
				if err != nil {
					f.Fatal(err)
				}
				for _, r := range recs {
					out = append(out, [2][]byte{r.Key, r.Value})
				}
			}
		}
	}
	return out
}

// FuzzOffsetsRecord: any key and value decode without panicking; what
// decodes is bounded as Kafka bounds it and agrees with kmsg's decoders.
// Seeded with every record of the corpus's __consumer_offsets partitions.
func FuzzOffsetsRecord(f *testing.F) {
	for _, kv := range realRecords(f, ConsumerOffsetsTopic) {
		f.Add(kv[0], kv[1], kv[1] == nil)
	}
	f.Add(commitK(1).Key, commitK(1).Value, false)
	f.Add([]byte{0, 1}, []byte{0, 4}, false)
	f.Fuzz(func(t *testing.T, key, value []byte, null bool) {
		if null {
			value = nil
		} else if value == nil {
			value = []byte{}
		}
		r, err := DecodeOffsetsRecord(key, value)
		if err != nil {
			return
		}
		if r.Tombstone != (value == nil) {
			t.Fatalf("tombstone %v for value %v", r.Tombstone, value)
		}
		if len(r.Group) > MaxStringLen || len(r.Topic) > MaxStringLen || len(r.Metadata) > MaxStringLen {
			t.Fatalf("unbounded string: %d %d %d", len(r.Group), len(r.Topic), len(r.Metadata))
		}
		if r.Kind != KindOffsetCommit || r.Tombstone {
			return
		}
		var k kmsg.OffsetCommitKey
		var v kmsg.OffsetCommitValue
		if k.ReadFrom(key) != nil || v.ReadFrom(value) != nil {
			t.Fatal("decoded what kmsg refuses")
		}
		if k.Group != r.Group || k.Topic != r.Topic || k.Partition != r.Partition || v.Offset != r.Offset || v.Metadata != r.Metadata || v.CommitTimestamp != r.CommitTimestamp {
			t.Fatalf("%+v differs from kmsg %+v %+v", r, k, v)
		}
		if r.ValueVersion < 0 || r.ValueVersion > maxOffsetCommitValueVersion {
			t.Fatalf("value version %d accepted", r.ValueVersion)
		}
	})
}

// FuzzTxnStateRecord: any key and value decode without panicking; a
// decoded state has a valid state id, sorted distinct partitions, bounded
// names, and no partitions in Empty. Seeded with the corpus's
// __transaction_state records.
func FuzzTxnStateRecord(f *testing.F) {
	for _, kv := range realRecords(f, TransactionStateTopic) {
		f.Add(kv[0], kv[1], kv[1] == nil)
	}
	tv2 := scenario.TxnStateRecord(txnindex.TxnCoordinatorState{TransactionalID: "x", ProducerID: 3, State: txnindex.TxnStatusOngoing,
		PreviousProducerID: 2, NextProducerID: -1, NextProducerEpoch: -1, ClientTransactionVersion: 2,
		Partitions: []txnindex.TopicPartition{{Topic: "t", Partition: 1}, {Topic: "u", Partition: 0}}})
	f.Add(tv2.Key, tv2.Value, false)
	f.Fuzz(func(t *testing.T, key, value []byte, null bool) {
		if null {
			value = nil
		} else if value == nil {
			value = []byte{}
		}
		r, err := DecodeTxnStateRecord(key, value)
		if err != nil || r.Unknown || r.Tombstone {
			return
		}
		s := r.State
		if !s.State.Valid() || len(s.Partitions) > MaxTxnPartitions || len(s.TransactionalID) > MaxStringLen {
			t.Fatalf("%+v", s)
		}
		if s.State == txnindex.TxnStatusEmpty && len(s.Partitions) != 0 {
			t.Fatalf("partitions in Empty: %v", s.Partitions)
		}
		if !slices.IsSortedFunc(s.Partitions, compareTP) || len(slices.CompactFunc(slices.Clone(s.Partitions), func(a, b txnindex.TopicPartition) bool { return a == b })) != len(s.Partitions) {
			t.Fatalf("partitions not sorted and distinct: %v", s.Partitions)
		}
		for _, tp := range s.Partitions {
			if len(tp.Topic) > MaxStringLen || !s.Lists(tp.Topic, tp.Partition) {
				t.Fatalf("partition %v", tp)
			}
		}
	})
}

func compareTP(a, b txnindex.TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}

// FuzzInternalSegment: any bytes, scanned as a segment of each internal
// topic, read without panicking; the damage list stays bounded and no
// more offsets or states come out than records went in.
func FuzzInternalSegment(f *testing.F) {
	for _, topic := range []string{ConsumerOffsetsTopic, TransactionStateTopic} {
		for _, dir := range realInternalDirs(f, topic) {
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			sort.Strings(logs)
			for _, l := range logs {
				data, err := os.ReadFile(l)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(data)
			}
		}
	}
	b, err := scenario.BuildInternal(ConsumerOffsetsTopic, 0, []scenario.InternalBatch{
		coord(commitK(1)), txnOff(9, 0, commitK(2)), coord(tombK), endTxn(9, 0, true), txnOff(10, 0, commitK(3)), endTxn(10, 0, false), txnOff(11, 1, commitK(4)),
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b.Files[0].Data)
	f.Fuzz(func(t *testing.T, data []byte) {
		seg := loader.NewSegmentBytes(data, "00000000000000000000.log", loader.DefaultScanOptions)
		for _, topic := range []string{ConsumerOffsetsTopic, TransactionStateTopic} {
			p := &loader.Partition{Dir: topic + "-0", Segments: []*loader.SegmentFiles{{Log: seg}},
				Input: &txnindex.Partition{Topic: topic, Batches: slices.Clone(seg.Batches), Segments: []txnindex.Segment{seg.Segment()},
					LogStartOffset: -1, HighWatermark: -1}}
			var records int64
			for _, b := range seg.Batches {
				records += int64(max(b.Records, 0))
			}
			if topic == ConsumerOffsetsTopic {
				g, err := ReadConsumerOffsets(p, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(g.Damage) > maxDamage+1 || int64(len(g.Offsets)+len(g.Pending)) > g.Stats.OffsetCommits || g.Stats.Records > records {
					t.Fatalf("%d damage, %d offsets + %d pending of %d commits, %d records of %d", len(g.Damage), len(g.Offsets), len(g.Pending), g.Stats.OffsetCommits, g.Stats.Records, records)
				}
				continue
			}
			s, err := ReadTransactionState(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Damage) > maxDamage+1 || int64(len(s.States)) > s.Stats.Records || s.Stats.Records > records {
				t.Fatalf("%d damage, %d states of %d records", len(s.Damage), len(s.States), s.Stats.Records)
			}
		}
	})
}
