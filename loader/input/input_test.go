package input

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testtool"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

const realdata = "../../testdata/realdata"

var (
	ksqlLogDir = filepath.Join(realdata, "ItumelengMogase_Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data")
	ksqlDir    = filepath.Join(ksqlLogDir, "_confluent-ksql-default__command_topic-0")
	lsxSegment = filepath.Join(realdata, "BiggerBrain_kafka/data/lsx1-0/00000000000000000000.log")
	fetchPcap  = filepath.Join(realdata, "segmentio_kafka-go/fixtures/v2-v2.pcapng")
	noFetch    = filepath.Join(realdata, "deepflowio_deepflow/agent/resources/test/flow_generator/kafka/00-produce-v2.pcap")
)

// dumpText is two batches as kafka-dump-log.sh --deep-iteration prints
// them: producer 7's data and its COMMIT marker.
const dumpText = `Dumping /data/orders-3/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000000 size: 90 magic: 2 compresscodec: none crc: 1 isvalid: true
baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 90 CreateTime: 1700000000030 size: 78 magic: 2 compresscodec: none crc: 4 isvalid: true
| offset: 2 CreateTime: 1700000000030 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 0
`

// TestOpenKinds: each kind of input is found from its bytes and name, and
// gives its partitions with the files they came from.
func TestOpenKinds(t *testing.T) {
	testtool.NeedDir(t, realdata)
	dump := filepath.Join(t.TempDir(), "dump.txt")
	if err := os.WriteFile(dump, []byte(dumpText), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, kind string
		check      func(*testing.T, *Contents)
	}{
		{ksqlLogDir, KindLogDir, func(t *testing.T, c *Contents) {
			if len(c.Dirs) < len(c.Partitions) || len(c.Partitions) < 2 {
				t.Errorf("%d partitions from %d directories", len(c.Partitions), len(c.Dirs))
			}
			for _, p := range c.Partitions {
				if d := c.Dir(p.Log.Topic, p.Log.Partition); d == nil || d.Input.Topic != p.Log.Topic || len(d.Input.Batches) != len(p.Log.Batches) {
					t.Errorf("%s-%d: directory %v", p.Log.Topic, p.Log.Partition, d)
				}
			}
		}},
		{ksqlDir, KindPartitionDir, func(t *testing.T, c *Contents) {
			if len(c.Partitions) != 1 || len(c.Dirs) != 1 || c.Dir("_confluent-ksql-default__command_topic", 0) != c.Dirs[0] || c.Dir("_confluent-ksql-default__command_topic", 1) != nil {
				t.Errorf("%d partitions, %d directories", len(c.Partitions), len(c.Dirs))
			}
		}},
		{lsxSegment, KindSegment, func(t *testing.T, c *Contents) {
			l := c.Partitions[0].Log
			// The topic and partition come from the directory holding it.
			if l.Topic != "lsx1" || l.Partition != 0 || c.Segment == nil || len(c.Segment.Segments) != 1 || c.Segment.Dir != filepath.Dir(lsxSegment) {
				t.Errorf("%s-%d, kept %+v", l.Topic, l.Partition, c.Segment)
			}
		}},
		{fetchPcap, KindCapture, func(t *testing.T, c *Contents) {
			if c.Capture == nil || len(c.Partitions[0].Fetches) == 0 || c.Partitions[0].Log.HighWatermarkSource != "capture" {
				t.Errorf("capture %v, %d fetches", c.Capture != nil, len(c.Partitions[0].Fetches))
			}
		}},
		{dump, KindDumpText, func(t *testing.T, c *Contents) {
			l := c.Partitions[0].Log
			if l.Topic != "orders" || l.Partition != 3 || len(l.Batches) != 2 || l.Batches[1].Control() != txnindex.ControlCommit {
				t.Errorf("%s-%d: %d batches", l.Topic, l.Partition, len(l.Batches))
			}
		}},
	} {
		got, err := Open(c.path)
		if err == nil && got.Kind != KindLogDir && len(got.Partitions[0].Log.Batches) == 0 {
			t.Errorf("%s: no batch", c.path)
		}
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if got.Kind != c.kind || len(got.Partitions) == 0 {
			t.Errorf("%s: kind %q, %d partitions; want %q", c.path, got.Kind, len(got.Partitions), c.kind)
			continue
		}
		c.check(t, got)
	}
}

