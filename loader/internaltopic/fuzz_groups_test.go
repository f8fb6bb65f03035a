package internaltopic

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario"
	"github.com/txnscope/txnscope/txnindex"
)

// FuzzGroupRecordKey: any __consumer_offsets key of a newer group type
// decodes without panicking, into a bounded group id of a known kind, or
// is refused; a type past the table is skipped, not refused.
func FuzzGroupRecordKey(f *testing.F) {
	for _, typ := range []int16{3, 5, 11, 16, 17, 24, 25} {
		r := scenario.GroupRecord(typ, "g", false)
		f.Add(r.Key)
	}
	f.Add([]byte{0, 3, 0x7f, 0xff})
	f.Fuzz(func(t *testing.T, key []byte) {
		r, err := DecodeOffsetsRecord(key, []byte{0, 0})
		if err != nil || r.KeyVersion < 3 {
			return
		}
		switch {
		case r.Kind == KindUnknown && (int(r.KeyVersion) < len(groupRecordTypes) || r.Group != ""):
			t.Fatalf("type %d skipped with group %q", r.KeyVersion, r.Group)
		case r.Kind == KindOtherGroup && (r.GroupKind == "" || len(r.Group) > MaxStringLen || len(r.Group) > len(key)-4):
			t.Fatalf("%+v from %d bytes", r, len(key))
		}
	})
}

// FuzzShareStateRecord: any key and value decode without panicking; a
// decoded state's start offset is never below -1 (and not below 0 in a
// snapshot), and it lists no more state batches than its bytes hold.
func FuzzShareStateRecord(f *testing.F) {
	id := scenario.TopicID("orders")
	for _, r := range []scenario.InternalRecord{
		scenario.ShareSnapshotRecord("g", id, 3, 2, 40), scenario.ShareUpdateRecord("g", id, 3, -1),
		scenario.ShareUpdateRecord("g", id, 3, 41), scenario.ShareStateTombstone("g", id, 3),
	} {
		f.Add(r.Key, r.Value, r.Value == nil)
	}
	f.Fuzz(func(t *testing.T, key, value []byte, null bool) {
		if null {
			value = nil
		} else if value == nil {
			value = []byte{}
		}
		r, err := DecodeShareStateRecord(key, value)
		if err != nil || r.Unknown || r.Tombstone {
			return
		}
		if r.StartOffset < -1 || r.KeyType == ShareSnapshotType && r.StartOffset < 0 || r.StateBatches*shareBatchBytes > len(value) || len(r.Group) > len(key) {
			t.Fatalf("%+v from a %d-byte value", r, len(value))
		}
	})
}

// FuzzMetadataRecord: any value decodes without panicking into bounded
// strings, or is refused.
func FuzzMetadataRecord(f *testing.F) {
	rc := "read_committed"
	for _, r := range []scenario.InternalRecord{
		scenario.TopicRecord("orders", scenario.TopicID("orders")), scenario.GroupConfigRecord("g", ShareIsolationConfig, rc),
		scenario.ConfigRecord(2, "orders", RemoteStorageEnableConfig, nil),
	} {
		f.Add(r.Value)
	}
	f.Add([]byte{1, 9, 0})
	// One record of each kind and version (frame version, api key and
	// version: the value's first three bytes).
	seen := map[string]bool{}
	for _, data := range realMetadataSnapshots(f) {
		seg := loader.NewSegmentBytes(data, "snapshot.checkpoint", loader.DefaultScanOptions)
		for _, b := range seg.Batches {
			recs, _ := seg.Records(b)
			for _, r := range recs {
				if k := string(r.Value[:min(3, len(r.Value))]); !seen[k] {
					seen[k] = true
					f.Add(r.Value)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		r, err := DecodeMetadataRecord(value)
		if err != nil || r.Other {
			return
		}
		if n := len(r.TopicName) + len(r.ResourceName) + len(r.ConfigName) + len(r.ConfigValue); n > len(value) {
			t.Fatalf("%d bytes of strings from %d bytes", n, len(value))
		}
	})
}

// FuzzGroupTopicSegment: any bytes, scanned as a segment of
// __share_group_state or of the metadata log, read without panicking; the
// damage stays bounded and no more states come out than records went in.
func FuzzGroupTopicSegment(f *testing.F) {
	id := scenario.TopicID("orders")
	for _, tb := range []struct {
		topic string
		recs  []scenario.InternalRecord
	}{
		{ShareGroupStateTopic, []scenario.InternalRecord{scenario.ShareSnapshotRecord("g", id, 0, 1, 4), scenario.ShareUpdateRecord("g", id, 0, 6)}},
		{txnindex.ClusterMetadataTopic, []scenario.InternalRecord{scenario.TopicRecord("orders", id), scenario.GroupConfigRecord("g", ShareIsolationConfig, "read_committed")}},
	} {
		b, err := scenario.BuildInternal(tb.topic, 0, []scenario.InternalBatch{coord(tb.recs...)})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b.Files[0].Data)
	}
	for _, data := range realMetadataSnapshots(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		seg := loader.NewSegmentBytes(data, "00000000000000000000.log", loader.DefaultScanOptions)
		var records int64
		for _, b := range seg.Batches {
			records += int64(max(b.Records, 0))
		}
		part := func(topic string) *loader.Partition {
			return &loader.Partition{Dir: topic + "-0", Segments: []*loader.SegmentFiles{{Log: seg}},
				Input: &txnindex.Partition{Topic: topic, Batches: slices.Clone(seg.Batches), Segments: []txnindex.Segment{seg.Segment()},
					LogStartOffset: -1, HighWatermark: -1}}
		}
		s, err := ReadShareGroupState(part(ShareGroupStateTopic), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Damage) > maxDamage+1 || int64(len(s.States)) > s.Stats.Records || s.Stats.Records > records {
			t.Fatalf("%d damage, %d states of %d records", len(s.Damage), len(s.States), s.Stats.Records)
		}
		m, err := ReadClusterMetadata(part(txnindex.ClusterMetadataTopic), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Damage) > maxDamage+1 || int64(len(m.Topics)) > m.Stats.Records || m.Stats.Records > records {
			t.Fatalf("%d damage, %d topics of %d records", len(m.Damage), len(m.Topics), m.Stats.Records)
		}
	})
}

// realMetadataSnapshots returns the newest KRaft snapshot (.checkpoint)
// of each of the corpus's metadata logs: record batches a controller
// wrote, holding the TopicRecords and ConfigRecords no generated seed has.
func realMetadataSnapshots(f *testing.F) [][]byte {
	var out [][]byte
	for _, dir := range realInternalDirs(f, txnindex.ClusterMetadataTopic) {
		cps, _ := filepath.Glob(filepath.Join(dir, "*.checkpoint"))
		if len(cps) == 0 {
			continue
		}
		slices.Sort(cps)
		data, err := os.ReadFile(cps[len(cps)-1])
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}
