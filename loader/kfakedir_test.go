package loader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// kfdTopic has a '-' in it: kfake names partition directories
// <escaped topic>-<partition>, split at the last '-'.
const kfdTopic = "kfd-topic"

// kfdBatch is what the test compares of a batch, from whichever source.
type kfdBatch struct {
	Base, Last    int64
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	LeaderEpoch   int32
	Attributes    int16
	Records       int32
	Control       txnindex.ControlType
	MaxTimestamp  int64
}

func kfdFromKmsg(t *testing.T, rb *kmsg.RecordBatch) kfdBatch {
	t.Helper()
	b := kfdBatch{
		Base: rb.FirstOffset, Last: rb.FirstOffset + int64(rb.LastOffsetDelta),
		ProducerID: rb.ProducerID, ProducerEpoch: rb.ProducerEpoch, BaseSequence: rb.FirstSequence,
		LeaderEpoch: rb.PartitionLeaderEpoch, Attributes: int16(uint8(rb.Attributes)), Records: rb.NumRecords,
		Control: txnindex.ControlNone, MaxTimestamp: rb.MaxTimestamp,
	}
	if rb.Attributes&0x20 != 0 && rb.NumRecords > 0 {
		// Markers are written uncompressed (kfake and Kafka alike).
		var rec kmsg.Record
		if err := rec.ReadFrom(rb.Records); err != nil || len(rec.Key) < 4 {
			t.Fatalf("control batch at %d: first record: %v", rb.FirstOffset, err)
		}
		b.Control = txnindex.ParseControlType(int16(binary.BigEndian.Uint16(rec.Key[2:])))
	}
	return b
}

func kfdFromTxnindex(b *txnindex.Batch) kfdBatch {
	return kfdBatch{
		Base: b.BaseOffset, Last: b.LastOffset(), ProducerID: int64(b.ProducerID), ProducerEpoch: b.ProducerEpoch,
		BaseSequence: b.BaseSequence(), LeaderEpoch: b.PartitionLeaderEpoch, Attributes: b.Attributes(), Records: b.Records,
		Control: b.Control(), MaxTimestamp: b.MaxTimestamp,
	}
}

// kfdFetch fetches partition 0 of kfdTopic by topic id (kgo negotiates
// Fetch v13+ with kfake, which names topics by id).
func kfdFetch(t *testing.T, cl *kgo.Client, id [16]byte, offset int64, iso int8) *kmsg.FetchResponseTopicPartition {
	t.Helper()
	return testtool.RawFetch(t, cl, kfdTopic, id, offset, iso)
}

