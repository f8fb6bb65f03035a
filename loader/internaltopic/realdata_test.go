package internaltopic

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// realData is the shared corpus of files Kafka brokers wrote.
const realData = "../../testdata/realdata"

// needRealData skips when the corpus is absent, unless CI=true.
func needRealData(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(realData); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real data %s missing with CI=true: %v", realData, err)
		}
		t.Skipf("real data %s not present: %v", realData, err)
	}
	return realData
}

// realInternalDirs lists the corpus's partition directories of topic.
func realInternalDirs(t testing.TB, topic string) []string {
	root := needRealData(t)
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*", topic+"-*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// oracleRecords reads a partition directory's segments with franz-go
// alone: the .log files in name order, each record set decoded by
// kgo.ProcessFetchPartition (read_uncommitted, control records kept).
// Nothing of loader is used, so it can check loader and this package.
func oracleRecords(t *testing.T, dir string) []*kgo.Record {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(logs)
	var out []*kgo.Record
	for _, f := range logs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rp := &kmsg.FetchResponseTopicPartition{HighWatermark: 1 << 62, LastStableOffset: 1 << 62, RecordBatches: data}
		fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			KeepControlRecords: true, IsolationLevel: kgo.ReadUncommitted(), Topic: "t",
		}, rp, kgo.DefaultDecompressor(), nil)
		if fp.Err != nil {
			t.Fatalf("%s: kgo: %v", f, fp.Err)
		}
		out = append(out, fp.Records...)
	}
	return out
}

type oracleOffset struct {
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp int64
}

// TestRealConsumerOffsetsAgreeWithKmsg: every __consumer_offsets partition
// of the corpus decodes to the groups and offsets that kmsg's decoders
// give applied record by record in offset order (last value per key wins,
// a null value deletes the key; group metadata records are skipped). The
// corpus has no transactional offset commit, which the walk checks, so
// this oracle needs no marker logic; TestTransactionalOffsetCommits covers
// that.
func TestRealConsumerOffsetsAgreeWithKmsg(t *testing.T) {
	dirs := realInternalDirs(t, ConsumerOffsetsTopic)
	if len(dirs) < 13 {
		t.Fatalf("found %d __consumer_offsets partitions, want the corpus's 13", len(dirs))
	}
	var commits, groups int
	for _, dir := range dirs {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(dir)))+"/"+filepath.Base(dir), func(t *testing.T) {
			want := map[offsetKey]oracleOffset{}
			wantGroups := map[string]bool{}
			for _, r := range oracleRecords(t, dir) {
				if r.Attrs.IsTransactional() || r.Attrs.IsControl() {
					t.Fatalf("offset %d: transactional record; this oracle does not replay transactions", r.Offset)
				}
				switch ver := int16(r.Key[0])<<8 | int16(r.Key[1]); {
				case ver <= 1:
					var k kmsg.OffsetCommitKey
					if err := k.ReadFrom(r.Key); err != nil {
						t.Fatal(err)
					}
					key := offsetKey{k.Group, k.Topic, k.Partition}
					if r.Value == nil {
						delete(want, key)
						continue
					}
					var v kmsg.OffsetCommitValue
					if err := v.ReadFrom(r.Value); err != nil {
						t.Fatal(err)
					}
					le := int32(-1)
					if v.Version >= 3 {
						le = v.LeaderEpoch
					}
					want[key] = oracleOffset{v.Offset, le, v.Metadata, v.CommitTimestamp}
				case ver == 2:
					var k kmsg.GroupMetadataKey
					if err := k.ReadFrom(r.Key); err != nil {
						t.Fatal(err)
					}
					if r.Value == nil {
						delete(wantGroups, k.Group)
					} else {
						wantGroups[k.Group] = true
					}
				}
			}

			p, err := loader.OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			g, err := ReadConsumerOffsets(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Damage) > 0 {
				t.Fatalf("damage in a broker's file: %v", g.Damage)
			}
			got := map[offsetKey]oracleOffset{}
			for _, o := range g.Offsets {
				got[offsetKey{o.Group, o.Topic, o.Partition}] = oracleOffset{o.Offset, o.LeaderEpoch, o.Metadata, o.CommitTimestamp}
				if o.ProducerID != -1 || o.Source != ConsumerOffsetsTopic+"-"+dir[strings.LastIndexByte(dir, '-')+1:] {
					t.Errorf("%+v: producer or source wrong", o)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("offsets differ from kmsg's\n got %v\nwant %v", got, want)
			}
			gotGroups := map[string]bool{}
			for _, n := range g.Groups {
				gotGroups[n] = true
			}
			if !reflect.DeepEqual(gotGroups, wantGroups) {
				t.Fatalf("groups %v, kmsg %v", g.Groups, wantGroups)
			}
			if len(g.Pending) != 0 {
				t.Fatalf("pending %v", g.Pending)
			}
			// Each group lives in the partition partitionFor names for
			// the default 50 partitions: an independent check of
			// PartitionFor against the brokers that placed them.
			for k := range want {
				if got := PartitionFor(k.group, DefaultConsumerOffsetsPartitions); got != p.Input.Partition {
					t.Errorf("group %q in partition %d, PartitionFor says %d", k.group, p.Input.Partition, got)
				}
			}
			for n := range wantGroups {
				if got := PartitionFor(n, DefaultConsumerOffsetsPartitions); got != p.Input.Partition {
					t.Errorf("group %q in partition %d, PartitionFor says %d", n, p.Input.Partition, got)
				}
			}
			commits += len(want)
			groups += len(wantGroups)
		})
	}
	t.Logf("%d partitions, %d committed offsets, %d groups with metadata", len(dirs), commits, groups)
	if commits == 0 || groups == 0 {
		t.Fatal("the corpus holds committed offsets and groups; none were compared")
	}
}

