package live

// What a scan keeps of a broker's answer is bounded by what it asked: the
// partitions of its request, each once, and per partition at most
// txnindex.ListCap entries of each list, the rest counted. A broker
// answers a DescribeProducers or an OffsetFetch with whatever it likes:
// 1,000 partitions × 1,000 producers made `diagnose --bootstrap` take
// 4.35 GB, and 2,000 brokers each claiming one group over 2,000
// partitions made 4,000,000 groups_behind entries.

import (
	"cmp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/txnindex"
)

// openOf is a partition's producers with a current transaction, each
// once (a producer id listed again is the same producer: the leader's
// producer state holds one entry a producer id,
// ProducerStateManager.producers), the first limit (txnindex.ListLimit) by
// first offset (the one that pins the LSO first), and how many there are.
func openOf(aps []kmsg.DescribeProducersResponseTopicPartitionActiveProducer, limit int) ([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, int) {
	var open []kmsg.DescribeProducersResponseTopicPartitionActiveProducer
	seen := map[int64]bool{}
	for _, ap := range aps {
		if ap.CurrentTxnStartOffset >= 0 && !seen[ap.ProducerID] {
			seen[ap.ProducerID] = true
			open = append(open, ap)
		}
	}
	slices.SortStableFunc(open, func(a, b kmsg.DescribeProducersResponseTopicPartitionActiveProducer) int {
		return cmp.Compare(a.CurrentTxnStartOffset, b.CurrentTxnStartOffset)
	})
	n := len(open)
	return slices.Clone(open[:min(n, txnindex.ListLimit(limit))]), n
}

// capGroups sorts the groups behind a partition by name, keeps the first
// limit (txnindex.ListLimit) and returns how many there were.
func capGroups(gs []GroupBehind, limit int) ([]GroupBehind, int) {
	slices.SortFunc(gs, func(a, b GroupBehind) int { return strings.Compare(a.Group, b.Group) })
	return slices.Clone(gs[:min(len(gs), txnindex.ListLimit(limit))]), len(gs)
}

// claimedOnce keeps each group on one broker of those whose ListGroups
// listed it, the lowest id: a group has one coordinator (the leader of
// its __consumer_offsets partition), and two brokers list it only while
// that leadership moves. Asking every claimant would multiply the
// group's OffsetFetch answers, and its entries, by the brokers that claim
// it. It returns how many groups more than one broker listed.
func claimedOnce(groups map[int32][]kmsg.ListGroupsResponseGroup) int {
	ids := make([]int32, 0, len(groups))
	for b := range groups {
		ids = append(ids, b)
	}
	slices.Sort(ids)
	seen := map[string]bool{}
	dup := map[string]bool{}
	for _, b := range ids {
		groups[b] = slices.DeleteFunc(groups[b], func(g kmsg.ListGroupsResponseGroup) bool {
			if seen[g.Group] {
				dup[g.Group] = true
				return true
			}
			seen[g.Group] = true
			return false
		})
	}
	return len(dup)
}

// openPIDs indexes a watched partition's producers with a current
// transaction by producer id, and picks those the coordinators are asked
// about: the ones the engine's diagnosis lists, and the first
// txnindex.ListCap by first offset (openOf), each once. Every open
// producer of the answer was asked about once per poll, and each one not
// in the engine's window became an entry of the update.
func openPIDs(prods []kmsg.DescribeProducersResponseTopicPartitionActiveProducer, d *diagnosis.Diagnosis) (map[int64]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, []int64) {
	byPID := map[int64]kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}
	for _, ap := range prods {
		if _, ok := byPID[ap.ProducerID]; !ok && ap.CurrentTxnStartOffset >= 0 {
			byPID[ap.ProducerID] = ap
		}
	}
	var pids []int64
	seen := map[int64]bool{}
	pick := func(pid int64) {
		if _, ok := byPID[pid]; ok && !seen[pid] {
			seen[pid] = true
			pids = append(pids, pid)
		}
	}
	if d != nil {
		for i := range d.OpenTransactions {
			pick(int64(d.OpenTransactions[i].ProducerID))
		}
	}
	first, _ := openOf(prods, 0)
	for _, ap := range first {
		pick(ap.ProducerID)
	}
	return byPID, pids
}

// capDiagnosisGroups cuts a diagnosis's groups to txnindex.ListCap once
// they are counted by kind: the committed offsets (behind the LSO first),
// the share groups and each kind's names, their totals kept.
func capDiagnosisGroups(d *diagnosis.Diagnosis) {
	d.ConsumerGroups, d.ConsumerGroupsTotal = txnindex.CapGroups(d.ConsumerGroups, txnindex.ListCap)
	if d.ShareGroups != nil {
		d.ShareGroups, d.ShareGroupsTotal = txnindex.CapList(d.ShareGroups, txnindex.ListCap)
	}
	txnindex.CapKinds(d.GroupsByKind, txnindex.ListCap)
}
