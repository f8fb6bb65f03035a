package txnindex

import (
	"fmt"
	"slices"
	"strings"
)

// GroupEvidence is what the internal topics (or a cluster's read-only
// APIs) say of the groups beyond their committed offsets, embedded in
// InternalEvidence: the share groups' state, their isolation level, and
// how many records of types no reader knows were skipped.
type GroupEvidence struct {
	// ShareStates are share groups' start offsets on any partitions;
	// HaveShareStates says they were read at all (__share_group_state,
	// DescribeShareGroupOffsets), ShareSource where.
	ShareStates     []ShareGroupState
	HaveShareStates bool
	ShareSource     string
	// ShareIsolation is each share group's share.isolation.level where
	// set; IsolationKnown says the group configs were read (a group
	// absent then has Kafka's default), IsolationSource where, or why
	// they were not.
	ShareIsolation  map[string]ShareIsolation
	IsolationKnown  bool
	IsolationSource string
	// SkippedRecords counts the internal topics' records of a type no
	// Kafka release writes, skipped as the coordinators skip them
	// (KIP-915); SkippedWhere names the topics.
	SkippedRecords int64
	SkippedWhere   string
}

// TopicEvidence is what the KRaft metadata log says of the topics, embedded
// in InternalEvidence.
type TopicEvidence struct {
	// RemoteStorage is each topic's remote.storage.enable as its
	// ConfigRecord sets it ("true", "false"), by topic; nil when no
	// metadata log was read.
	RemoteStorage map[string]string
}

// GroupsJoin is what a diagnosis says of the groups beyond their
// committed offsets, embedded in DiagnosisJoin.
type GroupsJoin struct {
	// ShareGroups are the share groups with a state on the partition,
	// placed against its LSO; absent when no share group state was read.
	ShareGroups       []SharePosition `json:"share_groups,omitempty"`
	ShareGroupsSource string          `json:"share_groups_source,omitempty"`
	// ShareGroupsTotal counts the share groups; ShareGroups holds ListCap
	// of them (or a diagnosis's limit), the held ones first.
	ShareGroupsTotal int `json:"share_groups_total,omitempty"`
	// GroupsByKind counts and names the groups of each kind that read
	// the partition (committed an offset, or hold a share-partition
	// state), and those held up by its LSO.
	GroupsByKind []GroupKindCount `json:"groups_by_kind,omitempty"`
	// SkippedGroupRecords counts records of unknown types skipped in the
	// internal topics (KIP-915); SkippedNote says so in words.
	SkippedGroupRecords int64  `json:"skipped_group_records,omitempty"`
	SkippedNote         string `json:"skipped_group_records_note,omitempty"`
}

// joinGroups places the share groups and counts the groups by kind, after
// Join placed the committed offsets.
func (l *Log) joinGroups(d *Diagnosis, ev InternalEvidence) {
	if ev.HaveShareStates {
		src := ev.IsolationSource
		if !ev.IsolationKnown && src == "" {
			src = "unknown: no group config was read (Kafka's default share.isolation.level is read_uncommitted)"
		}
		d.ShareGroups = PlaceShareGroups(ev.ShareStates, l.Topic, l.Partition, d.LastStableOffset, ev.ShareIsolation, ev.IsolationKnown, src)
		if d.ShareGroups == nil {
			d.ShareGroups = []SharePosition{}
		}
		d.ShareGroupsSource = ev.ShareSource
	}
	d.GroupsByKind = GroupsByKind(d.ConsumerGroups, d.ShareGroups)
	if t := d.Tiered; t != nil {
		// The topic config is evidence of its own (KIP-405): the
		// detection from the disk (loader.detectTiered) needed a sign
		// besides the checkpoint.
		switch v, ok := ev.RemoteStorage[l.Topic]; {
		case ok && v == "true":
			t.Evidence = append(slices.Clip(t.Evidence), fmt.Sprintf("%s sets remote.storage.enable=true for the topic (its ConfigRecord)", ClusterMetadataTopic))
		case ok:
			t.Evidence = append(slices.Clip(t.Evidence), fmt.Sprintf("%s sets remote.storage.enable=%s for the topic now: remote storage was turned off after these segments were copied (KIP-950)", ClusterMetadataTopic, v))
		}
	}
	if ev.SkippedRecords > 0 {
		d.SkippedGroupRecords = ev.SkippedRecords
		d.SkippedNote = fmt.Sprintf("%s of a type no Kafka release writes skipped in %s, as the coordinators skip them (KIP-915)",
			Plural(ev.SkippedRecords, "record", "records"), ev.SkippedWhere)
	}
}

