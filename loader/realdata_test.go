package loader

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// realPartitionDirs lists every directory of the corpus that holds
// partition files.
func realPartitionDirs(t *testing.T) []string {
	root := needRealData(t)
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == root {
			return err
		}
		if _, _, _, err := ParsePartitionDir(d.Name()); err != nil {
			return nil
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range ents {
			n := e.Name()
			if strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".snapshot") || n == LeaderEpochCheckpointFile {
				out = append(out, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 30 {
		t.Fatalf("found only %d partition directories under %s", len(out), root)
	}
	return out
}

// TestRealPartitionsLoad loads every partition directory of the corpus: no
// error, no damage (these are files brokers wrote), consistent batch
// numbering, and a Build that accepts the result.
func TestRealPartitionsLoad(t *testing.T) {
	for _, dir := range realPartitionDirs(t) {
		t.Run(rel(dir), func(t *testing.T) {
			p, err := OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range p.Damage {
				t.Errorf("damage: %v", d)
			}
			tp := p.Input
			if len(tp.Segments) != len(p.Segments) {
				t.Fatalf("%d txnindex segments for %d loaded", len(tp.Segments), len(p.Segments))
			}
			n := 0
			for si, s := range p.Segments {
				if tp.Segments[si].BaseOffset != s.Log.BaseOffset || tp.Segments[si].Size != s.Log.Size {
					t.Errorf("segment %d: txnindex view %+v differs from %s", si, tp.Segments[si], s.Log.Name)
				}
				if si > 0 && s.Log.BaseOffset <= p.Segments[si-1].Log.BaseOffset {
					t.Errorf("segments out of order at %d", si)
				}
				for _, b := range s.Log.Batches {
					if b.Segment != int32(si) {
						t.Errorf("%s batch at %d: Segment %d, want %d", s.Log.Name, b.Position(), b.Segment, si)
					}
					n++
				}
				// Broker-written index files exist for most of these
				// segments; none has a .txnindex (none is public).
				want := s.indexListed
				if tp.Segments[si].TxnIndexOnDisk != want {
					t.Errorf("%s: TxnIndexOnDisk %v, want %v", s.Log.Name, tp.Segments[si].TxnIndexOnDisk, want)
				}
			}
			if n != len(tp.Batches) {
				t.Errorf("%d batches in segments, %d in partition", n, len(tp.Batches))
			}
			if p.LeaderEpochs == nil {
				t.Errorf("no leader-epoch-checkpoint decoded")
			}
			l := p.Build()
			if l.LogEndOffset < l.LogStartOffset || l.HighWatermark > l.LogEndOffset {
				t.Errorf("Build: log start %d end %d HWM %d", l.LogStartOffset, l.LogEndOffset, l.HighWatermark)
			}
		})
	}
}

// TestRealLogDirs loads the log directories whole.
func TestRealLogDirs(t *testing.T) {
	root := needRealData(t)
	for _, d := range []string{
		"BiggerBrain_kafka/data",
		"DonaldY_kafka-2.7.1/kafka-logs",
		"ItumelengMogase_Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data",
		"mscaldas2012_kafka-connect-spooldir/kafka-data",
		"seanorth_kafka-server/kafka-logs",
	} {
		t.Run(d, func(t *testing.T) {
			l, err := OpenLogDir(filepath.Join(root, d))
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Partitions) == 0 {
				t.Fatal("no partitions")
			}
			for _, dm := range l.Damage {
				t.Errorf("damage: %v", dm)
			}
			if l.Checkpoints.ReplicationOffset == nil || l.Checkpoints.RecoveryPoint == nil {
				t.Errorf("checkpoints missing: %+v", l.Checkpoints)
			}
			for _, p := range l.Partitions {
				if p.Input.HighWatermark >= 0 && p.Input.HighWatermarkSource != ReplicationOffsetCheckpoint {
					t.Errorf("%s: HWM source %q", p.Dir, p.Input.HighWatermarkSource)
				}
			}
		})
	}
}

// segmentBatch is what an independent walk finds at one position.
type segmentBatch struct {
	pos  int64
	size int32
	rb   kmsg.RecordBatch // magic 2
	off  int64            // legacy offset field
	mag  int8
}

// walkKmsg walks a segment independently of the scanner: offset, size and
// magic by hand, then kmsg.RecordBatch.ReadFrom for v2.
func walkKmsg(t *testing.T, data []byte) []segmentBatch {
	var out []segmentBatch
	for pos := 0; len(data)-pos > 17; {
		size := int32(binary.BigEndian.Uint32(data[pos+8:]))
		total := int(size) + 12
		if size < 14 || pos+total > len(data) {
			t.Fatalf("independent walk: bad entry at %d", pos)
		}
		sb := segmentBatch{pos: int64(pos), size: int32(total), mag: int8(data[pos+16]), off: int64(binary.BigEndian.Uint64(data[pos:]))}
		if sb.mag == 2 {
			if err := sb.rb.ReadFrom(data[pos : pos+total]); err != nil {
				t.Fatalf("kmsg.RecordBatch.ReadFrom at %d: %v", pos, err)
			}
		}
		out = append(out, sb)
		pos += total
	}
	return out
}

// TestRealSegmentsAgainstKmsg checks every .log's batch headers against an
// independent decode, with both the verifying and the header-only scan.
func TestRealSegmentsAgainstKmsg(t *testing.T) {
	for _, path := range realFiles(t, "*.log") {
		t.Run(rel(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := walkKmsg(t, data)
			for _, o := range []ScanOptions{DefaultScanOptions, HeaderScanOptions} {
				f, err := OpenSegmentWith(path, o)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if len(f.Damage) != 0 {
					t.Errorf("damage: %v", f.Damage)
				}
				if f.ValidBytes != int64(len(data)) {
					t.Errorf("ValidBytes %d, file %d", f.ValidBytes, len(data))
				}
				if len(f.Batches) != len(want) {
					t.Fatalf("%d batches, independent walk found %d", len(f.Batches), len(want))
				}
				for i, b := range f.Batches {
					compareBatch(t, data, b, want[i])
				}
			}
		})
	}
}

func compareBatch(t *testing.T, data []byte, b txnindex.Batch, w segmentBatch) {
	t.Helper()
	if b.Position() != w.pos || b.Size != w.size || b.Magic() != w.mag {
		t.Fatalf("batch at %d: position/size/magic %d/%d/%d, want %d/%d/%d", w.pos, b.Position(), b.Size, b.Magic(), w.pos, w.size, w.mag)
	}
	if w.mag != 2 {
		if b.LastOffset() != w.off || b.ProducerID != txnindex.NoProducerID {
			t.Errorf("legacy entry at %d: last offset %d pid %d, want %d -1", w.pos, b.LastOffset(), b.ProducerID, w.off)
		}
		return
	}
	rb := w.rb
	type fields struct {
		Base, Last, BaseTS, MaxTS, PID int64
		PLE, Seq, N                    int32
		Epoch, Attr                    int16
	}
	got := fields{b.BaseOffset, b.LastOffset(), b.BaseTimestamp, b.MaxTimestamp, int64(b.ProducerID), b.PartitionLeaderEpoch, b.BaseSequence(), b.Records, b.ProducerEpoch, b.Attributes()}
	exp := fields{rb.FirstOffset, rb.FirstOffset + int64(rb.LastOffsetDelta), rb.FirstTimestamp, rb.MaxTimestamp, rb.ProducerID, rb.PartitionLeaderEpoch, rb.FirstSequence, rb.NumRecords, rb.ProducerEpoch, int16(uint8(rb.Attributes))}
	if got != exp {
		t.Errorf("batch at %d:\n got %+v\nwant %+v", w.pos, got, exp)
	}
	// The control type of a control batch comes from its first record,
	// decoded here with kmsg.Record.
	wantCtl, wantEpoch := txnindex.ControlNone, int32(-1)
	if rb.Attributes&txnindex.AttrControl != 0 && rb.NumRecords > 0 {
		var r kmsg.Record
		if err := r.ReadFrom(rb.Records); err != nil {
			t.Fatalf("control record at %d: %v", w.pos, err)
		}
		wantCtl = txnindex.ParseControlType(int16(binary.BigEndian.Uint16(r.Key[2:])))
		if wantCtl == txnindex.ControlAbort || wantCtl == txnindex.ControlCommit {
			wantEpoch = int32(binary.BigEndian.Uint32(r.Value[2:]))
		}
	}
	if b.Control() != wantCtl || b.CoordinatorEpoch() != wantEpoch {
		t.Errorf("batch at %d: control %v epoch %d, want %v %d", w.pos, b.Control(), b.CoordinatorEpoch(), wantCtl, wantEpoch)
	}
}

// kgoRecords runs franz-go's consumer-side decoder over a record set,
// read_uncommitted, keeping control records.
func kgoRecords(t *testing.T, data []byte) []*kgo.Record {
	t.Helper()
	rp := &kmsg.FetchResponseTopicPartition{Partition: 0, HighWatermark: 1 << 62, LastStableOffset: 1 << 62, RecordBatches: data}
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		KeepControlRecords: true,
		IsolationLevel:     kgo.ReadUncommitted(),
		Topic:              "t",
	}, rp, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil {
		t.Logf("kgo: %v", fp.Err)
	}
	return fp.Records
}

// compareRecords checks our records against kgo's, field by field.
func compareRecords(t *testing.T, what string, got []Record, magics []int8, want []*kgo.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, kgo delivers %d", what, len(got), len(want))
	}
	for i, r := range got {
		w := want[i]
		if r.Offset != w.Offset || !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) || (r.Key == nil) != (w.Key == nil) {
			t.Fatalf("%s: record %d: offset %d key %q value %.40q, kgo %d %q %.40q", what, i, r.Offset, r.Key, r.Value, w.Offset, w.Key, w.Value)
		}
		if magics[i] > 0 && r.Timestamp != w.Timestamp.UnixMilli() {
			t.Errorf("%s: record %d (offset %d): timestamp %d, kgo %d", what, i, r.Offset, r.Timestamp, w.Timestamp.UnixMilli())
		}
		if len(r.Headers) != len(w.Headers) {
			t.Fatalf("%s: record %d: %d headers, kgo %d", what, i, len(r.Headers), len(w.Headers))
		}
		for j, h := range r.Headers {
			if h.Key != w.Headers[j].Key || !bytes.Equal(h.Value, w.Headers[j].Value) {
				t.Errorf("%s: record %d header %d: %q=%q, kgo %q=%q", what, i, j, h.Key, h.Value, w.Headers[j].Key, w.Headers[j].Value)
			}
		}
		if magics[i] == 2 && r.Control == txnindex.ControlNone == w.Attrs.IsControl() {
			t.Errorf("%s: record %d: control %v, kgo IsControl %v", what, i, r.Control, w.Attrs.IsControl())
		}
	}
}