// TestCaptureWithoutFetch: a capture of other requests is a capture with
// no partition and a problem saying why, not an error.
func TestCaptureWithoutFetch(t *testing.T) {
	testtool.NeedDir(t, realdata)
	c, err := Open(noFetch)
	if err != nil || c.Kind != KindCapture || len(c.Partitions) != 0 || len(c.Problems) == 0 ||
		!strings.Contains(c.Problems[len(c.Problems)-1].Error(), "no Fetch exchange to decide") {
		t.Fatalf("%v %+v", err, c)
	}
}

// TestOpenBytesAsOpen: an upload's bytes are read as the file on disk is,
// and a segment's bytes are kept up to MaxKeptSegment.
func TestOpenBytesAsOpen(t *testing.T) {
	testtool.NeedDir(t, realdata)
	b, err := os.ReadFile(lsxSegment)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Open(lsxSegment)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenBytes("00000000000000000000.log", b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != KindSegment || !slices.Equal(got.Partitions[0].Log.Batches, want.Partitions[0].Log.Batches) {
		t.Fatalf("kind %q, batches differ from the file's", got.Kind)
	}
	// Bytes come without a directory: the file name names the topic.
	if l := got.Partitions[0].Log; l.Topic != "00000000000000000000" || got.Segment == nil || got.Segment.Dir != "" {
		t.Errorf("topic %q, kept %+v", l.Topic, got.Segment)
	}
	recs, err := got.Segment.Segments[0].Log.Records(got.Partitions[0].Log.Batches[0])
	if err != nil || len(recs) == 0 {
		t.Errorf("records of the kept bytes: %d, %v", len(recs), err)
	}
	// Past the limit the same bytes are decided, and dropped. The bytes
	// are padded with zeros (a truncated tail, reported) to pass it.
	big := append(slices.Clone(b), make([]byte, MaxKeptSegment)...)
	got, err = OpenBytes("big.log", big)
	if err != nil || got.Segment != nil || len(got.Partitions[0].Log.Batches) != len(want.Partitions[0].Log.Batches) || len(got.Problems) == 0 {
		t.Errorf("over the limit: %v, kept %v, %d problems", err, got != nil && got.Segment != nil, len(got.Problems))
	}
}

// TestOpenErrors: an input that holds nothing to decide on says what was
// expected, naming the file.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "t-0")
	if err := os.Mkdir(part, 0o755); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(part, "00000000000000000000.index")
	text := filepath.Join(dir, "notes.md")
	os.WriteFile(index, make([]byte, 8), 0o644)
	os.WriteFile(text, []byte("# not Kafka\n"), 0o644)
	for _, c := range []struct {
		open func() (*Contents, error)
		want string
	}{
		{func() (*Contents, error) { return Open(text) }, text + ": not a Kafka input: want a log directory"},
		{func() (*Contents, error) { return Open(index) }, index + ": an index or snapshot alone holds no batches to decide on; give its partition directory (" + part + "), or use inspect"},
		{func() (*Contents, error) { return OpenBytes("x.index", make([]byte, 8)) }, "x.index: an index or snapshot alone holds no batches to decide on; give its .log segment"},
		{func() (*Contents, error) { return Open(part) }, part + ": no partition to load"},
		{func() (*Contents, error) { return Open(filepath.Join(dir, "missing")) }, "no such file or directory"},
	} {
		_, err := c.open()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	// Damage is a problem, not an error: a segment cut inside its first
	// batch is a segment with no batch.
	c, err := OpenBytes("cut.log", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 2, 0, 0, 0})
	var fe *loader.FormatError
	if err != nil || c.Kind != KindSegment || len(c.Problems) != 1 || !errors.As(c.Problems[0], &fe) || fe.File != "cut.log" {
		t.Errorf("cut segment: %v, %+v", err, c)
	}
}