// GroupsByKind counts the groups of each kind among gs (their Kind; ""
// when unknown) and ss (share groups), naming them and those held up: a
// group with a committed offset at or below the LSO, a share group held
// or perhaps held (its level unknown). Kinds with no group are left out;
// nil when there is no group at all.
func GroupsByKind(gs []GroupPosition, ss []SharePosition) []GroupKindCount {
	by := map[GroupKind]*GroupKindCount{}
	get := func(k GroupKind) *GroupKindCount {
		c := by[k]
		if c == nil {
			c = &GroupKindCount{Kind: k, Groups: []string{}, Affected: []string{}}
			by[k] = c
		}
		return c
	}
	for _, g := range gs {
		c := get(g.Kind)
		c.Groups = append(c.Groups, g.Group)
		if g.BehindLSO {
			c.Affected = append(c.Affected, g.Group)
		}
	}
	for _, s := range ss {
		c := get(GroupShare)
		c.Groups = append(c.Groups, s.Group)
		if s.Held || s.MayBeHeld {
			c.Affected = append(c.Affected, s.Group)
		}
	}
	var out []GroupKindCount
	for _, k := range append(slices.Clone(GroupKinds), "") {
		if c := by[k]; c != nil {
			c.Groups, c.Affected = slices.Compact(c.Groups), slices.Compact(c.Affected)
			c.GroupsTotal, c.AffectedTotal = len(c.Groups), len(c.Affected)
			out = append(out, *c)
		}
	}
	return out
}

// KindLabel names a group of kind k in a runbook line: "consumer group",
// "classic group", or "group" when the kind is unknown.
func (k GroupKind) KindLabel() string {
	if k == "" {
		return "group"
	}
	return string(k) + " group"
}

// runbookGroupKinds writes the count of groups by kind and the records
// skipped.
func (d *Diagnosis) runbookGroupKinds(sb *strings.Builder) {
	if len(d.GroupsByKind) > 1 || len(d.GroupsByKind) == 1 && d.GroupsByKind[0].Kind != "" {
		var parts []string
		for _, c := range d.GroupsByKind {
			n := max(c.GroupsTotal, len(c.Groups))
			w := c.Kind.PluralWords()
			if n == 1 {
				w = c.Kind.Words()
			}
			held := "held up"
			if c.Kind == GroupShare && slices.ContainsFunc(d.ShareGroups, func(s SharePosition) bool { return s.MayBeHeld }) {
				held = "held up or perhaps held up (isolation level unknown)"
			}
			parts = append(parts, fmt.Sprintf("%s %s (%s), %s %s", Count(int64(n)), w, quoteList(c.Groups, n), Count(int64(max(c.AffectedTotal, len(c.Affected)))), held))
		}
		fmt.Fprintf(sb, "  groups that read this partition, by kind: %s\n", strings.Join(parts, "; "))
	}
	if d.SkippedNote != "" {
		fmt.Fprintf(sb, "  skipped: %s\n", d.SkippedNote)
	}
}

// runbookShareGroups writes the share groups against the LSO.
func (d *Diagnosis) runbookShareGroups(sb *strings.Builder) {
	if len(d.ShareGroups) == 0 {
		return
	}
	fmt.Fprintf(sb, "  share groups (KIP-932) against the LSO %d (read_committed ones acquire records only below it; read_uncommitted ones read to the high watermark):\n", d.LastStableOffset)
	for _, s := range d.ShareGroups {
		if s.Isolation == ShareIsolationUnknown {
			fmt.Fprintf(sb, "    share.isolation.level %s\n", s.IsolationSource)
			break
		}
	}
	for _, s := range d.ShareGroups {
		fmt.Fprintf(sb, "    %s\n", s.Line())
	}
	if n := More(d.ShareGroups, d.ShareGroupsTotal); n > 0 {
		fmt.Fprintf(sb, "    %s\n", MoreText(n, "share group", "share groups"))
	}
}

// quoteList is names quoted and joined: "a", "b" and 3 more, of total
// names (names may list fewer: ListCap).
func quoteList(names []string, total int) string {
	const show = 5
	q := make([]string, 0, min(len(names), show))
	for i, n := range names {
		if i == show {
			break
		}
		q = append(q, fmt.Sprintf("%q", n))
	}
	s := strings.Join(q, ", ")
	if shown := min(len(names), show); total > shown {
		s += fmt.Sprintf(" and %s more", Count(int64(total-shown)))
	}
	return s
}
