package txnindex

import "slices"

// ListCap is how many entries a list in an answer holds in detail: a
// diagnosis's open, unreplicated and compacted transactions and consumer
// groups, a cluster scan's open transactions and groups behind a
// partition. The rest are counted beside the list (its …_total field, a
// line "… and N more") and listed on request (diagnose --limit, GET
// …/diagnosis?limit=). An operator acts on the first few (the one that
// pins the LSO comes first, then by first offset); what a partition or a
// broker claims beyond them changes nothing to do and cost memory and
// output in proportion to the claim: a producer snapshot of 100,000 open
// producers made diagnose print 167 MB of JSON, a broker's DescribeProducers
// of 1,000 partitions × 1,000 producers made a scan take 4.35 GB.
const ListCap = 100

// MaxListLimit bounds the limit a request may ask for: ten thousand
// entries of a few kilobytes each is tens of megabytes of answer, as much
// as a page or a terminal can use.
const MaxListLimit = 10_000

// ListLimit is the number of entries a list shows for a requested limit:
// ListCap for 0 (none asked), the request's limit up to MaxListLimit.
func ListLimit(limit int) int {
	switch {
	case limit <= 0:
		return ListCap
	case limit > MaxListLimit:
		return MaxListLimit
	}
	return limit
}

// More is how many entries of a list of total entries, shown, are left
// out.
func More[T any](shown []T, total int) int { return max(total-len(shown), 0) }

// CapList keeps the first n entries of s (a copy, so that the rest are
// not kept reachable) and returns how many there were.
func CapList[T any](s []T, n int) ([]T, int) {
	if len(s) <= n {
		return s, len(s)
	}
	return slices.Clone(s[:n]), len(s)
}

// CapGroups keeps n of a partition's groups, those behind the LSO (the
// ones an open transaction holds up) before the others, in their order,
// and returns how many there were.
func CapGroups(gs []GroupPosition, n int) ([]GroupPosition, int) {
	if len(gs) <= n {
		return gs, len(gs)
	}
	keep := make([]bool, len(gs))
	k := 0
	for _, behind := range []bool{true, false} {
		for i := range gs {
			if k < n && gs[i].BehindLSO == behind {
				keep[i], k = true, k+1
			}
		}
	}
	out := make([]GroupPosition, 0, n)
	for i := range gs {
		if keep[i] {
			out = append(out, gs[i])
		}
	}
	return out, len(gs)
}

// MoreText says how many entries of a list are left out: "… and 99,900
// more open transactions".
func MoreText(n int, one, many string) string {
	w := many
	if n == 1 {
		w = one
	}
	return "… and " + Count(int64(n)) + " more " + w
}

// CapKinds cuts each kind's lists of group names to n, their totals kept.
func CapKinds(ks []GroupKindCount, n int) {
	for i := range ks {
		k := &ks[i]
		k.Groups, _ = CapList(k.Groups, n)
		k.Affected, _ = CapList(k.Affected, n)
	}
}
