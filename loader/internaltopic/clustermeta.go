package internaltopic

import (
	"fmt"
	"maps"
	"path/filepath"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// The KRaft metadata records read here (the apiKey of
// metadata/src/main/resources/common/metadata/*Record.json), and the
// config resource types of a ConfigRecord (ConfigResource.Type).
const (
	topicRecordType       = 2
	configRecordType      = 4
	removeTopicRecordType = 9

	configResourceTopic = 2
	configResourceGroup = 32

	// metadataFrameVersion is the frame AbstractApiMessageSerde writes
	// before each metadata record (DEFAULT_FRAME_VERSION).
	metadataFrameVersion = 1
)

// Configs the diagnosis reads from __cluster_metadata.
const (
	ShareIsolationConfig      = "share.isolation.level" // a group config (KIP-932, KAFKA-16729)
	RemoteStorageEnableConfig = "remote.storage.enable" // a topic config (KIP-405)
)

// ClusterMetadata is what the KRaft metadata log says that the diagnosis
// uses: topic names by id, and the topic and group configs set.
type ClusterMetadata struct {
	// Topics are the live topics' names by id (TopicRecord, less those a
	// RemoveTopicRecord removed).
	Topics map[loader.UUID]string
	// GroupConfigs and TopicConfigs are the dynamic configs set, by
	// resource name, then config name (ConfigRecord; a null value
	// deletes one).
	GroupConfigs map[string]map[string]string
	TopicConfigs map[string]map[string]string
	// Snapshot is the .checkpoint the state was read from before the
	// log's records, "" when none was.
	Snapshot string
	Stats    Stats
	Damage   []*loader.FormatError
}

// MetadataRecord is one decoded metadata record, of the types read here.
type MetadataRecord struct {
	Type, Version int16
	// TopicRecord, RemoveTopicRecord.
	TopicID   loader.UUID
	TopicName string
	// ConfigRecord.
	ResourceType int8
	ResourceName string
	ConfigName   string
	ConfigValue  string
	ConfigNull   bool // a null value: the config is deleted
	// Other: a record type not read here (partitions, brokers, features,
	// ...), left undecoded.
	Other bool
}

// DecodeMetadataRecord decodes a __cluster_metadata record value as
// MetadataRecordSerde reads it: an unsigned varint frame version (1),
// the record type and its version, then the record, flexible from
// version 0. TopicRecord, RemoveTopicRecord and ConfigRecord are decoded
// from their message definitions (kmsg has no metadata records); the
// other types are Other.
func DecodeMetadataRecord(value []byte) (MetadataRecord, error) {
	var r MetadataRecord
	if value == nil {
		return r, fmt.Errorf("null value: a metadata record always has one")
	}
	w := wire{b: value}
	if f := w.uvarint("frame version"); w.err == nil && f != metadataFrameVersion {
		return r, fmt.Errorf("frame version %d: want %d (AbstractApiMessageSerde)", f, metadataFrameVersion)
	}
	typ, ver := w.uvarint("record type"), w.uvarint("record version")
	if w.err != nil {
		return r, w.err
	}
	if typ > 0x7fff || ver > 0x7fff {
		return r, fmt.Errorf("record type %d version %d: want at most %d", typ, ver, 0x7fff)
	}
	r.Type, r.Version = int16(typ), int16(ver)
	name := ""
	switch r.Type {
	case topicRecordType:
		name = "TopicRecord"
		r.TopicName, _ = w.compactStr("topic name", false)
		r.TopicID = w.uuid("topic id")
	case removeTopicRecordType:
		name = "RemoveTopicRecord"
		r.TopicID = w.uuid("topic id")
	case configRecordType:
		name = "ConfigRecord"
		r.ResourceType = w.int8("resource type")
		r.ResourceName, _ = w.compactStr("resource name", false)
		r.ConfigName, _ = w.compactStr("config name", false)
		r.ConfigValue, r.ConfigNull = w.compactStr("config value", true)
	default:
		r.Other = true
		return r, nil
	}
	if r.Version != 0 {
		// Version 0 is the only one of each; a later one may add
		// fields before the tagged ones, so it is not guessed at.
		return r, fmt.Errorf("%s v%d: want v0", name, r.Version)
	}
	w.skipTags(name)
	w.end(name)
	if w.err != nil {
		return r, fmt.Errorf("%s v0 of %d bytes: %v", name, len(value), w.err)
	}
	return r, nil
}

// ReadClusterMetadata replays the KRaft metadata log's partition
// (__cluster_metadata-0) as a broker's metadata image does for the records
// read here: a TopicRecord names a topic id, a RemoveTopicRecord drops the
// topic and its configs (ConfigurationsDelta), a ConfigRecord sets a
// config or, with a null value, deletes it. Control batches (leader
// changes, snapshot headers) are skipped. As a node loads it at start,
// the newest .checkpoint snapshot is read first (a snapshot is record
// batches, the image up to its end offset), then the log's records from
// the snapshot's end offset on: the metadata log deletes segments a
// snapshot covers (metadata.max.retention.ms), so a long-lived topic's
// TopicRecord may be in the snapshot alone. A snapshot that cannot be read
// is damage, and the log is then read from its start.
func ReadClusterMetadata(p *loader.Partition, l *txnindex.Log) (*ClusterMetadata, error) {
	if err := checkTopic(p, txnindex.ClusterMetadataTopic); err != nil {
		return nil, err
	}
	if l == nil {
		l = p.Build()
	}
	m := &ClusterMetadata{Topics: map[loader.UUID]string{}, GroupConfigs: map[string]map[string]string{}, TopicConfigs: map[string]map[string]string{}}
	var dmg damage
	from := l.LogStartOffset
	if end, ok := m.readSnapshot(p, &dmg); ok {
		from = max(from, end)
	}
	for i := range l.Batches {
		b := &l.Batches[i]
		if b.Records == 0 || b.IsControl() || b.LastOffset() < from {
			continue
		}
		recs, seg, err := records(p, b, &dmg)
		if err != nil {
			return nil, err
		}
		m.replayAll(recs, seg, b, from, &dmg)
	}
	m.Damage = dmg.done()
	return m, nil
}

// readSnapshot replays the newest snapshot of p; ok false when there is
// none or it could not be read whole.
func (m *ClusterMetadata) readSnapshot(p *loader.Partition, dmg *damage) (end int64, ok bool) {
	var newest *loader.KRaftSnapshot
	for i := range p.KRaftSnapshots {
		if s := &p.KRaftSnapshots[i]; newest == nil || s.EndOffset > newest.EndOffset {
			newest = s
		}
	}
	if newest == nil {
		return 0, false
	}
	f, err := loader.OpenSegment(filepath.Join(p.Dir, newest.Name))
	if err != nil {
		dmg.add(&loader.FormatError{File: newest.Name, Item: "snapshot", Msg: fmt.Sprintf("not read (%v): the log is read from its start instead", err)})
		return 0, false
	}
	defer f.Close()
	if len(f.Damage) > 0 {
		// A snapshot is read whole or not at all: an image with a
		// hole in it would be a state no node ever had.
		dmg.add(&loader.FormatError{File: newest.Name, Offset: f.Damage[0].Offset, Item: "snapshot", Msg: fmt.Sprintf("%v: the log is read from its start instead", f.Damage[0])})
		return 0, false
	}
	saved := *m
	saved.Topics, saved.GroupConfigs, saved.TopicConfigs = maps.Clone(m.Topics), cloneConfigs(m.GroupConfigs), cloneConfigs(m.TopicConfigs)
	for i := range f.Batches {
		b := &f.Batches[i]
		if b.Records == 0 || b.IsControl() {
			continue
		}
		recs, err := f.Records(*b)
		if err != nil {
			*m = saved
			dmg.add(&loader.FormatError{File: newest.Name, Offset: b.Position(), Item: "snapshot", Msg: fmt.Sprintf("%v: the log is read from its start instead", err)})
			return 0, false
		}
		m.replayAll(recs, f, b, -1, dmg)
	}
	m.Snapshot = newest.Name
	return newest.EndOffset, true
}

// replayAll decodes and replays the records of b from offset from on.
func (m *ClusterMetadata) replayAll(recs []loader.Record, seg *loader.SegmentFile, b *txnindex.Batch, from int64, dmg *damage) {
	for j := range recs {
		if recs[j].Offset < from {
			continue
		}
		m.Stats.Records++
		r, err := DecodeMetadataRecord(recs[j].Value)
		if err != nil {
			m.Stats.Damaged++
			dmg.add(recordErr(seg, b, recs[j].Offset, err))
			continue
		}
		m.replay(r)
	}
}

func cloneConfigs(c map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(c))
	for k, v := range c {
		out[k] = maps.Clone(v)
	}
	return out
}