// kfdWalk decodes a record set with kmsg alone.
func kfdWalk(t *testing.T, data []byte, what string) []kmsg.RecordBatch {
	t.Helper()
	var out []kmsg.RecordBatch
	for pos := 0; pos < len(data); {
		if len(data)-pos < 12 {
			t.Fatalf("%s: %d trailing bytes at %d", what, len(data)-pos, pos)
		}
		n := 12 + int(int32(binary.BigEndian.Uint32(data[pos+8:])))
		if n < 61 || pos+n > len(data) {
			t.Fatalf("%s: batch at %d: size %d", what, pos, n)
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(data[pos : pos+n]); err != nil {
			t.Fatalf("%s: batch at %d: %v", what, pos, err)
		}
		out = append(out, rb)
		pos += n
	}
	return out
}

// TestKfakeDataDir runs a kfake broker persisting to a data directory,
// writes a transactional workload with real kgo producers, and checks that
// OpenKfakeDir reads back exactly the batches the broker served, that an
// independent kmsg walk of the .dat files agrees, that the engine's LSO is
// the broker's, and that the offsets the engine says a read_committed
// consumer receives are the ones kgo.ProcessFetchPartition returns from the
// broker's own read_committed responses.
func TestKfakeDataDir(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.SyncWrites(), kfake.SeedTopics(1, kfdTopic),
		// Small segments, so the partition has several .dat files.
		kfake.BrokerConfigs(map[string]string{"log.segment.bytes": "2048"}))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	var clients []*kgo.Client
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()
	client := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(kfdTopic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cl)
		return cl
	}
	txA := client(kgo.TransactionalID("a"), kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	txB := client(kgo.TransactionalID("b"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	txOpen := client(kgo.TransactionalID("open"))
	idem := client(kgo.ProducerBatchCompression(kgo.SnappyCompression())) // idempotent, not transactional
	reader := client()

	produce := func(cl *kgo.Client, n int, tag string) {
		t.Helper()
		rs := make([]*kgo.Record, n)
		for i := range rs {
			rs[i] = &kgo.Record{Value: fmt.Appendf(nil, "%s-%d-%s", tag, i, strings.Repeat("v", 40)), Partition: 0}
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", tag, err)
		}
	}
	begin := func(cl *kgo.Client) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	end := func(cl *kgo.Client, how kgo.TransactionEndTry) {
		t.Helper()
		if err := cl.EndTransaction(ctx, how); err != nil {
			t.Fatal(err)
		}
	}
	// Interleaved transactions of two producers, committed and aborted,
	// with idempotent records in between; multi-record batches.
	for i := range 6 {
		begin(txA)
		produce(txA, 1+i%3, fmt.Sprintf("a%d", i))
		begin(txB)
		produce(txB, 2, fmt.Sprintf("b%d", i))
		produce(idem, 1+i%2, fmt.Sprintf("i%d", i))
		produce(txA, 4, fmt.Sprintf("a%d'", i))
		end(txA, []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort}[i%2])
		produce(txB, 1, fmt.Sprintf("b%d'", i))
		end(txB, []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit, kgo.TryCommit}[i%3])
	}
	// One transaction left open, pinning the LSO, with data after it.
	begin(txOpen)
	produce(txOpen, 3, "open")
	produce(idem, 2, "after-open")
	begin(txA)
	produce(txA, 2, "a-last")
	end(txA, kgo.TryCommit)

	// (a) What the running broker serves.
	mreq := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(kfdTopic)
	mreq.Topics = append(mreq.Topics, mt)
	mresp, err := mreq.RequestWith(ctx, reader)
	if err != nil || len(mresp.Topics) != 1 || mresp.Topics[0].ErrorCode != 0 {
		t.Fatalf("metadata: %v %+v", err, mresp)
	}
	topicID := mresp.Topics[0].TopicID
	var served []kfdBatch
	hwm := int64(-1)
	for off := int64(0); ; {
		p := kfdFetch(t, reader, topicID, off, 0)
		hwm = p.HighWatermark
		bs := kfdWalk(t, p.RecordBatches, fmt.Sprintf("fetch at %d", off))
		if len(bs) == 0 {
			if off < hwm {
				t.Fatalf("no batch at %d below the high watermark %d", off, hwm)
			}
			break
		}
		for i := range bs {
			served = append(served, kfdFromKmsg(t, &bs[i]))
		}
		off = served[len(served)-1].Last + 1
	}
	brokerLSO := kfdFetch(t, reader, topicID, 0, 1).LastStableOffset
	if brokerLSO >= hwm {
		t.Fatalf("broker LSO %d, high watermark %d: the open transaction should pin it", brokerLSO, hwm)
	}
	froms := []int64{0, served[len(served)/3].Base, served[len(served)/2].Base + 1}
	var kgoDelivered [][]int64
	for _, from := range froms {
		kgoDelivered = append(kgoDelivered, kfdProcessFetch(t, reader, topicID, from))
	}

	// (b) Close the clients (kgo does not end an open transaction on
	// Close; closing them after the cluster would wait on retries), then
	// the cluster: snapshot.json is written and the segments synced. The
	// transaction of txOpen is still open in it.
	for _, cl := range clients {
		cl.Close()
	}
	clients = nil
	c.Close()
	closed = true

	if !IsKfakeDir(dir) {
		t.Fatalf("IsKfakeDir(%s) = false", dir)
	}
	ps, err := OpenKfakeDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 {
		t.Fatalf("%d partitions, want 1", len(ps))
	}
	p := ps[0]
	if p.Input.Topic != kfdTopic || p.Input.Partition != 0 {
		t.Fatalf("partition %s-%d", p.Input.Topic, p.Input.Partition)
	}
	if len(p.Damage) != 0 {
		t.Fatalf("damage: %v", p.Damage)
	}
	if len(p.Ignored) != 0 {
		t.Fatalf("ignored: %+v", p.Ignored)
	}
	if len(p.Segments) < 3 {
		t.Fatalf("%d segments; log.segment.bytes=2048 should give several", len(p.Segments))
	}
	if p.Metadata == nil || [16]byte(p.Metadata.TopicID) != topicID {
		t.Fatalf("topic id %+v, broker says %x", p.Metadata, topicID)
	}
	var loaded []kfdBatch
	for i := range p.Input.Batches {
		loaded = append(loaded, kfdFromTxnindex(&p.Input.Batches[i]))
	}
	if !slices.Equal(loaded, served) {
		t.Fatalf("loaded %d batches, broker served %d:\nloaded %+v\nserved %+v", len(loaded), len(served), loaded, served)
	}

	// An independent kmsg walk of the .dat bytes, segment by segment,
	// with positions and sizes.
	var walked []kfdBatch
	for si, s := range p.Segments {
		if !strings.HasSuffix(s.Log.Name, ".dat") || s.Log.BaseOffset != s.Log.Batches[0].BaseOffset {
			t.Fatalf("segment %d: %s base %d, first batch %d", si, s.Log.Name, s.Log.BaseOffset, s.Log.Batches[0].BaseOffset)
		}
		if p.Input.Segments[si].TxnIndexOnDisk {
			t.Fatalf("segment %s: TxnIndexOnDisk", s.Log.Name)
		}
		data, err := os.ReadFile(filepath.Join(p.Dir, s.Log.Name))
		if err != nil {
			t.Fatal(err)
		}
		bs := kfdWalk(t, data, s.Log.Name)
		if len(bs) != len(s.Log.Batches) {
			t.Fatalf("%s: kmsg walks %d batches, the scan %d", s.Log.Name, len(bs), len(s.Log.Batches))
		}
		var pos int64
		for i := range bs {
			walked = append(walked, kfdFromKmsg(t, &bs[i]))
			b := s.Log.Batches[i]
			if b.Position() != pos || int(b.Size) != 12+int(bs[i].Length) || int(b.Segment) != si {
				t.Fatalf("%s batch %d: position %d size %d segment %d, kmsg: position %d size %d", s.Log.Name, i, b.Position(), b.Size, b.Segment, pos, 12+bs[i].Length)
			}
			pos += int64(b.Size)
		}
	}
	if !slices.Equal(walked, loaded) {
		t.Fatalf("kmsg walk of the .dat files differs from the loader:\nwalk %+v\nloader %+v", walked, loaded)
	}

	// The workload did what it says.
	var commits, aborts, idemBatches int
	pids := map[int64]bool{}
	for _, b := range loaded {
		pids[b.ProducerID] = true
		switch {
		case b.Control == txnindex.ControlCommit:
			commits++
		case b.Control == txnindex.ControlAbort:
			aborts++
		case b.Attributes&txnindex.AttrTransactional == 0:
			idemBatches++
		}
	}
	if commits < 5 || aborts < 4 || idemBatches < 6 || len(pids) != 4 {
		t.Fatalf("workload: %d commits, %d aborts, %d idempotent batches, %d producers", commits, aborts, idemBatches, len(pids))
	}

	l := p.Build()
	if l.HighWatermark != hwm || l.HighWatermarkSource != "kfake snapshot.json" {
		t.Fatalf("high watermark %d (%s), broker %d", l.HighWatermark, l.HighWatermarkSource, hwm)
	}
	if l.LastStableOffset != brokerLSO {
		t.Fatalf("engine LSO %d, broker LSO %d", l.LastStableOffset, brokerLSO)
	}
	if len(l.Open) != 1 {
		t.Fatalf("%d open transactions, want 1", len(l.Open))
	}
	// The stuck-LSO diagnosis of the broker's data directory names the
	// open transaction at the broker's LSO and the command that ends it.
	diag := present.Diagnose(l, diagnosis.Options{Position: -1, Bootstrap: "kfake:9092"})
	if diag.PinnedBy == nil || diag.PinnedBy.FirstOffset != brokerLSO || diag.LastStableOffset != brokerLSO ||
		!strings.HasSuffix(diag.PinnedBy.AbortCommand, fmt.Sprintf("--start-offset %d", brokerLSO)) {
		t.Fatalf("diagnosis of the data directory: %+v", diag.PinnedBy)
	}
	aborted := 0
	for i, from := range froms {
		var got []int64
		for d := range l.Decisions(txnindex.ConsumeOptions{From: from, Isolation: txnindex.ReadCommitted}) {
			switch d.Verdict {
			case txnindex.Delivered:
				for o := d.From; o <= d.To; o++ {
					got = append(got, o)
				}
			case txnindex.Aborted:
				aborted++
			}
		}
		if !slices.Equal(got, kgoDelivered[i]) {
			t.Fatalf("from %d: engine delivers %v\nkgo.ProcessFetchPartition %v", from, got, kgoDelivered[i])
		}
	}
	if aborted == 0 {
		t.Fatal("nothing aborted: the comparison proves little")
	}

	// The header-only scan and the single-partition form agree.
	hs, err := OpenKfakeDirWith(dir, HeaderScanOptions)
	if err != nil {
		t.Fatal(err)
	}
	one, err := OpenKfakeDir(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []*Partition{hs[0], one[0]} {
		if !slices.Equal(q.Input.Batches, p.Input.Batches) || q.Build().LastStableOffset != brokerLSO || q.Metadata == nil {
			t.Fatalf("%s: differs from the default scan of the data directory", q.Dir)
		}
	}
	recs, err := p.Segments[0].Log.Records(p.Input.Batches[0])
	if err != nil || len(recs) != int(p.Input.Batches[0].Records) {
		t.Fatalf("records of the first batch: %d, %v", len(recs), err)
	}

	t.Run("damage", func(t *testing.T) { kfdDamage(t, p) })
}

// kfdProcessFetch is what kgo's own filter delivers from the broker's
// read_committed responses, fetch after fetch.
func kfdProcessFetch(t *testing.T, cl *kgo.Client, id [16]byte, from int64) []int64 {
	t.Helper()
	got := []int64{}
	off := from
	for range 10_000 {
		p := kfdFetch(t, cl, id, off, 1)
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Topic: kfdTopic, Partition: 0, Offset: off, IsolationLevel: kgo.ReadCommitted(),
		}, p, kgo.DefaultDecompressor(), nil)
		for _, r := range fp.Records {
			got = append(got, r.Offset)
		}
		if next <= off {
			if len(got) == 0 {
				return nil
			}
			return got
		}
		off = next
	}
	t.Fatal("ProcessFetchPartition loop did not end")
	return nil
}

