package live

// The consumer groups of the watched partitions (watch, serve --bootstrap
// --topic): the cluster scan's read-only ListGroups and OffsetFetch
// (cluster_offsetfetch.go), ConsumerGroupDescribe and
// DescribeShareGroupOffsets (cluster_groupkinds.go), placed against the
// engine's LSO as a log dir's
// __consumer_offsets is (txnindex.Log.GroupPositions), so that the update's
// diagnosis names the groups an open transaction holds up.

import (
	"context"
	"fmt"
	"time"

	"github.com/txnscope/txnscope/txnindex"
)

// groupsEvery bounds how often a watcher reads the groups: a poll runs
// every 250 ms, and committed offsets move at the consumers' commit
// interval (auto.commit.interval.ms, 5 s by default), so reading them at
// the cluster scan's interval costs the group coordinators one ListGroups
// per broker and one OffsetFetch per coordinator every 5 s at most.
const groupsEvery = DefaultScanPoll

// watchedGroups is the last read of the groups' committed offsets.
type watchedGroups struct {
	at      time.Time
	offsets []committedOffset
	shares  *shareRead                     // the share groups' states and levels; nil when none is listed
	members map[string]map[string][]string // a KIP-848 group's members by partition (ConsumerGroupDescribe)
}

// groupScanner is a scanner over the watcher's client and the brokers it
// discovered, for the scan's group requests.
func (w *Watcher) groupScanner() *scanner {
	s := &scanner{cl: w.cl, o: ScanOptions{RequestTimeout: w.cfg.DialTimeout, PerBroker: DefaultPerBroker}, now: w.cfg.Now(),
		reqs: map[string]int{}, down: map[int32]error{}, sem: map[int32]chan struct{}{}, topicIDs: map[string][16]byte{w.cfg.Topic: w.topicID}}
	for _, id := range w.brokers {
		s.brokers = append(s.brokers, id)
		s.sem[id] = make(chan struct{}, DefaultPerBroker)
	}
	return s
}

// groups adds the consumer groups to u's partitions when one of them is
// stuck (its LSO below the high watermark): every group committed there,
// placed against the LSO, in the diagnosis (consumer_groups), and those at
// or below it in Groups. The offsets are read again at most every
// groupsEvery; without a stuck partition nothing is sent.
func (w *Watcher) groups(ctx context.Context, u *Update) {
	stuck := false
	for i := range u.Partitions {
		if v := &u.Partitions[i]; v.EngineLSO < v.HighWatermark || v.ListedLSO < v.ListedHWM {
			stuck = true
		}
	}
	if !stuck {
		return
	}
	if w.group.at.IsZero() || time.Since(w.group.at) >= groupsEvery {
		s := w.groupScanner()
		parts := make([]*PartitionLag, len(w.parts))
		for i, p := range w.parts {
			parts[i] = &PartitionLag{Topic: w.cfg.Topic, Partition: p.id}
		}
		listed := s.listGroups(ctx)
		w.group = watchedGroups{at: time.Now(), offsets: s.fetchOffsets(ctx, listed, parts),
			shares: s.readShares(ctx, listed, parts), members: s.assignedMembers(ctx, listed, parts)}
		u.Notes = append(u.Notes, s.notes...)
	}
	for i := range u.Partitions {
		if v := &u.Partitions[i]; v.EngineLSO < v.HighWatermark {
			w.placeGroups(v)
		}
	}
}

// placeGroups places the groups committed on v's partition against its LSO.
// Records to the LSO are counted in the window; a group committed below the
// window start is placed by offsets alone (the records before the window
// were not read).
func (w *Watcher) placeGroups(v *PartitionView) {
	if v.Diagnosis == nil || v.Log == nil {
		return
	}
	var (
		offs  []txnindex.GroupOffset
		state = map[string]committedOffset{}
	)
	for _, c := range w.group.offsets {
		if c.topic != w.cfg.Topic || c.partition != v.Partition || c.offset < 0 {
			continue
		}
		state[c.group.Group] = c
		offs = append(offs, txnindex.GroupOffset{Group: c.group.Group, Topic: c.topic, Partition: c.partition, Offset: c.offset,
			LeaderEpoch: -1, CommitTimestamp: -1, ExpireTimestamp: -1, ProducerID: -1,
			Source: fmt.Sprintf("OffsetFetch on broker %d", c.coordinator), RecordOffset: -1, Kind: groupKind(c.group)})
	}
	gs := v.Log.GroupPositions(offs)
	if gs == nil {
		gs = []txnindex.GroupPosition{}
	}
	lso := v.Log.LastStableOffset
	for i := range gs {
		g := &gs[i]
		if g.Offset < v.WindowStart {
			// GroupPositions took the window start for the log start.
			g.OutOfRange = g.Offset < v.LogStartOffset
			g.RecordsToLSO, g.Blocked, g.OffsetsToLSO = -1, false, max(lso-g.Offset, 0)
		}
		if g.BehindLSO {
			c := state[g.Group]
			v.Groups = append(v.Groups, GroupBehind{Group: g.Group, State: c.group.GroupState, Coordinator: c.coordinator, Committed: g.Offset,
				LagOffsets: v.HighWatermark - g.Offset, BehindLSO: true, Blocked: g.Blocked, Kind: g.Kind,
				Members: w.group.members[g.Group][fmt.Sprintf("%s-%d", w.cfg.Topic, v.Partition)]})
		}
	}
	v.Groups, v.GroupsTotal = capGroups(v.Groups, 0)
	v.Diagnosis.ConsumerGroups, v.Diagnosis.GroupsSource = gs, "OffsetFetch"
	if w.group.shares != nil {
		v.Diagnosis.ShareGroups, v.Diagnosis.ShareGroupsSource = w.group.shares.place(w.cfg.Topic, v.Partition, lso), "DescribeShareGroupOffsets"
	}
	v.Diagnosis.GroupsByKind = txnindex.GroupsByKind(gs, v.Diagnosis.ShareGroups)
	capDiagnosisGroups(v.Diagnosis)
}
