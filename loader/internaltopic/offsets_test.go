package internaltopic

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// openBuilt writes batches as a partition of topic, and loads it back.
func openBuilt(t *testing.T, topic string, n int32, batches ...scenario.InternalBatch) *loader.Partition {
	t.Helper()
	b, err := scenario.BuildInternal(topic, n, batches)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := scenario.WriteLogDir(dir, b); err != nil {
		t.Fatal(err)
	}
	p, err := loader.OpenPartition(filepath.Join(dir, b.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Damage) != 0 {
		t.Fatalf("damage: %v", p.Damage)
	}
	if l := p.Build(); len(l.Mismatches) != 0 || !reflect.DeepEqual(l.RebuiltIndex, b.TxnIndex) {
		t.Fatalf(".txnindex: mismatches %+v, rebuilt %v, built %v", l.Mismatches, l.RebuiltIndex, b.TxnIndex)
	}
	return p
}

var (
	coord   = scenario.CoordinatorBatch
	txnOff  = scenario.TxnOffsetBatch
	endTxn  = scenario.EndTxnBatch
	commitK = func(off int64) scenario.InternalRecord {
		return scenario.OffsetCommitRecord("g", "t", 0, off, 1, fmt.Sprint("m", off), 1000+off)
	}
	tombK = scenario.OffsetTombstone("g", "t", 0)
)

// TestTransactionalOffsetCommits: each row is a history of the key
// (g, t, 0) in __consumer_offsets; the committed offset is what the group
// coordinator materialises (OffsetMetadataManager.replay and
// replayEndTransactionMarker), "-" for none.
func TestTransactionalOffsetCommits(t *testing.T) {
	tests := []struct {
		name      string
		batches   []scenario.InternalBatch
		committed string // offset, "-" for none
		producer  txnindex.ProducerID
		pending   string // "pid:offset@txnFirst" of pending commits, comma-separated
	}{
		{"plain commits: the last one wins",
			[]scenario.InternalBatch{coord(commitK(5)), coord(commitK(7))}, "7", -1, ""},
		{"a committed transaction's offset counts",
			[]scenario.InternalBatch{coord(commitK(5)), txnOff(9, 0, commitK(8)), endTxn(9, 0, true)}, "8", 9, ""},
		{"an aborted transaction's offset does not",
			[]scenario.InternalBatch{coord(commitK(5)), txnOff(9, 0, commitK(8)), endTxn(9, 0, false)}, "5", -1, ""},
		{"an open transaction's offset is pending, not committed",
			[]scenario.InternalBatch{coord(commitK(5)), txnOff(9, 0, commitK(8))}, "5", -1, "9:8@1"},
		{"a plain commit written after the transactional one wins at the marker",
			[]scenario.InternalBatch{txnOff(9, 0, commitK(8)), coord(commitK(6)), endTxn(9, 0, true)}, "6", -1, ""},
		{"the transactional commit written after a plain one wins at the marker",
			[]scenario.InternalBatch{coord(commitK(6)), txnOff(9, 0, commitK(8)), endTxn(9, 0, true)}, "8", 9, ""},
		{"a tombstone removes the pending commit: the marker brings nothing back",
			[]scenario.InternalBatch{coord(commitK(6)), txnOff(9, 0, commitK(8)), coord(tombK), endTxn(9, 0, true)}, "-", -1, ""},
		{"a tombstone deletes a plain commit",
			[]scenario.InternalBatch{coord(commitK(6)), coord(tombK)}, "-", -1, ""},
		{"interleaved producers: the commit written last wins whatever the marker order",
			[]scenario.InternalBatch{txnOff(9, 0, commitK(8)), txnOff(10, 0, commitK(4)), endTxn(10, 0, true), endTxn(9, 0, true)}, "4", 10, ""},
		{"commits above the LSO count: the coordinator reads to the log end",
			[]scenario.InternalBatch{txnOff(11, 0, commitK(1)), coord(commitK(3)), txnOff(9, 0, commitK(8)), endTxn(9, 0, true)}, "8", 9, "11:1@0"},
		{"a marker at a bumped epoch (transactions v2) ends the transaction",
			[]scenario.InternalBatch{txnOff(9, 4, commitK(8)), endTxn(9, 5, true)}, "8", 9, ""},
		{"a marker of another producer leaves the transaction pending",
			[]scenario.InternalBatch{txnOff(9, 0, commitK(8)), txnOff(10, 0, commitK(2)), endTxn(10, 0, false)}, "-", -1, "9:8@0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openBuilt(t, ConsumerOffsetsTopic, 0, tt.batches...)
			g, err := ReadConsumerOffsets(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Damage) != 0 {
				t.Fatalf("damage %v", g.Damage)
			}
			got := "-"
			var producer txnindex.ProducerID = -1
			if o := g.For("t", 0); len(o) == 1 {
				got, producer = fmt.Sprint(o[0].Offset), o[0].ProducerID
				if o[0].Metadata != "m"+got || o[0].CommitTimestamp != 1000+o[0].Offset || o[0].LeaderEpoch != 1 || o[0].Source != "__consumer_offsets-0" {
					t.Errorf("fields of %+v", o[0])
				}
			} else if len(o) > 1 {
				t.Fatalf("%d offsets for one key", len(o))
			}
			var pend []string
			for _, po := range g.Pending {
				pend = append(pend, fmt.Sprintf("%d:%d@%d", po.ProducerID, po.Offset, po.TxnFirstOffset))
			}
			if got != tt.committed || producer != tt.producer || strings.Join(pend, ",") != tt.pending {
				t.Fatalf("committed %s by %d, pending %q; want %s by %d, pending %q", got, producer, strings.Join(pend, ","), tt.committed, tt.producer, tt.pending)
			}
		})
	}
}

