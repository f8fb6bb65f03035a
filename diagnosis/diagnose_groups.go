package diagnosis

import (
	"fmt"
	"slices"

	"github.com/txnscope/txnscope/txnindex"
)

// GroupsJoin is what a diagnosis says of the groups beyond their
// committed offsets, embedded in DiagnosisJoin.
type GroupsJoin struct {
	// ShareGroups are the share groups with a state on the partition,
	// placed against its LSO; absent when no share group state was read.
	ShareGroups       []txnindex.SharePosition `json:"share_groups,omitempty"`
	ShareGroupsSource string                   `json:"share_groups_source,omitempty"`
	// ShareGroupsTotal counts the share groups; ShareGroups holds ListCap
	// of them (or a diagnosis's limit), the held ones first.
	ShareGroupsTotal int `json:"share_groups_total,omitempty"`
	// GroupsByKind counts and names the groups of each kind that read
	// the partition (committed an offset, or hold a share-partition
	// state), and those held up by its LSO.
	GroupsByKind []txnindex.GroupKindCount `json:"groups_by_kind,omitempty"`
	// SkippedGroupRecords counts records of unknown types skipped in the
	// internal topics (KIP-915); SkippedNote says so in words.
	SkippedGroupRecords int64  `json:"skipped_group_records,omitempty"`
	SkippedNote         string `json:"skipped_group_records_note,omitempty"`
}

// joinGroups places the share groups and counts the groups by kind, after
// Join placed the committed offsets.
func (l plog) joinGroups(d *Diagnosis, ev txnindex.InternalEvidence) {
	if ev.HaveShareStates {
		src := ev.IsolationSource
		if !ev.IsolationKnown && src == "" {
			src = "unknown: no group config was read (Kafka's default share.isolation.level is read_uncommitted)"
		}
		d.ShareGroups = txnindex.PlaceShareGroups(ev.ShareStates, l.Topic, l.Partition, d.LastStableOffset, ev.ShareIsolation, ev.IsolationKnown, src)
		if d.ShareGroups == nil {
			d.ShareGroups = []txnindex.SharePosition{}
		}
		d.ShareGroupsSource = ev.ShareSource
	}
	d.GroupsByKind = txnindex.GroupsByKind(d.ConsumerGroups, d.ShareGroups)
	if t := d.Tiered; t != nil {
		// The topic config is evidence of its own (KIP-405): the
		// detection from the disk (loader.detectTiered) needed a sign
		// besides the checkpoint.
		switch v, ok := ev.RemoteStorage[l.Topic]; {
		case ok && v == "true":
			t.Evidence = append(slices.Clip(t.Evidence), fmt.Sprintf("%s sets remote.storage.enable=true for the topic (its ConfigRecord)", txnindex.ClusterMetadataTopic))
		case ok:
			t.Evidence = append(slices.Clip(t.Evidence), fmt.Sprintf("%s sets remote.storage.enable=%s for the topic now: remote storage was turned off after these segments were copied (KIP-950)", txnindex.ClusterMetadataTopic, v))
		}
	}
	if ev.SkippedRecords > 0 {
		d.SkippedGroupRecords = ev.SkippedRecords
		d.SkippedNote = fmt.Sprintf("%s of a type no Kafka release writes skipped in %s, as the coordinators skip them (KIP-915)",
			txnindex.Plural(ev.SkippedRecords, "record", "records"), ev.SkippedWhere)
	}
}
