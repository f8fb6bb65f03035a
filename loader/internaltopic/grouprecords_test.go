package internaltopic

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// TestGroupKindsFromMetadataRecords: each row is a history of
// __consumer_offsets; a group's kind is the type of its live metadata
// record (GroupMetadata 2, ConsumerGroupMetadata 3, ShareGroupMetadata 11,
// StreamsGroupMetadata 17), a group with offsets and no metadata record
// is classic (the coordinator's simple group), and the records of each
// kind and of unknown types are counted.
func TestGroupKindsFromMetadataRecords(t *testing.T) {
	rec := scenario.GroupRecord
	commit := func(group string) scenario.InternalRecord {
		return scenario.OffsetCommitRecord(group, "t", 0, 4, 1, "", 1000)
	}
	tests := []struct {
		name    string
		records []scenario.InternalRecord
		kinds   string // group=kind of the live metadata records, sorted
		offsets string // group=kind of the committed offsets
		stats   Stats
	}{
		{"a classic group: GroupMetadata",
			[]scenario.InternalRecord{scenario.GroupMetadataRecord("c", 1, 5), commit("c")},
			"c=classic", "c=classic", Stats{Records: 2, OffsetCommits: 1, GroupMetadata: 1}},
		{"a KIP-848 consumer group: ConsumerGroupMetadata and its member, assignment and regex records",
			[]scenario.InternalRecord{rec(3, "k", false), rec(4, "k", false), rec(5, "k", false), rec(6, "k", false), rec(7, "k", false), rec(8, "k", false), rec(16, "k", false), commit("k")},
			"k=consumer", "k=consumer", Stats{Records: 8, OffsetCommits: 1, OtherRecords: 7, ConsumerGroupRecords: 7}},
		{"a streams group: StreamsGroupMetadata and the records after it",
			[]scenario.InternalRecord{rec(17, "s", false), rec(18, "s", false), rec(19, "s", false), rec(24, "s", false), commit("s")},
			"s=streams", "s=streams", Stats{Records: 5, OffsetCommits: 1, OtherRecords: 4, StreamsGroupRecords: 4}},
		{"a share group: ShareGroupMetadata, no offset commit",
			[]scenario.InternalRecord{rec(11, "sh", false), rec(9, "sh", false), rec(10, "sh", false), rec(15, "sh", false)},
			"sh=share", "", Stats{Records: 4, OtherRecords: 4, ShareGroupRecords: 4}},
		{"offsets without a metadata record: a simple classic group",
			[]scenario.InternalRecord{commit("simple")},
			"", "simple=classic", Stats{Records: 1, OffsetCommits: 1}},
		{"a member record alone does not say the kind",
			[]scenario.InternalRecord{rec(5, "m", false), commit("m")},
			"", "m=classic", Stats{Records: 2, OffsetCommits: 1, OtherRecords: 1, ConsumerGroupRecords: 1}},
		{"upgraded from classic to consumer: the classic tombstone, then the consumer record",
			[]scenario.InternalRecord{scenario.GroupMetadataRecord("u", 3, 5), commit("u"), tombstoneOf(scenario.GroupMetadataRecord("u", 3, 5)), rec(3, "u", false)},
			"u=consumer", "u=consumer", Stats{Records: 4, OffsetCommits: 1, GroupMetadata: 2, OtherRecords: 1, ConsumerGroupRecords: 1}},
		{"upgraded, the consumer record first: the classic tombstone does not delete it",
			[]scenario.InternalRecord{scenario.GroupMetadataRecord("u", 3, 5), commit("u"), rec(3, "u", false), tombstoneOf(scenario.GroupMetadataRecord("u", 3, 5))},
			"u=consumer", "u=consumer", Stats{Records: 4, OffsetCommits: 1, GroupMetadata: 2, OtherRecords: 1, ConsumerGroupRecords: 1}},
		{"a consumer group deleted: its tombstone",
			[]scenario.InternalRecord{rec(3, "d", false), rec(3, "d", true)},
			"", "", Stats{Records: 2, OtherRecords: 2, ConsumerGroupRecords: 2}},
		{"types no release writes are skipped and counted (KIP-915)",
			[]scenario.InternalRecord{{Key: []byte{0, 25, 0, 1, 'x'}, Value: []byte{0, 0}}, {Key: []byte{0x7f, 0xff}, Value: nil}, commit("c")},
			"", "c=classic", Stats{Records: 3, OffsetCommits: 1, OtherRecords: 2, UnknownRecords: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openBuilt(t, ConsumerOffsetsTopic, 3, coord(tt.records...))
			g, err := ReadConsumerOffsets(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Damage) != 0 {
				t.Fatalf("damage %v", g.Damage)
			}
			var kinds, offs []string
			for _, n := range slices.Sorted(maps.Keys(g.Kinds)) {
				kinds = append(kinds, fmt.Sprintf("%s=%s", n, g.Kinds[n]))
			}
			for _, o := range g.Offsets {
				offs = append(offs, fmt.Sprintf("%s=%s", o.Group, o.Kind))
			}
			if strings.Join(kinds, ",") != tt.kinds || strings.Join(offs, ",") != tt.offsets {
				t.Errorf("kinds %q offsets %q; want %q and %q", kinds, offs, tt.kinds, tt.offsets)
			}
			if g.Stats != tt.stats {
				t.Errorf("stats %+v\nwant  %+v", g.Stats, tt.stats)
			}
		})
	}
}