// TestConsumerOffsetsRecordKinds: group metadata records name the live
// groups (a tombstone removes one), newer group record types are counted
// and skipped, and the counts add up.
func TestConsumerOffsetsRecordKinds(t *testing.T) {
	other := scenario.InternalRecord{Key: []byte{0, 3, 0, 1, 'x'}, Value: []byte{0, 0, 1}} // ConsumerGroupMetadataKey
	groupTomb := scenario.GroupMetadataRecord("gone", 1, 5)
	groupTomb.Value = nil
	p := openBuilt(t, ConsumerOffsetsTopic, 7,
		coord(scenario.GroupMetadataRecord("live", 3, 5), scenario.GroupMetadataRecord("gone", 1, 5)),
		coord(commitK(1), other),
		txnOff(4, 0, commitK(2)), endTxn(4, 0, false),
		coord(groupTomb, tombK))
	g, err := ReadConsumerOffsets(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Records: 7, OffsetCommits: 3, Tombstones: 1, GroupMetadata: 3, OtherRecords: 1, Aborted: 1, ConsumerGroupRecords: 1}
	if g.Stats != want || len(g.Groups) != 1 || g.Groups[0] != "live" || len(g.Offsets) != 0 {
		t.Fatalf("stats %+v groups %v offsets %v; want %+v", g.Stats, g.Groups, g.Offsets, want)
	}
	if !reflect.DeepEqual(g.Partitions, []int32{7}) || g.Covers(50) || g.Covers(8) {
		t.Fatalf("partitions %v", g.Partitions)
	}
}

// TestReadRefusesOtherTopics: each reader takes its own topic only.
func TestReadRefusesOtherTopics(t *testing.T) {
	p := openBuilt(t, TransactionStateTopic, 0, coord(scenario.TxnStateTombstone("x")))
	if _, err := ReadConsumerOffsets(p, nil); err == nil || !strings.Contains(err.Error(), "__transaction_state") {
		t.Fatalf("err %v", err)
	}
	q := openBuilt(t, ConsumerOffsetsTopic, 0, coord(commitK(1)))
	if _, err := ReadTransactionState(q, nil); err == nil {
		t.Fatal("read offsets as transaction state")
	}
	if _, err := ReadTransactionState(nil, nil); err == nil {
		t.Fatal("nil partition")
	}
}

