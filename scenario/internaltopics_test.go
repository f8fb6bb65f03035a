package scenario

import (
	"strings"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/txnindex"
)

// hangingScenario is the stuck-LSO shape: zombie's transaction (offsets
// 3-5) never ends while the partition moves on.
const hangingScenario = `topic orders partition 0
producer billing transactional id 5
producer zombie transactional id 6
begin billing
send billing 2
commit billing
begin zombie
send zombie 3
begin billing
send billing 2
commit billing
plain 3
`

// TestInternalTopicsLogDir builds the log dir a later `diagnose DIR` test
// needs: a partition pinned by a hanging transaction, the
// __consumer_offsets partitions of two groups reading it and the
// __transaction_state partitions of both producers' transactional ids,
// each group and id in the partition the coordinators' partitionFor
// names. Read back through loader and internaltopic, the join says who
// pins the LSO, what its coordinator says, and which group waits.
func TestInternalTopicsLogDir(t *testing.T) {
	s, err := Parse(strings.NewReader(hangingScenario), "hanging.txn")
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if data.Log.LastStableOffset != 3 {
		t.Fatalf("scenario LSO %d, want 3", data.Log.LastStableOffset)
	}
	const ts = 1_767_225_600_000
	parts := []*Built{data}
	// Groups: "orders-app" consumed up to the LSO and waits; "audit" is
	// at offset 0 with 2 records to go. "orders-app" also committed
	// through billing's transaction (TxnOffsetCommit), then plainly.
	groups := map[string][]InternalBatch{
		"orders-app": {
			CoordinatorBatch(GroupMetadataRecord("orders-app", 4, ts)),
			TxnOffsetBatch(5, 0, OffsetCommitRecord("orders-app", "orders", 0, 2, 0, "", ts+1)),
			EndTxnBatch(5, 0, true),
			CoordinatorBatch(OffsetCommitRecord("orders-app", "orders", 0, 3, 0, "m", ts+2)),
		},
		"audit": {
			CoordinatorBatch(OffsetCommitRecord("audit", "orders", 0, 0, 0, "", ts+3)),
			CoordinatorBatch(OffsetCommitRecord("audit", "orders", 1, 9, 0, "", ts+4), OffsetTombstone("audit", "orders", 1)),
		},
		// In another __consumer_offsets partition (16, not 5): a
		// position past the LSO is a read_uncommitted consumer's, not
		// held by the LSO.
		"late-reader": {CoordinatorBatch(OffsetCommitRecord("late-reader", "orders", 0, 9, 0, "", ts+5))},
	}
	byPart := map[int32][]InternalBatch{}
	for g, bs := range groups {
		n := internaltopic.PartitionFor(g, internaltopic.DefaultConsumerOffsetsPartitions)
		byPart[n] = append(byPart[n], bs...)
	}
	for n, bs := range byPart {
		b, err := BuildInternal(ConsumerOffsetsTopic, n, bs)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	// Coordinators: billing's last transaction completed; zombie's
	// coordinator moved on to a transaction on orders-1 only, so
	// nothing will end the transaction on orders-0.
	billing := txnindex.TxnCoordinatorState{TransactionalID: "billing-tx", ProducerID: 5, ProducerEpoch: 0,
		PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, State: txnindex.TxnStatusCompleteCommit,
		TimeoutMs: 60000, StartTimestamp: ts, LastUpdateTimestamp: ts + 5}
	txnParts := map[int32][]InternalBatch{}
	addTxn := func(id string, recs ...InternalRecord) {
		n := internaltopic.PartitionFor(id, internaltopic.DefaultTransactionStatePartitions)
		txnParts[n] = append(txnParts[n], CoordinatorBatch(recs...))
	}
	addTxn("billing-tx", TxnStateRecord(billing))
	addTxn("zombie-tx", OngoingTxnStates("zombie-tx", 6, 0, ts, txnindex.TopicPartition{Topic: "orders", Partition: 1})...)
	addTxn("expired-tx", TxnStateRecord(billing), TxnStateTombstone("expired-tx"))
	for n, bs := range txnParts {
		b, err := BuildInternal(TransactionStateTopic, n, bs)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}

	dir := t.TempDir()
	if err := WriteLogDir(dir, parts...); err != nil {
		t.Fatal(err)
	}
	ld, err := loader.OpenLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Partitions) != len(parts) || len(ld.Damage) != 0 {
		t.Fatalf("%d partitions loaded of %d written; damage %v", len(ld.Partitions), len(parts), ld.Damage)
	}
	var orders *loader.Partition
	for _, p := range ld.Partitions {
		if len(p.Damage) != 0 {
			t.Fatalf("%s: damage %v", p.Dir, p.Damage)
		}
		if l := p.Build(); len(l.Mismatches) != 0 {
			t.Fatalf("%s: .txnindex mismatches %+v", p.Dir, l.Mismatches)
		}
		if want := p.Input.Topic == "orders"; want {
			orders = p
		} else if p.Input.HighWatermarkSource != loader.ReplicationOffsetCheckpoint {
			t.Errorf("%s: HWM from %q: the merged checkpoint lacks its line", p.Dir, p.Input.HighWatermarkSource)
		}
	}
	in, err := internaltopic.ReadLogDir(ld)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Offsets.Damage) != 0 || len(in.Txns.Damage) != 0 {
		t.Fatalf("damage %v %v", in.Offsets.Damage, in.Txns.Damage)
	}

	l := orders.Build()
	if l.LastStableOffset != 3 || len(l.Open) != 1 {
		t.Fatalf("LSO %d, %d open", l.LastStableOffset, len(l.Open))
	}
	open := &l.Txns[l.Open[0]]
	m := in.Txns.Coordinators(internaltopic.DefaultTransactionStatePartitions).Match(l.Topic, l.Partition, open.ProducerID, open.ProducerEpoch)
	if m.TransactionalID != "zombie-tx" || !m.Hanging || m.Rule != txnindex.RulePartitionNotListed || m.Coordinator.State != txnindex.TxnStatusOngoing {
		t.Fatalf("join: %+v", m)
	}
	if len(in.Txns.States) != 2 || in.Txns.States[0].TransactionalID != "billing-tx" {
		t.Fatalf("states %+v (the expired id's tombstone must remove it)", in.Txns.States)
	}

	if len(in.Offsets.Partitions) != 2 {
		t.Fatalf("__consumer_offsets partitions %v, want the two groups' 5 and 16", in.Offsets.Partitions)
	}
	gs := l.GroupPositions(in.Offsets.For("orders", 0))
	if len(gs) != 3 {
		t.Fatalf("%+v", gs)
	}
	audit, late, app := gs[0], gs[1], gs[2]
	if late.Group != "late-reader" || late.BehindLSO || late.Blocked || late.Source != "__consumer_offsets-16" {
		t.Errorf("late-reader: %+v", late)
	}
	if audit.Group != "audit" || !audit.BehindLSO || audit.Blocked || audit.RecordsToLSO != 2 || audit.OffsetsToLSO != 3 {
		t.Errorf("audit: %+v", audit)
	}
	if app.Group != "orders-app" || !app.BehindLSO || !app.Blocked || app.Offset != 3 || app.Metadata != "m" || app.ProducerID != -1 {
		t.Errorf("orders-app: %+v", app)
	}
	if in.Offsets.For("orders", 1) != nil {
		t.Errorf("audit's orders-1 offset was deleted: %+v", in.Offsets.For("orders", 1))
	}
	if len(in.Offsets.Groups) != 1 || in.Offsets.Groups[0] != "orders-app" {
		t.Errorf("groups %v", in.Offsets.Groups)
	}
}

