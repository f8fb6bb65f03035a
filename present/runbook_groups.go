package present

import (
	"fmt"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// GroupKindWords names the kind for people: "consumer group (KIP-848)".
func GroupKindWords(k txnindex.GroupKind) string {
	switch k {
	case txnindex.GroupClassic:
		return "classic group"
	case txnindex.GroupConsumer:
		return "consumer group (KIP-848)"
	case txnindex.GroupShare:
		return "share group (KIP-932)"
	case txnindex.GroupStreams:
		return "streams group (KIP-1071)"
	}
	return "group of an unknown kind"
}

// GroupKindPluralWords is GroupKindWords for several groups: "consumer
// groups (KIP-848)".
func GroupKindPluralWords(k txnindex.GroupKind) string {
	w := GroupKindWords(k)
	if i := strings.Index(w, "group"); i >= 0 {
		return w[:i] + "groups" + w[i+len("group"):]
	}
	return w
}

// GroupKindLabel names a group of kind k in a runbook line: "consumer group",
// "classic group", or "group" when the kind is unknown.
func GroupKindLabel(k txnindex.GroupKind) string {
	if k == "" {
		return "group"
	}
	return string(k) + " group"
}

// runbookGroupKinds writes the count of groups by kind and the records
// skipped.
func runbookGroupKinds(sb *strings.Builder, d *diagnosis.Diagnosis) {
	if len(d.GroupsByKind) > 1 || len(d.GroupsByKind) == 1 && d.GroupsByKind[0].Kind != "" {
		var parts []string
		for _, c := range d.GroupsByKind {
			n := max(c.GroupsTotal, len(c.Groups))
			w := GroupKindPluralWords(c.Kind)
			if n == 1 {
				w = GroupKindWords(c.Kind)
			}
			held := "held up"
			if c.Kind == txnindex.GroupShare && slices.ContainsFunc(d.ShareGroups, func(s txnindex.SharePosition) bool { return s.MayBeHeld }) {
				held = "held up or perhaps held up (isolation level unknown)"
			}
			parts = append(parts, fmt.Sprintf("%s %s (%s), %s %s", txnindex.Count(int64(n)), w, quoteList(c.Groups, n), txnindex.Count(int64(max(c.AffectedTotal, len(c.Affected)))), held))
		}
		fmt.Fprintf(sb, "  groups that read this partition, by kind: %s\n", strings.Join(parts, "; "))
	}
	if d.SkippedNote != "" {
		fmt.Fprintf(sb, "  skipped: %s\n", d.SkippedNote)
	}
}

// runbookShareGroups writes the share groups against the LSO.
func runbookShareGroups(sb *strings.Builder, d *diagnosis.Diagnosis) {
	if len(d.ShareGroups) == 0 {
		return
	}
	fmt.Fprintf(sb, "  share groups (KIP-932) against the LSO %d (read_committed ones acquire records only below it; read_uncommitted ones read to the high watermark):\n", d.LastStableOffset)
	for _, s := range d.ShareGroups {
		if s.Isolation == txnindex.ShareIsolationUnknown {
			fmt.Fprintf(sb, "    share.isolation.level %s\n", s.IsolationSource)
			break
		}
	}
	for _, s := range d.ShareGroups {
		fmt.Fprintf(sb, "    %s\n", ShareLine(s))
	}
	if n := txnindex.More(d.ShareGroups, d.ShareGroupsTotal); n > 0 {
		fmt.Fprintf(sb, "    %s\n", txnindex.MoreText(n, "share group", "share groups"))
	}
}

// quoteList is names quoted and joined: "a", "b" and 3 more, of total
// names (names may list fewer: txnindex.ListCap).
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
		s += fmt.Sprintf(" and %s more", txnindex.Count(int64(total-shown)))
	}
	return s
}

// ShareLine is the share group's place in words, as the runbooks print it:
// share group "s" at start offset 5 (read_committed): BLOCKED: ...
func ShareLine(s txnindex.SharePosition) string {
	lvl := string(s.Isolation)
	if s.Isolation == txnindex.ShareIsolationUnknown {
		lvl = "isolation level unknown"
	}
	var what string
	switch {
	case s.Blocked:
		what = "BLOCKED: waiting at the LSO, acquires nothing until it moves"
	case s.Held:
		what = txnindex.Plural(s.OffsetsToLSO, "offset", "offsets") + " to the LSO, then waits at it"
	case s.MayBeHeld && s.OffsetsToLSO == 0:
		what = "waits at the LSO if it reads read_committed"
	case s.MayBeHeld:
		what = txnindex.Plural(s.OffsetsToLSO, "offset", "offsets") + " below the LSO: held there if it reads read_committed"
	case s.BehindLSO:
		what = "reads past the LSO to the high watermark: not held"
	default:
		what = "past the LSO: not held"
	}
	return fmt.Sprintf("share group %q at start offset %d (%s): %s", s.Group, s.StartOffset, lvl, what)
}