// TestTransactionStateReplay: the last value of an id wins, a tombstone
// removes the id, KIP-890 fields come through, Empty drops partitions.
func TestTransactionStateReplay(t *testing.T) {
	const ts = 1_767_225_600_000
	tp := func(topic string, p int32) txnindex.TopicPartition {
		return txnindex.TopicPartition{Topic: topic, Partition: p}
	}
	st := func(id string, pid int64, epoch int16, s txnindex.TxnStatus, parts ...txnindex.TopicPartition) txnindex.TxnCoordinatorState {
		return txnindex.TxnCoordinatorState{TransactionalID: id, ProducerID: txnindex.ProducerID(pid), ProducerEpoch: epoch,
			PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, State: s, Partitions: parts,
			TimeoutMs: 30000, StartTimestamp: ts, LastUpdateTimestamp: ts + int64(s)}
	}
	tv2 := st("tv2", 40, 32767, txnindex.TxnStatusPrepareCommit, tp("b", 1), tp("a", 2), tp("a", 1))
	tv2.NextProducerID, tv2.NextProducerEpoch, tv2.ClientTransactionVersion, tv2.PreviousProducerID = 41, 0, 2, 39
	p := openBuilt(t, TransactionStateTopic, 12,
		coord(scenario.OngoingTxnStates("a", 7, 1, ts, tp("t", 0))...),
		coord(scenario.TxnStateRecord(st("b", 8, 0, txnindex.TxnStatusOngoing, tp("t", 1))), scenario.TxnStateRecord(tv2)),
		coord(scenario.TxnStateRecord(st("a", 7, 1, txnindex.TxnStatusCompleteAbort))),
		coord(scenario.TxnStateTombstone("b")),
		coord(scenario.TxnStateRecord(st("empty", 9, 0, txnindex.TxnStatusEmpty, tp("ignored", 0)))),
		coord(scenario.InternalRecord{Key: []byte{0, 1, 0, 0}, Value: []byte{0}}),
	)
	s, err := ReadTransactionState(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Damage) != 0 {
		t.Fatalf("damage %v", s.Damage)
	}
	if len(s.States) != 3 {
		t.Fatalf("%+v", s.States)
	}
	a, e, v := s.States[0], s.States[1], s.States[2]
	if a.TransactionalID != "a" || a.State != txnindex.TxnStatusCompleteAbort || len(a.Partitions) != 0 || a.Offset != 4 || a.Source != "__transaction_state-12" {
		t.Errorf("a: %+v", a)
	}
	if e.TransactionalID != "empty" || len(e.Partitions) != 0 {
		t.Errorf("empty: %+v (TransactionLog.read ignores partitions in Empty)", e)
	}
	if v.TransactionalID != "tv2" || v.NextProducerID != 41 || v.NextProducerEpoch != 0 || v.PreviousProducerID != 39 || v.ClientTransactionVersion != 2 ||
		v.ProducerEpoch != 32767 || len(v.Partitions) != 3 || v.Partitions[0] != tp("a", 1) || v.Partitions[2] != tp("b", 1) {
		t.Errorf("tv2: %+v", v)
	}
	if want := (Stats{Records: 8, Tombstones: 1, OtherRecords: 1, UnknownRecords: 1}); s.Stats != want {
		t.Errorf("stats %+v, want %+v", s.Stats, want)
	}
	// The epoch-overflowed producer's next id is found by the rule.
	m := s.Coordinators(1).Match("a", 1, 41, 0)
	if m.TransactionalID != "tv2" || m.Rule != txnindex.RuleProducerIDMovedOn {
		t.Errorf("%+v", m)
	}
}