// kfdDamage copies the partition, damages its kfake files and checks each
// problem is reported where it is.
func kfdDamage(t *testing.T, p *Partition) {
	dst := filepath.Join(t.TempDir(), filepath.Base(p.Dir))
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(p.Dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seg := p.Segments[1].Log
	idx := filepath.Join(dst, strings.TrimSuffix(seg.Name, ".dat")+".idx")
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	data[15+14] ^= 1 // the second entry's flags: its checksum no longer matches
	data = append(data, 1, 2, 3)
	if err := os.WriteFile(idx, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Bytes appended after shutdown make the snapshot stale.
	last := p.Segments[len(p.Segments)-1].Log
	f, err := os.OpenFile(filepath.Join(dst, last.Name), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 20))
	f.Close()
	os.WriteFile(filepath.Join(dst, "snapshot.json.tmp"), []byte("{"), 0o644)

	ps, err := OpenKfakeDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	q := ps[0]
	if q.Metadata != nil {
		t.Errorf("topic id without a topics.json: %+v", q.Metadata)
	}
	want := []string{
		fmt.Sprintf("loader: %s: entry at byte 0xf: bad checksum", filepath.Base(idx)),
		fmt.Sprintf("loader: %s: entry at byte %#x: truncated: 3 trailing bytes", filepath.Base(idx), len(data)-3),
		fmt.Sprintf("loader: %s: batch at byte %#x: bad size", last.Name, last.Size),
	}
	for _, w := range want {
		found := false
		for _, d := range q.Damage {
			if strings.HasPrefix(d.Error(), w) {
				found = true
			}
			if !errors.Is(d, ErrFormat) {
				t.Errorf("%v is not ErrFormat", d)
			}
		}
		if !found {
			t.Errorf("no damage %q in %v", w, q.Damage)
		}
	}
	l := q.Build()
	if !strings.Contains(l.HighWatermarkSource, "stale") || l.HighWatermark != l.LogEndOffset {
		t.Errorf("stale snapshot: high watermark %d (%s), log end %d", l.HighWatermark, l.HighWatermarkSource, l.LogEndOffset)
	}
	var ignored []string
	for _, ig := range q.Ignored {
		ignored = append(ignored, ig.Name)
	}
	if !slices.Equal(ignored, []string{"snapshot.json", "snapshot.json.tmp"}) {
		t.Errorf("ignored %+v", q.Ignored)
	}
	if !slices.Equal(q.Input.Batches, p.Input.Batches) {
		t.Errorf("damage in the index files changed the batches")
	}
}