func (m *ClusterMetadata) replay(r MetadataRecord) {
	switch r.Type {
	case topicRecordType:
		m.Topics[r.TopicID] = r.TopicName
	case removeTopicRecordType:
		if name, ok := m.Topics[r.TopicID]; ok {
			delete(m.TopicConfigs, name)
		}
		delete(m.Topics, r.TopicID)
	case configRecordType:
		var set map[string]map[string]string
		switch r.ResourceType {
		case configResourceGroup:
			set = m.GroupConfigs
		case configResourceTopic:
			set = m.TopicConfigs
		default:
			m.Stats.OtherRecords++
			return
		}
		cs := set[r.ResourceName]
		if r.ConfigNull {
			delete(cs, r.ConfigName)
			if len(cs) == 0 {
				delete(set, r.ResourceName)
			}
			return
		}
		if cs == nil {
			cs = map[string]string{}
			set[r.ResourceName] = cs
		}
		cs[r.ConfigName] = r.ConfigValue
	default:
		m.Stats.OtherRecords++
	}
}

// ShareIsolation is each group's share.isolation.level as set, by group
// (groups without it set have Kafka's default).
func (m *ClusterMetadata) ShareIsolation() map[string]txnindex.ShareIsolation {
	out := map[string]txnindex.ShareIsolation{}
	for g, cs := range m.GroupConfigs {
		if v, ok := cs[ShareIsolationConfig]; ok {
			out[g] = txnindex.ShareIsolation(v)
		}
	}
	return out
}

// Merge adds o (a second metadata log directory: only one is expected).
func (m *ClusterMetadata) Merge(o *ClusterMetadata) {
	maps.Copy(m.Topics, o.Topics)
	maps.Copy(m.GroupConfigs, o.GroupConfigs)
	maps.Copy(m.TopicConfigs, o.TopicConfigs)
	m.Stats.add(o.Stats)
	m.Damage = append(m.Damage, o.Damage...)
}