// TestDamagedRecordsAreLocated: a record whose key or value does not
// decode is listed with its segment file and batch position, the records
// around it still count, and the list is bounded.
func TestDamagedRecordsAreLocated(t *testing.T) {
	bad := []scenario.InternalRecord{
		{Key: nil, Value: []byte{0, 3}},                           // null key
		{Key: []byte{0}, Value: []byte{0, 3}},                     // short key
		{Key: []byte{0xff, 0xff, 0}, Value: nil},                  // negative key version
		{Key: []byte{0, 1, 0, 9, 'g'}, Value: nil},                // truncated group
		{Key: commitK(1).Key, Value: []byte{0, 9, 0, 0, 0, 0}},    // unknown value version
		{Key: commitK(1).Key, Value: []byte{0, 3, 0, 0, 0}},       // truncated value
		{Key: []byte{0, 2, 0, 5, 'a'}, Value: []byte{0, 3, 0, 0}}, // truncated group metadata key
	}
	var batches []scenario.InternalBatch
	batches = append(batches, coord(commitK(1)))
	for _, r := range bad {
		batches = append(batches, coord(r))
	}
	batches = append(batches, coord(scenario.OffsetCommitRecord("g", "t", 0, 2, 1, "m2", 1002)))
	p := openBuilt(t, ConsumerOffsetsTopic, 0, batches...)
	g, err := ReadConsumerOffsets(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Damage) != len(bad) || g.Stats.Damaged != int64(len(bad)) {
		t.Fatalf("%d damage entries for %d bad records: %v", len(g.Damage), len(bad), g.Damage)
	}
	for i, d := range g.Damage {
		b := &p.Input.Batches[i+1]
		want := fmt.Sprintf("loader: 00000000000000000000.log: batch at byte %#x: record at offset %d: ", b.Position(), b.BaseOffset)
		if !strings.HasPrefix(d.Error(), want) {
			t.Errorf("damage %d: %q, want prefix %q", i, d.Error(), want)
		}
	}
	if o := g.For("t", 0); len(o) != 1 || o[0].Offset != 2 {
		t.Fatalf("offsets around the damage: %+v", o)
	}

	// More damaged records than maxDamage: the list ends with a count.
	batches = batches[:0]
	for range maxDamage + 5 {
		batches = append(batches, coord(bad[1]))
	}
	p = openBuilt(t, ConsumerOffsetsTopic, 0, batches...)
	g, err = ReadConsumerOffsets(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Damage) != maxDamage+1 || !strings.Contains(g.Damage[maxDamage].Error(), "5 more damaged records") {
		t.Fatalf("%d entries, last %v", len(g.Damage), g.Damage[len(g.Damage)-1])
	}
}

// TestTxnStateDamage: an unknown state id and an unknown value version
// are damage (TransactionState.fromId, UnknownValueVersion).
func TestTxnStateDamage(t *testing.T) {
	good := scenario.TxnStateRecord(txnindex.TxnCoordinatorState{TransactionalID: "x", ProducerID: 1, State: txnindex.TxnStatusOngoing,
		PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1})
	badState := scenario.InternalRecord{Key: good.Key, Value: append([]byte(nil), good.Value...)}
	badState.Value[2+8+2+4] = 8 // the state byte after version, producer id, epoch, timeout
	badVersion := scenario.InternalRecord{Key: good.Key, Value: append([]byte{0, 2}, good.Value[2:]...)}
	p := openBuilt(t, TransactionStateTopic, 0, coord(good), coord(badState), coord(badVersion))
	s, err := ReadTransactionState(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Damage) != 2 || !strings.Contains(s.Damage[0].Error(), "state id 8") || !strings.Contains(s.Damage[1].Error(), "version 2") {
		t.Fatalf("%v", s.Damage)
	}
	if len(s.States) != 1 || s.States[0].State != txnindex.TxnStatusOngoing {
		t.Fatalf("%+v", s.States)
	}
}

// TestPartitionFor: Java's String.hashCode, Utils.abs, and the modulus.
func TestPartitionFor(t *testing.T) {
	for _, tt := range []struct {
		key  string
		n    int32
		want int32
	}{
		{"", 50, 0},
		{"a", 50, 97 % 50},
		{"ab", 50, (97*31 + 98) % 50},
		{"polygenelubricants", 50, 0}, // hashCode is Integer.MIN_VALUE: Utils.abs gives 0
		{"é", 50, 0xe9 % 50},          // one UTF-16 unit
		{"😀", 50, (0xd83d*31 + 0xde00) % 50},
		{"x", 0, -1},
	} {
		if got := PartitionFor(tt.key, tt.n); got != tt.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", tt.key, tt.n, got, tt.want)
		}
	}
}
