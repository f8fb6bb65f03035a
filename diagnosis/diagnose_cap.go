package diagnosis

import (
	"slices"

	"github.com/txnscope/txnscope/txnindex"
)

// ListTotals count the entries of a Diagnosis's lists, which hold the
// first Options.Limit of them in detail (ListCap by default): a
// partition's open transactions are bounded by what it holds, but a
// producer snapshot of 100,000 open producers made a diagnosis of 1.2 GB
// and 167 MB of JSON, each transaction with its reason and commands.
// Counts, indexes and metrics read the totals, never a list's length.
type ListTotals struct {
	OpenTransactionsTotal   int `json:"open_transactions_total"`
	UnreplicatedTotal       int `json:"unreplicated_transactions_total"`
	MarkerRemovedTotal      int `json:"compacted_transactions_total"`
	TxnIndexMismatchesTotal int `json:"txnindex_mismatches_total"`
}

// OpenCount is how many transactions are open on the partition, listed or
// not.
func (d *Diagnosis) OpenCount() int { return max(d.OpenTransactionsTotal, len(d.OpenTransactions)) }

// pinsLSO reports whether open transaction ti is where the LSO stands
// (openTxnReport's PinsLSO).
func (l plog) pinsLSO(ti int, lso int64) bool {
	return max(l.Txns[ti].FirstOffset, l.LSOFloor()) == lso
}

// pinMissing reports whether transaction pin (-1: none), past the limit,
// is to be listed after the first ones: the one that pins the LSO is
// listed whatever the limit (PinnedBy points into the list), unless one
// listed already pins it from as early.
func (l plog) pinMissing(listed []OpenTxnReport, pin int) bool {
	if pin < 0 {
		return false
	}
	for i := range listed {
		if listed[i].PinsLSO && listed[i].FirstOffset <= l.Txns[pin].FirstOffset {
			return false
		}
	}
	return true
}

// capLists cuts the lists Diagnose builds whole (bounded by the log, but
// not by what an answer should carry) to the limit, counting them.
func (d *Diagnosis) capLists() {
	n := txnindex.ListLimit(d.limit)
	d.Unreplicated, d.UnreplicatedTotal = capKeepPin(d, d.Unreplicated, n)
	d.TxnIndexMismatches, d.TxnIndexMismatchesTotal = txnindex.CapList(d.TxnIndexMismatches, n)
}

// capKeepPin is CapList for a list PinnedBy may point into: the pinner
// stays, after the first n.
func capKeepPin(d *Diagnosis, s []OpenTxnReport, n int) ([]OpenTxnReport, int) {
	if len(s) <= n {
		return s, len(s)
	}
	out := slices.Clone(s[:n])
	for i := n; i < len(s); i++ {
		if d.PinnedBy == &s[i] {
			out = append(out, s[i])
			d.PinnedBy = &out[len(out)-1]
		}
	}
	for i := range n {
		if d.PinnedBy == &s[i] {
			d.PinnedBy = &out[i]
		}
	}
	return out, len(s)
}

// capGroups cuts the groups' lists to n entries, once they are counted by
// kind (GroupsByKind, which counts them all): the committed offsets
// (CapGroups), the share groups (held ones first) and the names of each
// kind's groups.
func (d *Diagnosis) capGroups(n int) {
	if d.ConsumerGroups != nil {
		d.ConsumerGroups, d.ConsumerGroupsTotal = txnindex.CapGroups(d.ConsumerGroups, n)
	}
	if d.ShareGroups != nil {
		d.ShareGroups, d.ShareGroupsTotal = capShares(d.ShareGroups, n)
	}
	txnindex.CapKinds(d.GroupsByKind, n)
}

// capShares keeps n share groups, the held (or perhaps held) ones first,
// in their order.
func capShares(ss []txnindex.SharePosition, n int) ([]txnindex.SharePosition, int) {
	if len(ss) <= n {
		return ss, len(ss)
	}
	out := make([]txnindex.SharePosition, 0, n)
	for _, held := range []bool{true, false} {
		for _, s := range ss {
			if len(out) < n && (s.Held || s.MayBeHeld) == held {
				out = append(out, s)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b txnindex.SharePosition) int {
		return txnindex.CompareShareStates(a.ShareGroupState, b.ShareGroupState)
	})
	return out, len(ss)
}