// TestRealSegmentsAgainstKgo decodes every batch of every .log with Records
// and compares the result with what kgo.ProcessFetchPartition delivers when
// handed the whole segment as a fetch response's records.
func TestRealSegmentsAgainstKgo(t *testing.T) {
	for _, path := range realFiles(t, "*.log") {
		t.Run(rel(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := OpenSegment(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var got []Record
			var magics []int8
			for _, b := range f.Batches {
				rs, err := f.Records(b)
				if err != nil {
					t.Fatalf("Records(batch at %d): %v", b.Position(), err)
				}
				if b.Magic() == 2 && int32(len(rs)) != b.Records {
					t.Errorf("batch at %d: %d records decoded, header says %d", b.Position(), len(rs), b.Records)
				}
				for _, r := range rs {
					if r.Offset < b.BaseOffset || r.Offset > b.LastOffset() {
						t.Errorf("batch at %d: record offset %d outside [%d,%d]", b.Position(), r.Offset, b.BaseOffset, b.LastOffset())
					}
					if b.IsControl() && r.Control != b.Control() && len(rs) == 1 {
						t.Errorf("batch at %d: record control %v, header scan %v", b.Position(), r.Control, b.Control())
					}
					magics = append(magics, b.Magic())
				}
				got = append(got, rs...)
			}
			compareRecords(t, rel(path), got, magics, kgoRecords(t, data))
		})
	}
}

// TestRealTransactionalCommit: the ksqlDB command topic was written by a
// transactional producer; its segment holds a broker-written COMMIT marker
// and the partition a producer snapshot.
func TestRealTransactionalCommit(t *testing.T) {
	root := needRealData(t)
	dir := filepath.Join(root, "ItumelengMogase_Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0")
	p, err := OpenPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	var commits []txnindex.Batch
	for _, b := range p.Input.Batches {
		if b.IsCommitMarker() {
			commits = append(commits, b)
		}
	}
	if len(commits) == 0 {
		t.Fatal("no COMMIT marker found")
	}
	for _, c := range commits {
		if c.Size != 78 || c.Attributes() != 0x30 || c.Records != 1 || c.BaseSequence() != -1 || c.CoordinatorEpoch() < 0 {
			t.Errorf("COMMIT marker at %d: %+v, want the 78-byte broker-written shape", c.Position(), c)
		}
		if !p.Input.Batches[0].IsTransactional() {
			t.Errorf("first batch not transactional")
		}
	}
	if p.Snapshot == nil || len(p.Snapshot.Entries) != 1 {
		t.Fatalf("snapshot: %+v", p.Snapshot)
	}
	e := p.Snapshot.Entries[0]
	if e.ProducerID != commits[0].ProducerID || e.CoordinatorEpoch != 0 {
		t.Errorf("snapshot entry %+v does not match the committing producer %d", e, commits[0].ProducerID)
	}
	if p.Metadata == nil || p.Metadata.TopicID.String() != "TvQoTq0KRHWWLKQ64d1gfw" {
		t.Errorf("partition.metadata: %+v", p.Metadata)
	}
	l := p.Build()
	if len(l.Txns) == 0 || l.Txns[0].State != txnindex.TxnCommitted {
		t.Errorf("Build: transactions %+v", l.Txns)
	}
}

// fetchFixture is a fetch response body from the corpus.
type fetchFixture struct {
	name    string
	version int16
	body    []byte // after the correlation id
}

func fetchFixtures(t *testing.T) []fetchFixture {
	root := needRealData(t)
	var out []fetchFixture
	// kafka-rust: Fetch v0 responses without the size prefix.
	for _, p := range realFiles(t, "fetch*.kafka.0*") {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fetchFixture{rel(p), 0, data[4:]})
	}
	// kafkajs: {"type":"Buffer","data":[...]} bodies.
	vre := regexp.MustCompile(`^v(\d+)_`)
	matches, _ := filepath.Glob(filepath.Join(root, "tulios_kafkajs/src/protocol/requests/fetch/fixtures/v*_response*.json"))
	for _, p := range matches {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var j struct{ Data []byte }
		var ints struct{ Data []int }
		if err := json.Unmarshal(raw, &ints); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, v := range ints.Data {
			j.Data = append(j.Data, byte(v))
		}
		v, _ := strconv.Atoi(vre.FindStringSubmatch(filepath.Base(p))[1])
		out = append(out, fetchFixture{rel(p), int16(v), j.Data})
	}
	// segmentio: hex of size + correlation id + Fetch v10 body.
	matches, _ = filepath.Glob(filepath.Join(root, "segmentio_kafka-go/fixtures/*.hex"))
	for _, p := range matches {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data, err := hex.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, fetchFixture{rel(p), 10, data[8:]})
	}
	if len(out) < 20 {
		t.Fatalf("only %d fetch fixtures", len(out))
	}
	return out
}

