package testfixture

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CommitOffset commits group's offset off on topic's partition as a simple
// consumer does (OffsetCommit with generation -1: no member, no join), so
// that the group exists with no member.
func CommitOffset(t testing.TB, cl *kgo.Client, group, topic string, partition int32, off int64) {
	t.Helper()
	CommitMemberOffset(t, cl, group, "", -1, topic, partition, off)
}

// CommitMemberOffset commits group's offset off on topic's partition as
// member at generation (a KIP-848 member commits at its member epoch). The
// topic is named by id too: OffsetCommit v10 names topics by id.
func CommitMemberOffset(t testing.TB, cl *kgo.Client, group, member string, generation int32, topic string, partition int32, off int64) {
	t.Helper()
	ctx := context.Background()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.MemberID, req.Generation = group, member, generation
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = topic, TopicID(t, cl, topic)
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = partition, off, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				t.Fatalf("commit %s on %s-%d as member %q generation %d: %v", group, topic, partition, member, generation, err)
			}
		}
	}
}

// TopicID asks the cluster for topic's id (Metadata).
func TopicID(t testing.TB, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, mt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatalf("metadata of %s: %v", topic, err)
	}
	if len(resp.Topics) != 1 || kerr.ErrorForCode(resp.Topics[0].ErrorCode) != nil {
		t.Fatalf("metadata of %s: %+v", topic, resp.Topics)
	}
	return resp.Topics[0].TopicID
}
