package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/txnscope/txnscope/internal/testtool"
)

// What the browser tests use beside internal/testfixture's log dirs and
// kfake clusters (which internal/cli's tests build the same way): the
// real files of testdata/realdata and the watch command's recordings.

// clusterReadKeys are the requests cluster mode may send: the watcher's
// read-only list (live/live_test.go) grown by ListGroups, DescribeGroups,
// OffsetFetch, ConsumerGroupDescribe and DescribeShareGroupOffsets.
var clusterReadKeys = map[int16]bool{
	int16(kmsg.Metadata): true, int16(kmsg.ListOffsets): true, int16(kmsg.Fetch): true,
	int16(kmsg.DescribeProducers): true, int16(kmsg.ListTransactions): true, int16(kmsg.DescribeTransactions): true,
	int16(kmsg.DescribeConfigs): true, int16(kmsg.ApiVersions): true, int16(kmsg.SASLHandshake): true, int16(kmsg.SASLAuthenticate): true,
	int16(kmsg.ListGroups): true, int16(kmsg.DescribeGroups): true, int16(kmsg.OffsetFetch): true,
	int16(kmsg.ConsumerGroupDescribe): true, int16(kmsg.DescribeShareGroupOffsets): true,
}

// interleavedClients is the diagnosis's sentence on the interleaved demo's
// clients: its aborted transaction (offsets 2-4, and two more records) and
// its markers reach kafka-go and kafka-python.
const interleavedClients = "kafka-go 0.4 (segmentio) and kafka-python 2.0 would deliver 5 aborted records and 3 control markers from this partition; the Java consumer, librdkafka, franz-go, Sarama, kafkajs 2.2.4 and kafka-python 2.2+ none of them"

// realdata holds the real files the tests read (testdata/realdata/README.md).
const realdata = "../testdata/realdata"

// uploadSegment is the real file the upload tests send: a segment of 14
// batches from 13 idempotent producers (BiggerBrain/kafka, in
// testdata/realdata).
var uploadSegment = filepath.Join(realdata, "BiggerBrain_kafka/data/lsx1-0/00000000000000000000.log")

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	testtool.NeedDir(t, realdata)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sourceIDs are the ids of the sources a server lists.
func sourceIDs(t *testing.T, s *served) []string {
	t.Helper()
	var body struct{ Sources []struct{ ID string } }
	getJSONInto(t, s.url("/api/v1/sources"), &body)
	var ids []string
	for _, src := range body.Sources {
		ids = append(ids, src.ID)
	}
	return ids
}

// runWatchArgs runs `txnscope watch ARGS` (cli.Run) and returns its
// output, and its stderr as the error when it fails.
func runWatchArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	code, out, errOut := runArgs(t, append([]string{"watch"}, args...)...)
	if code != exitOK {
		return out, fmt.Errorf("watch: exit %d: %s", code, errOut)
	}
	return out, nil
}