// TestRealFetchResponses parses the record sets of real fetch responses —
// magic 0 and 1 message sets, gzip and snappy wrappers, v2 batches, partial
// trailing messages — and checks ParseRecordSet + RecordsOf against
// kgo.ProcessFetchPartition.
func TestRealFetchResponses(t *testing.T) {
	sawLegacy, sawTruncated, sawBadCRC := false, false, false
	for _, fx := range fetchFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			resp := kmsg.FetchResponse{Version: fx.version}
			if err := resp.ReadFrom(fx.body); err != nil {
				t.Fatalf("kmsg.FetchResponse v%d: %v", fx.version, err)
			}
			for _, tp := range resp.Topics {
				for _, pp := range tp.Partitions {
					name := fmt.Sprintf("%s-%d", tp.Topic, pp.Partition)
					batches, errs := ParseRecordSet(pp.RecordBatches, name)
					if n := len(pp.RecordBatches) / 17; len(batches) > n {
						t.Fatalf("%s: %d batches from %d bytes", name, len(batches), len(pp.RecordBatches))
					}
					var got []Record
					var magics []int8
					for _, e := range errs {
						switch {
						case strings.Contains(e.Msg, "truncated"):
							sawTruncated = true
						case strings.Contains(e.Msg, "bad CRC"):
							sawBadCRC = true
						default:
							t.Errorf("%s: %v", name, e)
						}
					}
					for _, b := range batches {
						if b.Magic() < 2 {
							sawLegacy = true
						}
						rs, err := RecordsOf(pp.RecordBatches, b, name)
						if err != nil {
							t.Fatalf("%s: RecordsOf(batch at %d): %v", name, b.Position(), err)
						}
						if b.Magic() < 2 && b.Compression() != txnindex.CompressionNone && len(rs) > 0 {
							if rs[0].Offset != b.BaseOffset || rs[len(rs)-1].Offset != b.LastOffset() || int32(len(rs)) != b.Records {
								t.Errorf("%s: legacy wrapper at %d: header scan [%d,%d]x%d, records [%d,%d]x%d",
									name, b.Position(), b.BaseOffset, b.LastOffset(), b.Records, rs[0].Offset, rs[len(rs)-1].Offset, len(rs))
							}
						}
						for range rs {
							magics = append(magics, b.Magic())
						}
						got = append(got, rs...)
					}
					want := kgoRecords(t, pp.RecordBatches)
					if len(errs) > 0 && strings.Contains(errs[0].Msg, "bad CRC") {
						// kgo stops at the bad CRC too; compare the prefix.
						if len(want) > len(got) {
							want = want[:len(got)]
						}
					}
					compareRecords(t, name, got, magics, want)
				}
			}
		})
	}
	if !sawLegacy || !sawTruncated || !sawBadCRC {
		t.Errorf("corpus coverage: legacy %v, truncated tail %v, bad CRC %v; want all", sawLegacy, sawTruncated, sawBadCRC)
	}
}

// TestRealInvalidCRC: kafka-rust's fixture with a deliberately corrupted
// CRC is reported with both values, at the message's position.
func TestRealInvalidCRC(t *testing.T) {
	root := needRealData(t)
	data, err := os.ReadFile(filepath.Join(root, "kafka-rust_kafka-rust/test-data/fetch2.mytopic.nocompression.invalid_crc.kafka.0900"))
	if err != nil {
		t.Fatal(err)
	}
	var resp kmsg.FetchResponse
	if err := resp.ReadFrom(data[4:]); err != nil {
		t.Fatal(err)
	}
	rs := resp.Topics[0].Partitions[0].RecordBatches
	batches, errs := ParseRecordSet(rs, "fetch2")
	if len(errs) == 0 || !errors.Is(errs[0], ErrFormat) || !strings.Contains(errs[0].Error(), "bad CRC: stored 0x") {
		t.Fatalf("errors %v", errs)
	}
	var end int64
	for _, b := range batches {
		end = b.Position() + int64(b.Size)
	}
	if errs[0].Offset != end {
		t.Errorf("bad CRC reported at %#x, want the end of the %d good batches, %#x", errs[0].Offset, len(batches), end)
	}
	t.Logf("%d batches before: %v", len(batches), errs[0])
}