// TestBuildInternalRefuses: a marker or transactional batch without a
// producer, an empty data batch and a bad topic name are errors.
func TestBuildInternalRefuses(t *testing.T) {
	rec := OffsetCommitRecord("g", "t", 0, 1, 0, "", 1)
	for name, tt := range map[string]struct {
		topic   string
		batches []InternalBatch
	}{
		"marker of the coordinator":           {ConsumerOffsetsTopic, []InternalBatch{{ProducerID: -1, Marker: CommitMarker}}},
		"marker of a non-transactional batch": {ConsumerOffsetsTopic, []InternalBatch{{ProducerID: 3, Marker: AbortMarker}}},
		"transactional without a producer":    {ConsumerOffsetsTopic, []InternalBatch{{ProducerID: -1, Transactional: true, Records: []InternalRecord{rec}}}},
		"empty batch":                         {ConsumerOffsetsTopic, []InternalBatch{CoordinatorBatch()}},
		"unknown marker":                      {ConsumerOffsetsTopic, []InternalBatch{{ProducerID: 3, Transactional: true, Marker: 9}}},
		"numeric topic":                       {"12", []InternalBatch{CoordinatorBatch(rec)}},
		"topic with a path":                   {"a/b", []InternalBatch{CoordinatorBatch(rec)}},
	} {
		if _, err := BuildInternal(tt.topic, 0, tt.batches); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestWriteLogDirMergesCheckpoints: the merged checkpoint files list every
// partition, and OpenLogDir takes each partition's line.
func TestWriteLogDirMergesCheckpoints(t *testing.T) {
	a, err := BuildInternal(ConsumerOffsetsTopic, 3, []InternalBatch{CoordinatorBatch(OffsetCommitRecord("g", "t", 0, 1, 0, "", 1))})
	if err != nil {
		t.Fatal(err)
	}
	b, err := BuildInternal(TransactionStateTopic, 7, []InternalBatch{CoordinatorBatch(TxnStateTombstone("x")), CoordinatorBatch(TxnStateTombstone("y"))})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteLogDir(dir, a, b); err != nil {
		t.Fatal(err)
	}
	cps, err := loader.ReadLogDirCheckpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topic string
		p     int32
		hwm   int64
	}{{ConsumerOffsetsTopic, 3, 1}, {TransactionStateTopic, 7, 2}} {
		if v, ok := cps.ReplicationOffset.Lookup(c.topic, c.p); !ok || v != c.hwm {
			t.Errorf("%s-%d: HWM %d %v, want %d", c.topic, c.p, v, ok, c.hwm)
		}
		if v, ok := cps.RecoveryPoint.Lookup(c.topic, c.p); !ok || v != c.hwm {
			t.Errorf("%s-%d: recovery point %d %v", c.topic, c.p, v, ok)
		}
	}
	if err := WriteLogDir(dir, a); err == nil {
		t.Error("overwrote an existing log dir")
	}
}
