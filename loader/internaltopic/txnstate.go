package internaltopic

import (
	"maps"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// TxnStates are the transaction coordinators' states read from
// __transaction_state partitions.
type TxnStates struct {
	// States are the live transactional ids, ordered by id.
	States []txnindex.TxnCoordinatorState
	// Partitions are the __transaction_state partitions read, sorted.
	Partitions []int32
	Stats      Stats
	Damage     []*loader.FormatError

	byID map[string]txnindex.TxnCoordinatorState
}

// Covers reports whether every partition of a __transaction_state topic
// with n partitions was read.
func (s *TxnStates) Covers(n int32) bool { return covers(s.Partitions, n) }

// Coordinators indexes the states for txnindex's hanging rule; they are
// complete when every partition of a __transaction_state topic with n
// partitions was read.
func (s *TxnStates) Coordinators(n int32) *txnindex.TxnCoordinators {
	return txnindex.NewTxnCoordinators(slices.Clone(s.States), s.Covers(n))
}

// ReadTransactionState loads a __transaction_state partition as
// TransactionStateManager.loadTransactionMetadata does: every record from
// the log start offset to the log end, in offset order; a value replaces
// its transactional id's state, a tombstone (written when the id expires)
// removes it. l is built from p when nil.
func ReadTransactionState(p *loader.Partition, l *txnindex.Log) (*TxnStates, error) {
	if err := checkTopic(p, TransactionStateTopic); err != nil {
		return nil, err
	}
	if l == nil {
		l = p.Build()
	}
	s := &TxnStates{byID: map[string]txnindex.TxnCoordinatorState{}, Partitions: []int32{p.Input.Partition}}
	src := source(p)
	var dmg damage
	replay := func(r TxnStateRecord, offset int64) { s.replay(r, src, offset) }
	if err := replayRecords(p, l, &s.Stats, &dmg, DecodeTxnStateRecord, replay); err != nil {
		return nil, err
	}
	s.Damage = dmg.done()
	s.finish()
	return s, nil
}

func (s *TxnStates) replay(r TxnStateRecord, src string, offset int64) {
	switch {
	case r.Unknown:
		// TransactionLog.read: an unknown key version is skipped
		// (KIP-915).
		s.Stats.OtherRecords++
		s.Stats.UnknownRecords++
	case r.Tombstone:
		s.Stats.Tombstones++
		delete(s.byID, r.TransactionalID)
	default:
		st := r.State
		st.Source, st.Offset = src, offset
		s.byID[r.TransactionalID] = st
	}
}

// Merge adds o's partitions to s. An id present in both (only if the
// topic's partition count changed) keeps the state updated last.
func (s *TxnStates) Merge(o *TxnStates) {
	if s.byID == nil {
		s.byID = map[string]txnindex.TxnCoordinatorState{}
	}
	for _, x := range o.States {
		if cur, ok := s.byID[x.TransactionalID]; !ok || x.LastUpdateTimestamp > cur.LastUpdateTimestamp {
			s.byID[x.TransactionalID] = x
		}
	}
	for _, p := range o.Partitions {
		s.Partitions = addPartition(s.Partitions, p)
	}
	s.Stats.add(o.Stats)
	s.Damage = append(s.Damage, o.Damage...)
	s.finish()
}

func (s *TxnStates) finish() {
	s.States = slices.SortedFunc(maps.Values(s.byID), func(a, b txnindex.TxnCoordinatorState) int {
		return strings.Compare(a.TransactionalID, b.TransactionalID)
	})
}

// Internal is what a log directory's internal-topic partitions say.
type Internal struct {
	Offsets *GroupOffsets    // nil when no __consumer_offsets partition is in the dir
	Txns    *TxnStates       // nil when no __transaction_state partition is
	Shares  *ShareStates     // nil when no __share_group_state partition is
	Cluster *ClusterMetadata // nil when no __cluster_metadata partition is
	// TopicIDs names the topic ids the partitions read carry in their
	// partition.metadata (the data partitions' too), for the share
	// states, which name topics by id.
	TopicIDs map[loader.UUID]string
}

// ReadLogDir reads every __consumer_offsets and __transaction_state
// partition of a loaded log directory.
func ReadLogDir(d *loader.LogDir) (*Internal, error) {
	in := &Internal{}
	for _, p := range d.Partitions {
		if err := in.Read(p); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// Read adds what p says when it is a partition of __consumer_offsets or
// __transaction_state; other partitions add nothing. A log directory's
// internal partitions can be read one at a time this way, none kept.
func (in *Internal) Read(p *loader.Partition) error {
	if p.DirKind != "" {
		return nil // set aside (-delete, -future, -stray): not what the coordinator serves
	}
	if p.Metadata != nil {
		in.AddTopicID(p.Metadata.TopicID, p.Input.Topic)
	}
	switch p.Input.Topic {
	case ConsumerOffsetsTopic:
		g, err := ReadConsumerOffsets(p, nil)
		if err != nil {
			return err
		}
		if in.Offsets == nil {
			in.Offsets = g
		} else {
			in.Offsets.Merge(g)
		}
	case TransactionStateTopic:
		t, err := ReadTransactionState(p, nil)
		if err != nil {
			return err
		}
		if in.Txns == nil {
			in.Txns = t
		} else {
			in.Txns.Merge(t)
		}
	default:
		return in.readGroupTopics(p)
	}
	return nil
}

// Evidence is what diagnose joins a data partition's diagnosis with
// (diagnosis.Join): the coordinators' transaction states, as the
// coordinator of each of the DefaultTransactionStatePartitions loads them,
// and the groups' committed offsets, naming where they were read. A log dir
// without internal topics gives empty evidence.
func (in *Internal) Evidence() txnindex.InternalEvidence {
	var ev txnindex.InternalEvidence
	if t := in.Txns; t != nil {
		ev.Coordinators = t.Coordinators(DefaultTransactionStatePartitions)
	}
	if o := in.Offsets; o != nil {
		ev.Offsets, ev.HaveOffsets = o.Offsets, true
		ev.GroupsSource = txnindex.Plural(len(o.Partitions), "partition", "partitions") + " of " + ConsumerOffsetsTopic
	}
	ev.GroupEvidence = in.groupEvidence()
	if c := in.Cluster; c != nil {
		ev.RemoteStorage = map[string]string{}
		for t, cs := range c.TopicConfigs {
			if v, ok := cs[RemoteStorageEnableConfig]; ok {
				ev.RemoteStorage[t] = v
			}
		}
	}
	return ev
}

// Damage is every record of the internal topics that did not decode.
func (in *Internal) Damage() []*loader.FormatError {
	var out []*loader.FormatError
	if in.Txns != nil {
		out = append(out, in.Txns.Damage...)
	}
	if in.Offsets != nil {
		out = append(out, in.Offsets.Damage...)
	}
	if in.Shares != nil {
		out = append(out, in.Shares.Damage...)
	}
	if in.Cluster != nil {
		out = append(out, in.Cluster.Damage...)
	}
	return out
}