// TestRealTransactionStateAgreesWithKmsg: the corpus's __transaction_state
// partition decodes to the transactional ids, producer ids, epochs,
// states and partitions kmsg gives applied record by record.
func TestRealTransactionStateAgreesWithKmsg(t *testing.T) {
	dirs := realInternalDirs(t, TransactionStateTopic)
	if len(dirs) == 0 {
		t.Fatal("the corpus has a __transaction_state partition")
	}
	for _, dir := range dirs {
		want := map[string]txnindex.TxnCoordinatorState{}
		for _, r := range oracleRecords(t, dir) {
			var k kmsg.TxnMetadataKey
			if err := k.ReadFrom(r.Key); err != nil {
				t.Fatal(err)
			}
			if r.Value == nil {
				delete(want, k.TransactionalID)
				continue
			}
			var v kmsg.TxnMetadataValue
			if err := v.ReadFrom(r.Value); err != nil {
				t.Fatal(err)
			}
			s := txnindex.TxnCoordinatorState{TransactionalID: k.TransactionalID, ProducerID: txnindex.ProducerID(v.ProducerID),
				ProducerEpoch: v.ProducerEpoch, State: txnindex.TxnStatus(v.State), TimeoutMs: v.TimeoutMillis,
				StartTimestamp: v.StartTimestamp, LastUpdateTimestamp: v.LastUpdateTimestamp}
			for _, tp := range v.Topics {
				for _, p := range tp.Partitions {
					s.Partitions = append(s.Partitions, txnindex.TopicPartition{Topic: tp.Topic, Partition: p})
				}
			}
			want[k.TransactionalID] = s
		}
		p, err := loader.OpenPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := ReadTransactionState(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts.Damage) > 0 {
			t.Fatalf("damage: %v", ts.Damage)
		}
		got := map[string]txnindex.TxnCoordinatorState{}
		for _, s := range ts.States {
			if s.Source != source(p) || s.Offset < 0 || s.PreviousProducerID != -1 || s.NextProducerID != -1 {
				t.Errorf("%+v: source or v0 defaults wrong", s)
			}
			s.Source, s.Offset = "", 0
			s.PreviousProducerID, s.NextProducerID, s.NextProducerEpoch, s.ClientTransactionVersion = 0, 0, 0, 0
			if len(s.Partitions) == 0 {
				s.Partitions = nil
			}
			got[s.TransactionalID] = s
			if n := PartitionFor(s.TransactionalID, DefaultTransactionStatePartitions); n != p.Input.Partition {
				t.Errorf("transactional id %q in partition %d, PartitionFor says %d", s.TransactionalID, p.Input.Partition, n)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: states differ from kmsg's\n got %+v\nwant %+v", dir, got, want)
		}
		if len(got) == 0 {
			t.Fatalf("%s: no transactional id compared", dir)
		}
		t.Logf("%s: %+v", filepath.Base(dir), ts.States)
	}
}

// TestRealCoordinatorJoin: the corpus's transactional producer (ksqlDB's
// command topic, COMMIT marker on disk) maps to its transactional id,
// whose coordinator says CompleteCommit; the transaction is decided, so
// the rule would call an open one on that partition hanging.
func TestRealCoordinatorJoin(t *testing.T) {
	root := needRealData(t)
	d, err := loader.OpenLogDir(filepath.Join(root, "ItumelengMogase_Real-Time-Data-Pipeline-for-Patient-Admissions", "kafka-data"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadLogDir(d)
	if err != nil {
		t.Fatal(err)
	}
	if in.Offsets == nil || in.Txns == nil || len(in.Offsets.Partitions) != 2 || in.Txns.Covers(DefaultTransactionStatePartitions) {
		t.Fatalf("offsets partitions %v, txn partitions %v", in.Offsets.Partitions, in.Txns.Partitions)
	}
	var data *loader.Partition
	for _, p := range d.Partitions {
		if p.Input.Topic == "_confluent-ksql-default__command_topic" {
			data = p
		}
	}
	if data == nil {
		t.Fatal("no command topic")
	}
	l := data.Build()
	var txn *txnindex.Txn
	for i := range l.Txns {
		if l.Txns[i].State == txnindex.TxnCommitted {
			txn = &l.Txns[i]
		}
	}
	if txn == nil {
		t.Fatal("no committed transaction on the command topic")
	}
	c := in.Txns.Coordinators(DefaultTransactionStatePartitions)
	m := c.Match(l.Topic, l.Partition, txn.ProducerID, txn.ProducerEpoch)
	if m.TransactionalID != "default_" || m.Coordinator.State != txnindex.TxnStatusCompleteCommit || !m.Hanging || m.Rule != txnindex.RuleCoordinatorComplete {
		t.Fatalf("%+v", m)
	}
	t.Logf("producer %d -> %q: %s", txn.ProducerID, m.TransactionalID, m.Reason)
}

// TestRealEvidence: the evidence diagnose joins with names the consumer
// offsets read and the coordinators' states, and is empty for a log dir
// without internal topics.
func TestRealEvidence(t *testing.T) {
	root := needRealData(t)
	d, err := loader.OpenLogDir(filepath.Join(root, "ItumelengMogase_Real-Time-Data-Pipeline-for-Patient-Admissions", "kafka-data"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadLogDir(d)
	if err != nil {
		t.Fatal(err)
	}
	ev := in.Evidence()
	if ev.Coordinators == nil || !ev.HaveOffsets || ev.GroupsSource != "2 partitions of __consumer_offsets" || len(in.Damage()) != 0 {
		t.Fatalf("evidence %+v, damage %v", ev, in.Damage())
	}
	if ev := (&Internal{}).Evidence(); ev.Coordinators != nil || ev.HaveOffsets || ev.GroupsSource != "" {
		t.Fatalf("no internal topics: evidence %+v", ev)
	}
}
