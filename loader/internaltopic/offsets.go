package internaltopic

import (
	"cmp"
	"maps"
	"slices"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// GroupOffsets are the committed offsets read from __consumer_offsets
// partitions: what the group coordinator serves to OffsetFetch after
// loading them.
type GroupOffsets struct {
	// Offsets are the materialised commits, ordered by group, topic and
	// partition.
	Offsets []txnindex.GroupOffset
	// Pending are transactional offset commits whose transaction has no
	// marker yet: the coordinator keeps them aside
	// (pendingTransactionalOffsets) and OffsetFetch with require_stable
	// answers UNSTABLE_OFFSET_COMMIT for their partitions until the
	// marker. Ordered like Offsets.
	Pending []PendingOffset
	// Groups are the group ids with a live GroupMetadata record (classic
	// groups), sorted.
	Groups []string
	// Kinds are the groups with a live metadata record of any kind
	// (GroupMetadata, ConsumerGroupMetadata, ShareGroupMetadata,
	// StreamsGroupMetadata), by group id: the kind each Offsets entry
	// carries. A group that committed offsets without one is a classic
	// group (the coordinator makes it a "simple" classic group when it
	// replays such a commit, OffsetMetadataManager.replay).
	Kinds map[string]txnindex.GroupKind
	// Partitions are the __consumer_offsets partitions read, sorted.
	Partitions []int32
	Stats      Stats
	// Damage lists records that could not be decoded, by segment file
	// and batch position; every other record still counts.
	Damage []*loader.FormatError

	offsets map[offsetKey]txnindex.GroupOffset
	groups  map[string]bool
}

// PendingOffset is a transactional offset commit waiting for its
// transaction's marker.
type PendingOffset struct {
	txnindex.GroupOffset
	ProducerEpoch int16
	// TxnFirstOffset is where the engine saw the producer's open
	// transaction begin in __consumer_offsets (-1 if unknown): such a
	// transaction pins that partition's LSO as it would any other's.
	TxnFirstOffset int64
}

type offsetKey struct {
	group, topic string
	partition    int32
}

// For returns the committed offsets of one data partition, by group.
func (g *GroupOffsets) For(topic string, partition int32) []txnindex.GroupOffset {
	var out []txnindex.GroupOffset
	for _, o := range g.Offsets {
		if o.Topic == topic && o.Partition == partition {
			out = append(out, o)
		}
	}
	return out
}

// Covers reports whether every partition of a __consumer_offsets topic
// with n partitions was read, so that every group's offsets are here.
// With fewer, a group absent from Offsets may live in a partition that
// was not read (PartitionFor says which).
func (g *GroupOffsets) Covers(n int32) bool { return covers(g.Partitions, n) }

// ReadConsumerOffsets replays a loaded __consumer_offsets partition the
// way its group coordinator loads it (OffsetMetadataManager.replay and
// replayEndTransactionMarker, Kafka 4.x; GroupMetadataManager
// loadGroupsAndOffsets before), from the log start offset to the log end:
//
//   - a plain offset commit (a batch that is not transactional, written by
//     the coordinator itself) replaces the key's offset; the last record
//     of a key in offset order wins, as compaction keeps it;
//   - a transactional offset commit (TxnOffsetCommit, written in the
//     producer's transaction) is kept aside under its producer id; the
//     producer's COMMIT marker materialises it unless the key's current
//     offset was written at a later record offset ("We always keep the
//     most recent committed offset when we have a mix of transactional
//     and regular offset commits"); its ABORT marker drops it;
//   - a tombstone deletes the key's offset and every pending
//     transactional commit of the key.
//
// The batches are walked in offset order with the read_committed
// decisions of l (built from p when nil): the engine's control verdicts
// end the transactions, its aborted verdicts are counted, and its
// transaction of a batch still open at the end dates the pending
// commits. Records above the LSO still count when their transaction
// committed: the coordinator reads to the log end, not to the LSO.
func ReadConsumerOffsets(p *loader.Partition, l *txnindex.Log) (*GroupOffsets, error) {
	if err := checkTopic(p, ConsumerOffsetsTopic); err != nil {
		return nil, err
	}
	if l == nil {
		l = p.Build()
	}
	g := &GroupOffsets{offsets: map[offsetKey]txnindex.GroupOffset{}, groups: map[string]bool{}, Kinds: map[string]txnindex.GroupKind{}}
	g.Partitions = []int32{p.Input.Partition}
	src := source(p)
	type pendingTxn struct {
		offsets map[offsetKey]txnindex.GroupOffset
		epoch   int16
		txn     *txnindex.Txn
	}
	pending := map[txnindex.ProducerID]*pendingTxn{}
	open := map[offsetKey][]txnindex.ProducerID{} // producers with a pending commit of the key
	var dmg damage

	endTxn := func(pid txnindex.ProducerID, commit bool) {
		pt := pending[pid]
		if pt == nil {
			return
		}
		delete(pending, pid)
		for k := range pt.offsets {
			open[k] = slices.DeleteFunc(open[k], func(q txnindex.ProducerID) bool { return q == pid })
			if len(open[k]) == 0 {
				delete(open, k)
			}
		}
		if !commit {
			return
		}
		for k, o := range pt.offsets {
			if cur, ok := g.offsets[k]; !ok || o.RecordOffset > cur.RecordOffset {
				g.offsets[k] = o
			}
		}
	}

	for d := range l.Decisions(txnindex.ConsumeOptions{From: l.LogStartOffset, Isolation: txnindex.ReadCommitted}) {
		b := d.Batch
		if b == nil || b.Records == 0 || d.Verdict == txnindex.BeforePosition {
			// A gap, a batch the cleaner emptied, or data below the log
			// start offset the coordinator does not read.
			continue
		}
		if b.IsControl() {
			switch b.Control() {
			case txnindex.ControlCommit:
				endTxn(b.ProducerID, true)
			case txnindex.ControlAbort:
				endTxn(b.ProducerID, false)
			}
			continue
		}
		recs, seg, err := records(p, b, &dmg)
		if err != nil {
			return nil, err
		}
		txnl := b.IsTransactional()
		for i := range recs {
			rec := &recs[i]
			g.Stats.Records++
			if d.Verdict == txnindex.Aborted {
				g.Stats.Aborted++
			}
			r, err := DecodeOffsetsRecord(rec.Key, rec.Value)
			if err != nil {
				g.Stats.Damaged++
				dmg.add(recordErr(seg, b, rec.Offset, err))
				continue
			}
			switch r.Kind {
			case KindGroupMetadata:
				g.Stats.GroupMetadata++
				if r.Tombstone {
					delete(g.groups, r.Group)
				} else {
					g.groups[r.Group] = true
				}
				g.replayKind(r)
				continue
			case KindOtherGroup, KindUnknown:
				g.Stats.countOther(r)
				g.replayKind(r)
				continue
			}
			g.Stats.OffsetCommits++
			k := offsetKey{r.Group, r.Topic, r.Partition}
			if r.Tombstone {
				g.Stats.Tombstones++
				delete(g.offsets, k)
				for _, pid := range open[k] {
					if pt := pending[pid]; pt != nil {
						delete(pt.offsets, k)
					}
				}
				delete(open, k)
				continue
			}
			o := txnindex.GroupOffset{Group: r.Group, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
				LeaderEpoch: r.LeaderEpoch, Metadata: r.Metadata, CommitTimestamp: r.CommitTimestamp,
				ExpireTimestamp: r.ExpireTimestamp, ProducerID: txnindex.NoProducerID, Source: src, RecordOffset: rec.Offset}
			if !txnl {
				g.offsets[k] = o
				continue
			}
			o.ProducerID = b.ProducerID
			pt := pending[b.ProducerID]
			if pt == nil {
				pt = &pendingTxn{offsets: map[offsetKey]txnindex.GroupOffset{}}
				pending[b.ProducerID] = pt
			}
			pt.epoch, pt.txn = b.ProducerEpoch, d.Txn
			pt.offsets[k] = o
			if !slices.Contains(open[k], b.ProducerID) {
				open[k] = append(open[k], b.ProducerID)
			}
		}
	}
	for _, pt := range pending {
		first := int64(-1)
		if pt.txn != nil {
			first = pt.txn.FirstOffset
		}
		for _, o := range pt.offsets {
			g.Pending = append(g.Pending, PendingOffset{GroupOffset: o, ProducerEpoch: pt.epoch, TxnFirstOffset: first})
		}
	}
	g.Damage = dmg.done()
	g.finish()
	return g, nil
}

// Merge adds o's partitions to g. A key present in both (possible only
// when the topic's partition count changed, which Kafka forbids) keeps
// the later commit.
func (g *GroupOffsets) Merge(o *GroupOffsets) {
	if g.offsets == nil {
		g.offsets = map[offsetKey]txnindex.GroupOffset{}
		g.groups = map[string]bool{}
	}
	if g.Kinds == nil {
		g.Kinds = map[string]txnindex.GroupKind{}
	}
	// A group lives in one __consumer_offsets partition (PartitionFor):
	// its kind comes from there alone.
	maps.Copy(g.Kinds, o.Kinds)
	for _, x := range o.Offsets {
		k := offsetKey{x.Group, x.Topic, x.Partition}
		if cur, ok := g.offsets[k]; !ok || x.CommitTimestamp > cur.CommitTimestamp {
			g.offsets[k] = x
		}
	}
	for _, n := range o.Groups {
		g.groups[n] = true
	}
	g.Pending = append(g.Pending, o.Pending...)
	for _, p := range o.Partitions {
		g.Partitions = addPartition(g.Partitions, p)
	}
	g.Stats.add(o.Stats)
	g.Damage = append(g.Damage, o.Damage...)
	g.finish()
}

func (g *GroupOffsets) finish() {
	g.Offsets = slices.SortedFunc(maps.Values(g.offsets), txnindex.CompareGroupOffsets)
	for i := range g.Offsets {
		g.Offsets[i].Kind = g.kindOf(g.Offsets[i].Group)
	}
	g.Groups = slices.Sorted(maps.Keys(g.groups))
	slices.SortFunc(g.Pending, func(a, b PendingOffset) int {
		return cmp.Or(txnindex.CompareGroupOffsets(a.GroupOffset, b.GroupOffset), cmp.Compare(a.ProducerID, b.ProducerID))
	})
}
