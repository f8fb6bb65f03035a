package internaltopic

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// readGroupTopics adds what p says when it is a partition of
// __share_group_state or the KRaft metadata log.
func (in *Internal) readGroupTopics(p *loader.Partition) error {
	switch p.Input.Topic {
	case ShareGroupStateTopic:
		s, err := ReadShareGroupState(p, nil)
		if err != nil {
			return err
		}
		if in.Shares == nil {
			in.Shares = s
		} else {
			in.Shares.Merge(s)
		}
	case txnindex.ClusterMetadataTopic:
		m, err := ReadClusterMetadata(p, nil)
		if err != nil {
			return err
		}
		if in.Cluster == nil {
			in.Cluster = m
		} else {
			in.Cluster.Merge(m)
		}
	}
	return nil
}

// AddTopicID names a topic id (a data partition's partition.metadata,
// read apart from its log).
func (in *Internal) AddTopicID(id loader.UUID, topic string) {
	if in.TopicIDs == nil {
		in.TopicIDs = map[loader.UUID]string{}
	}
	in.TopicIDs[id] = topic
}

// topicName is the name of a topic id: the metadata log's, else a
// partition.metadata's.
func (in *Internal) topicName(id loader.UUID) (string, bool) {
	if in.Cluster != nil {
		if n, ok := in.Cluster.Topics[id]; ok {
			return n, true
		}
	}
	n, ok := in.TopicIDs[id]
	return n, ok
}

// groupEvidence is the share groups' states with their topics named (a
// state of a topic whose id no file names is of no partition here, and
// left out), their isolation levels, and the records skipped.
func (in *Internal) groupEvidence() txnindex.GroupEvidence {
	var ge txnindex.GroupEvidence
	if s := in.Shares; s != nil {
		ge.HaveShareStates = true
		ge.ShareSource = txnindex.Plural(len(s.Partitions), "partition", "partitions") + " of " + ShareGroupStateTopic
		ge.ShareStates = []txnindex.ShareGroupState{}
		for k, st := range s.byKey {
			if name, ok := in.topicName(k.topic); ok {
				st.Topic = name
				ge.ShareStates = append(ge.ShareStates, st)
			}
		}
		slices.SortFunc(ge.ShareStates, txnindex.CompareShareStates)
	}
	if c := in.Cluster; c != nil {
		ge.IsolationKnown, ge.ShareIsolation = true, c.ShareIsolation()
		ge.IsolationSource = "the group configs in " + txnindex.ClusterMetadataTopic
	} else {
		ge.IsolationSource = fmt.Sprintf("unknown: no %s in the log directory to read the group configs from (Kafka's default share.isolation.level is %s, which the LSO does not hold)",
			txnindex.ClusterMetadataTopic, txnindex.DefaultShareIsolation)
	}
	skipped := map[string]int64{}
	if in.Offsets != nil {
		skipped[ConsumerOffsetsTopic] = in.Offsets.Stats.UnknownRecords
	}
	if in.Txns != nil {
		skipped[TransactionStateTopic] = in.Txns.Stats.UnknownRecords
	}
	if in.Shares != nil {
		skipped[ShareGroupStateTopic] = in.Shares.Stats.UnknownRecords
	}
	var where []string
	for _, t := range slices.Sorted(maps.Keys(skipped)) {
		if n := skipped[t]; n > 0 {
			ge.SkippedRecords += n
			where = append(where, t)
		}
	}
	ge.SkippedWhere = strings.Join(where, " and ")
	return ge
}

// Merge adds what o read (other partitions of the same directory).
func (in *Internal) Merge(o *Internal) {
	if o.Offsets != nil {
		if in.Offsets == nil {
			in.Offsets = o.Offsets
		} else {
			in.Offsets.Merge(o.Offsets)
		}
	}
	if o.Txns != nil {
		if in.Txns == nil {
			in.Txns = o.Txns
		} else {
			in.Txns.Merge(o.Txns)
		}
	}
	if o.Shares != nil {
		if in.Shares == nil {
			in.Shares = o.Shares
		} else {
			in.Shares.Merge(o.Shares)
		}
	}
	if o.Cluster != nil {
		if in.Cluster == nil {
			in.Cluster = o.Cluster
		} else {
			in.Cluster.Merge(o.Cluster)
		}
	}
	for id, n := range o.TopicIDs {
		in.AddTopicID(id, n)
	}
}