func tombstoneOf(r scenario.InternalRecord) scenario.InternalRecord {
	r.Value = nil
	return r
}

// TestGroupRecordKeysRefused: a newer group record's key that does not
// hold its group id is damage, named by type and byte position.
func TestGroupRecordKeysRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  []byte
		want string
	}{
		{"no group id", []byte{0, 3}, "ConsumerGroupMetadata key (type 3) of 2 bytes: byte 2: group id length needs 2 bytes, 0 left"},
		{"a group id longer than the key", []byte{0, 11, 0, 9, 'a'}, "ShareGroupMetadata key (type 11) of 5 bytes: byte 4: group id needs 9 bytes, 1 left"},
		{"a null group id", []byte{0, 17, 0xff, 0xff}, "StreamsGroupMetadata key (type 17) of 4 bytes: byte 4: group id: null (length -1), want a string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeOffsetsRecord(tt.key, []byte{0, 0})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestShareGroupStateReplay: each row is a history of the share-partition
// (g, orders, 0) in __share_group_state, replayed as
// ShareCoordinatorShard.replay does; the start offset is what the share
// coordinator serves, "-" for no state.
func TestShareGroupStateReplay(t *testing.T) {
	id := scenario.TopicID("orders")
	snap := func(start int64) scenario.InternalRecord { return scenario.ShareSnapshotRecord("g", id, 0, 2, start) }
	upd := func(start int64) scenario.InternalRecord { return scenario.ShareUpdateRecord("g", id, 0, start) }
	tests := []struct {
		name    string
		records []scenario.InternalRecord
		start   string
		stats   Stats
	}{
		{"a snapshot sets the start offset", []scenario.InternalRecord{snap(4)}, "4@0", Stats{Records: 1}},
		{"an update moves it", []scenario.InternalRecord{snap(4), upd(9)}, "9@1", Stats{Records: 2}},
		{"an update of -1 leaves it", []scenario.InternalRecord{snap(4), upd(-1)}, "4@0", Stats{Records: 2}},
		{"a later snapshot replaces the state", []scenario.InternalRecord{snap(4), upd(9), snap(7)}, "7@2", Stats{Records: 3}},
		{"a tombstone deletes the state", []scenario.InternalRecord{snap(4), scenario.ShareStateTombstone("g", id, 0)}, "-", Stats{Records: 2, Tombstones: 1}},
		{"an update before any snapshot that moves the offset counts", []scenario.InternalRecord{upd(3)}, "3@0", Stats{Records: 1}},
		{"an update before any snapshot that does not move it says nothing", []scenario.InternalRecord{upd(-1)}, "-", Stats{Records: 1}},
		{"an unknown record type is skipped and counted (KIP-915)",
			[]scenario.InternalRecord{snap(4), {Key: []byte{0, 7, 0, 0}, Value: []byte{0}}}, "4@0", Stats{Records: 2, OtherRecords: 1, UnknownRecords: 1}},
		{"a snapshot written before KAFKA-18170, without its timestamps, is read",
			[]scenario.InternalRecord{withoutTimestamps(snap(6))}, "6@0", Stats{Records: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openBuilt(t, ShareGroupStateTopic, 5, coord(tt.records...))
			s, err := ReadShareGroupState(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Damage) != 0 {
				t.Fatalf("damage %v", s.Damage)
			}
			got := "-"
			if len(s.States) > 1 {
				t.Fatalf("%d states for one share-partition", len(s.States))
			}
			if len(s.States) == 1 {
				st := s.States[0]
				got = fmt.Sprintf("%d@%d", st.StartOffset, st.RecordOffset)
				if st.Group != "g" || st.TopicID != id || st.Partition != 0 || st.Source != "__share_group_state-5" {
					t.Errorf("state %+v", st)
				}
			}
			if got != tt.start || s.Stats != tt.stats {
				t.Errorf("start %s stats %+v; want %s %+v", got, s.Stats, tt.start, tt.stats)
			}
		})
	}
}

// withoutTimestamps drops a ShareSnapshot value's create and write
// timestamps, the layout before KAFKA-18170.
func withoutTimestamps(r scenario.InternalRecord) scenario.InternalRecord {
	const at = 2 + 4 + 4 + 4 + 8
	r.Value = append(slices.Clone(r.Value[:at]), r.Value[at+16:]...)
	return r
}

// TestShareStateRecordsRefused: damaged share-state records are refused
// with the record type and the byte where it went wrong.
func TestShareStateRecordsRefused(t *testing.T) {
	good := scenario.ShareSnapshotRecord("g", scenario.TopicID("orders"), 0, 1, 4)
	upd := scenario.ShareUpdateRecord("g", scenario.TopicID("orders"), 0, 4)
	cut := func(b []byte, n int) []byte { return slices.Clone(b[:len(b)-n]) }
	set := func(b []byte, i int, v byte) []byte { b = slices.Clone(b); b[i] = v; return b }
	for _, tt := range []struct {
		name       string
		key, value []byte
		want       string
	}{
		{"a key cut in its topic id", cut(good.Key, 10), good.Value, "ShareSnapshotKey of 15 bytes: byte 5: topic id needs 16 bytes, 10 left"},
		{"bytes after a key", append(slices.Clone(good.Key), 1), good.Value, "ShareSnapshotKey of 26 bytes: byte 25: 1 bytes after the end of ShareSnapshotKey"},
		{"a value version past 0", good.Key, set(good.Value, 1, 1), "ShareSnapshotValue version 1: want 0-0"},
		{"a value cut in its state batch", good.Key, cut(good.Value, 4), "ShareSnapshotValue v0 of 56 bytes: byte 39: state batches of 1 elements, at least 20 bytes each, 17 bytes left"},
		{"more state batches than bytes", good.Key, set(good.Value, 2+4+4+4+8+16, 100), "ShareSnapshotValue v0 of 60 bytes: byte 39: state batches of 99 elements, at least 20 bytes each, 21 bytes left"},
		{"a negative start offset in a snapshot", good.Key, set(good.Value, 14, 0xff), "start offset"},
		{"an update's tagged field longer than the value", upd.Key, set(upd.Value, len(upd.Value)-5, 9), "ShareUpdateValue v0 of"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeShareStateRecord(tt.key, tt.value)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestClusterMetadataReplay: topic names by id, group and topic configs
// (a null value deletes one, a topic's removal drops its configs), other
// record types counted and left alone.
func TestClusterMetadataReplay(t *testing.T) {
	rc, ru := "read_committed", "read_uncommitted"
	yes := "true"
	p := openBuilt(t, scenario.ClusterMetadataTopic, 0,
		coord(scenario.TopicRecord("orders", scenario.TopicID("orders")), scenario.TopicRecord("gone", scenario.TopicID("gone"))),
		coord(scenario.GroupConfigRecord("shared", ShareIsolationConfig, rc), scenario.GroupConfigRecord("other", ShareIsolationConfig, rc)),
		coord(scenario.ConfigRecord(2, "gone", RemoteStorageEnableConfig, &yes), scenario.ConfigRecord(2, "orders", RemoteStorageEnableConfig, &yes)),
		coord(scenario.ConfigRecord(32, "other", ShareIsolationConfig, nil), scenario.GroupConfigRecord("plain", ShareIsolationConfig, ru)),
		coord(scenario.InternalRecord{Value: []byte{1, 9, 0}}), // RemoveTopicRecord, cut: damage
		coord(scenario.InternalRecord{Value: append([]byte{1, 9, 0}, append(mustID(scenario.TopicID("gone")), 0)...)}),
		coord(scenario.InternalRecord{Value: []byte{1, 12, 0, 0}}), // a FeatureLevelRecord: not read
	)
	m, err := ReadClusterMetadata(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Damage) != 1 || !strings.Contains(m.Damage[0].Error(), "RemoveTopicRecord v0 of 3 bytes: byte 3: topic id needs 16 bytes, 0 left") {
		t.Errorf("damage %v", m.Damage)
	}
	if len(m.Topics) != 1 || m.Topics[mustUUID(scenario.TopicID("orders"))] != "orders" {
		t.Errorf("topics %v", m.Topics)
	}
	if got := m.ShareIsolation(); len(got) != 2 || got["shared"] != txnindex.ShareReadCommitted || got["plain"] != txnindex.ShareReadUncommitted {
		t.Errorf("isolation %v", got)
	}
	if len(m.TopicConfigs) != 1 || m.TopicConfigs["orders"][RemoteStorageEnableConfig] != "true" {
		t.Errorf("topic configs %v", m.TopicConfigs)
	}
	if want := (Stats{Records: 11, OtherRecords: 1, Damaged: 1}); m.Stats != want {
		t.Errorf("stats %+v, want %+v", m.Stats, want)
	}
}

// TestMetadataRecordsRefused: a metadata record that is not what
// MetadataRecordSerde reads is refused, naming what and where.
func TestMetadataRecordsRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"null", nil, "null value"},
		{"frame version 0 (KRaft's 2.8 preview)", []byte{0, 2, 0}, "frame version 0: want 1"},
		{"a varint past 5 bytes", []byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0}, "byte 6: record type: varint longer than 5 bytes"},
		{"a TopicRecord v1", []byte{1, 2, 1, 2, 'a', 0}, "TopicRecord v1: want v0"},
		{"a name longer than the record", []byte{1, 2, 0, 9, 'a'}, "TopicRecord v0 of 5 bytes: byte 4: topic name needs 8 bytes, 1 left"},
		{"a null topic name", []byte{1, 2, 0, 0}, "byte 4: topic name: null, want a string"},
		{"garbage after a ConfigRecord", []byte{1, 4, 0, 32, 2, 'g', 2, 'n', 0, 0, 7}, "byte 10: 1 bytes after the end of ConfigRecord"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeMetadataRecord(tt.value)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v\nwant %s", err, tt.want)
			}
		})
	}
}

