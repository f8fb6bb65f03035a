package web

import (
	"strings"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// GroupKindsView is what the panel says of the groups beyond their
// committed offsets: how many of each kind read the partition, the share
// groups against the LSO, and the records of unknown types skipped.
type GroupKindsView struct {
	Kinds       []KindView
	Shares      []ShareGroupView
	SharesMore  int    // the share groups Shares leaves out (txnindex.ListCap)
	SharesRead  bool   // a share group state was read at all
	ShareSource string // where ("1 partition of __share_group_state")
	Skipped     string // the records skipped, in words; "" for none
}

// KindView is one kind's line: "2 classic groups: a, b; 1 held up".
type KindView struct {
	Kind     string // the kind's identifier (data-kind)
	Words    string // "consumer groups (KIP-848)"
	Count    int
	Groups   string // the names, comma-separated
	Affected int
}

// ShareGroupView is one share group's start offset against the LSO.
type ShareGroupView struct {
	Group     string
	Start     int64
	Isolation string // "read_committed", "read_uncommitted", "unknown"
	Held      bool   // held by the LSO, or perhaps (level unknown)
	Blocked   bool
	What      string
}

// groupKindsView is d's groups by kind; nil when the diagnosis counted no
// group and read no share group state.
func groupKindsView(d *diagnosis.Diagnosis) *GroupKindsView {
	if len(d.GroupsByKind) == 0 && d.ShareGroups == nil && d.SkippedNote == "" {
		return nil
	}
	v := &GroupKindsView{SharesRead: d.ShareGroups != nil, ShareSource: d.ShareGroupsSource, Skipped: d.SkippedNote,
		SharesMore: txnindex.More(d.ShareGroups, d.ShareGroupsTotal)}
	for _, c := range d.GroupsByKind {
		n, held := max(c.GroupsTotal, len(c.Groups)), max(c.AffectedTotal, len(c.Affected))
		w := present.GroupKindPluralWords(c.Kind)
		if n == 1 {
			w = present.GroupKindWords(c.Kind)
		}
		names := strings.Join(c.Groups, ", ")
		if more := txnindex.More(c.Groups, n); more > 0 {
			names += " " + txnindex.MoreText(more, "group", "groups")
		}
		v.Kinds = append(v.Kinds, KindView{Kind: string(c.Kind), Words: w, Count: n, Groups: names, Affected: held})
	}
	for _, s := range d.ShareGroups {
		sv := ShareGroupView{Group: s.Group, Start: s.StartOffset, Isolation: string(s.Isolation), Held: s.Held || s.MayBeHeld, Blocked: s.Blocked}
		if sv.Isolation == "" {
			sv.Isolation = "unknown"
		}
		switch {
		case s.Blocked:
			sv.What = "blocked: waiting at the LSO, acquires nothing until it moves"
		case s.Held:
			sv.What = txnindex.Plural(s.OffsetsToLSO, "offset", "offsets") + " to the LSO, then waits at it"
		case s.MayBeHeld:
			sv.What = "held at the LSO if it reads read_committed (its isolation level was not read: " + s.IsolationSource + ")"
		case s.BehindLSO:
			sv.What = "reads uncommitted, to the high watermark: not held"
		default:
			sv.What = "past the LSO: not held"
		}
		v.Shares = append(v.Shares, sv)
	}
	return v
}
