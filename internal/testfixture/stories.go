package testfixture

import (
	"github.com/txnscope/txnscope/loader/internaltopic"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
	"maps"
	"strings"
	"testing"
	"time"
)

// JoinStory is the stuck-LSO incident the internal-topic join answers:
// zombie-tx's transaction (offsets 3-5 of orders-0) never ends while the
// partition moves on; group orders-app waits at the LSO, audit still has
// records to read before it, and late-reader (a read_uncommitted
// consumer) is past it.
const JoinStory = `topic orders partition 0
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

// WriteJoinLogDir writes JoinStory's log dir: orders-0, the
// __consumer_offsets partitions of its groups and the __transaction_state
// partitions of both transactional ids, all kmsg-encoded as the
// coordinators write them. zombieParts are the partitions zombie-tx's
// coordinator lists for its Ongoing transaction.
func WriteJoinLogDir(t testing.TB, zombieParts ...txnindex.TopicPartition) string {
	t.Helper()
	dir := t.TempDir()
	if err := scenario.WriteLogDir(dir, JoinLogDirParts(t, nil, zombieParts...)...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// JoinLogDirParts are WriteJoinLogDir's partitions, with more groups'
// __consumer_offsets batches (by group) added to theirs.
func JoinLogDirParts(t testing.TB, more map[string][]scenario.InternalBatch, zombieParts ...txnindex.TopicPartition) []*scenario.Built {
	t.Helper()
	s, err := scenario.Parse(strings.NewReader(JoinStory), "join.txn")
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	const ts = 1_767_225_600_000
	parts := []*scenario.Built{data}
	groups := map[string][]scenario.InternalBatch{
		"orders-app":  {scenario.CoordinatorBatch(scenario.GroupMetadataRecord("orders-app", 1, ts), scenario.OffsetCommitRecord("orders-app", "orders", 0, 3, 0, "", ts+1))},
		"audit":       {scenario.CoordinatorBatch(scenario.OffsetCommitRecord("audit", "orders", 0, 0, 0, "", ts+2))},
		"late-reader": {scenario.CoordinatorBatch(scenario.OffsetCommitRecord("late-reader", "orders", 0, 9, 0, "", ts+3))},
	}
	maps.Copy(groups, more)
	byPart := map[int32][]scenario.InternalBatch{}
	for g, bs := range groups {
		n := internaltopic.PartitionFor(g, internaltopic.DefaultConsumerOffsetsPartitions)
		byPart[n] = append(byPart[n], bs...)
	}
	for n, bs := range byPart {
		b, err := scenario.BuildInternal(scenario.ConsumerOffsetsTopic, n, bs)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	billing := txnindex.TxnCoordinatorState{TransactionalID: "billing-tx", ProducerID: 5, PreviousProducerID: -1, NextProducerID: -1,
		NextProducerEpoch: -1, State: txnindex.TxnStatusCompleteCommit, TimeoutMs: 60000, StartTimestamp: ts, LastUpdateTimestamp: ts + 5}
	txnParts := map[int32][]scenario.InternalBatch{}
	add := func(id string, recs ...scenario.InternalRecord) {
		n := internaltopic.PartitionFor(id, internaltopic.DefaultTransactionStatePartitions)
		txnParts[n] = append(txnParts[n], scenario.CoordinatorBatch(recs...))
	}
	add("billing-tx", scenario.TxnStateRecord(billing))
	add("zombie-tx", scenario.OngoingTxnStates("zombie-tx", 6, 0, ts, zombieParts...)...)
	for n, bs := range txnParts {
		b, err := scenario.BuildInternal(scenario.TransactionStateTopic, n, bs)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	return parts
}

// LateStory: zombie-tx's transaction on orders-0 is the last thing
// written to the partition (nothing after it), as on an idle partition.
const LateStory = `topic orders partition 0
producer billing transactional id 5
producer zombie transactional id 6
begin billing
send billing 2
commit billing
plain 3
begin zombie
send zombie 3
`

// WriteLateLogDir writes LateStory's log dir with, beside orders-0, the
// __transaction_state partitions holding states (none: no coordinator
// evidence), and returns it with the time of zombie-tx's last write.
func WriteLateLogDir(t testing.TB, states ...scenario.InternalRecord) (string, time.Time) {
	t.Helper()
	s, err := scenario.Parse(strings.NewReader(LateStory), "late.txn")
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	last := data.Log.Batches[len(data.Log.Batches)-1].MaxTimestamp
	parts := []*scenario.Built{data}
	if len(states) > 0 {
		n := internaltopic.PartitionFor("zombie-tx", internaltopic.DefaultTransactionStatePartitions)
		b, err := scenario.BuildInternal(scenario.TransactionStateTopic, n, []scenario.InternalBatch{scenario.CoordinatorBatch(states...)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	dir := t.TempDir()
	if err := scenario.WriteLogDir(dir, parts...); err != nil {
		t.Fatal(err)
	}
	return dir, time.UnixMilli(last)
}

// ZombieState is zombie-tx's coordinator state: producer 6 epoch 0 in
// state st, its transaction listing parts, with the transaction timeout ms.
func ZombieState(st txnindex.TxnStatus, ms int32, parts ...txnindex.TopicPartition) scenario.InternalRecord {
	const ts = 1_767_225_600_000
	return scenario.TxnStateRecord(txnindex.TxnCoordinatorState{TransactionalID: "zombie-tx", ProducerID: 6, ProducerEpoch: 0,
		PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1, State: st, TimeoutMs: ms, StartTimestamp: ts,
		LastUpdateTimestamp: ts, Partitions: parts})
}

// WriteGroupsLogDir adds to JoinStory's log dir (orders-0 pinned at offset 3 by
// zombie-tx, whose coordinator moved on: hanging) groups of every kind:
// new-app a KIP-848 consumer group waiting at the LSO, kstreams-app a
// streams group behind it, orders-app the classic group of JoinStory, two
// share groups on orders-0 (share-rc configured read_committed, at the
// LSO; share-ru with no config), and records of a type no release writes
// in __consumer_offsets and __share_group_state.
func WriteGroupsLogDir(t testing.TB, withMetadata bool) string {
	t.Helper()
	const ts = 1_767_225_600_000
	groups := map[string][]scenario.InternalRecord{
		"new-app": {scenario.GroupRecord(3, "new-app", false), scenario.GroupRecord(5, "new-app", false), scenario.GroupRecord(16, "new-app", false),
			scenario.OffsetCommitRecord("new-app", "orders", 0, 3, 0, "", ts+4)},
		"kstreams-app": {scenario.GroupRecord(17, "kstreams-app", false), scenario.GroupRecord(18, "kstreams-app", false),
			scenario.OffsetCommitRecord("kstreams-app", "orders", 0, 1, 0, "", ts+5)},
		"share-rc": {scenario.GroupRecord(11, "share-rc", false), {Key: []byte{0, 30, 0, 1, 'x'}, Value: []byte{0, 0}}},
		"share-ru": {scenario.GroupRecord(11, "share-ru", false)},
	}
	more := map[string][]scenario.InternalBatch{}
	for g, recs := range groups {
		more[g] = []scenario.InternalBatch{scenario.CoordinatorBatch(recs...)}
	}
	parts := JoinLogDirParts(t, more, txnindex.TopicPartition{Topic: "orders", Partition: 1})
	id := scenario.TopicID("orders")
	share, err := scenario.BuildInternal(scenario.ShareGroupStateTopic, 7, []scenario.InternalBatch{
		scenario.CoordinatorBatch(scenario.ShareSnapshotRecord("share-rc", id, 0, 1, 0), scenario.ShareSnapshotRecord("share-ru", id, 0, 1, 1)),
		scenario.CoordinatorBatch(scenario.ShareUpdateRecord("share-rc", id, 0, 3), scenario.ShareSnapshotRecord("share-rc", scenario.TopicID("elsewhere"), 0, 1, 9)),
		scenario.CoordinatorBatch(scenario.InternalRecord{Key: []byte{0, 9, 0, 0}, Value: []byte{0, 0}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	parts = append(parts, share)
	if withMetadata {
		m, err := scenario.BuildInternal(scenario.ClusterMetadataTopic, 0, []scenario.InternalBatch{
			scenario.CoordinatorBatch(scenario.TopicRecord("orders", id), scenario.GroupConfigRecord("share-rc", internaltopic.ShareIsolationConfig, "read_committed")),
		})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, m)
	}
	dir := t.TempDir()
	if err := scenario.WriteLogDir(dir, parts...); err != nil {
		t.Fatal(err)
	}
	return dir
}