func mustID(s string) []byte {
	u := mustUUID(s)
	return u[:]
}

func mustUUID(s string) loader.UUID {
	u, err := loader.ParseUUID(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestClusterMetadataFromSnapshot: the newest .checkpoint snapshot is
// replayed first, then the log from the snapshot's end offset on, as a
// node loads its metadata; a snapshot that cannot be read is damage and
// the log is read from its start.
func TestClusterMetadataFromSnapshot(t *testing.T) {
	rc, ru := "read_committed", "read_uncommitted"
	snap, err := scenario.BuildInternal(scenario.ClusterMetadataTopic, 0, []scenario.InternalBatch{
		coord(scenario.TopicRecord("orders", scenario.TopicID("orders")), scenario.GroupConfigRecord("shared", ShareIsolationConfig, rc)),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		snapshot []byte
		topics   string
		level    txnindex.ShareIsolation
		damage   string
	}{
		{"the snapshot, then the log from its end", snap.Files[0].Data, "orders,other", txnindex.ShareReadUncommitted, ""},
		{"a damaged snapshot: the log from its start", []byte("not a snapshot at all, but long enough to look like a batch header......"), "other,stale", txnindex.ShareReadUncommitted, "00000000000000000002-0000000001.checkpoint"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := openBuilt(t, scenario.ClusterMetadataTopic, 0,
				coord(scenario.TopicRecord("stale", scenario.TopicID("stale")), scenario.GroupConfigRecord("x", ShareIsolationConfig, rc)),
				coord(scenario.GroupConfigRecord("shared", ShareIsolationConfig, ru), scenario.TopicRecord("other", scenario.TopicID("other"))))
			name := "00000000000000000002-0000000001.checkpoint"
			if err := os.WriteFile(filepath.Join(p.Dir, name), tt.snapshot, 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := loader.OpenPartition(p.Dir)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ReadClusterMetadata(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			var topics []string
			for _, n := range m.Topics {
				topics = append(topics, n)
			}
			slices.Sort(topics)
			if strings.Join(topics, ",") != tt.topics || m.ShareIsolation()["shared"] != tt.level {
				t.Errorf("topics %v, shared %q; want %s, %q", topics, m.ShareIsolation()["shared"], tt.topics, tt.level)
			}
			if tt.damage == "" && (len(m.Damage) != 0 || m.Snapshot != name) {
				t.Errorf("damage %v, snapshot %q", m.Damage, m.Snapshot)
			}
			if tt.damage != "" && (len(m.Damage) == 0 || !strings.Contains(m.Damage[0].Error(), tt.damage) || m.Snapshot != "") {
				t.Errorf("damage %v, snapshot %q", m.Damage, m.Snapshot)
			}
		})
	}
}
