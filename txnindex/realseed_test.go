package txnindex

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// realDataDir holds the real Kafka log directories of the repository
// (testdata/realdata/README.md says where each comes from).
const realDataDir = "../testdata/realdata"

// realSegment is one real segment's base offset (from its name) and
// batches.
type realSegment struct {
	base    int64
	batches []realBatch
}

// realBatch is what the workload language can say of one real batch.
type realBatch struct {
	base, last int64
	records    int32
	pid        int64 // -1 for none
	txn        bool
	control    int // -1 data, 0 ABORT, 1 COMMIT, 2 another control type or unreadable
}

var segmentName = regexp.MustCompile(`^\d{20}\.log$`)

// realPartitions reads the batch headers of every partition directory under
// testdata/realdata, segment by segment. txnindex imports nothing beyond the
// standard library, so the headers are read here (RecordBatch v2: base
// offset, length, magic at 16, attributes at 21, lastOffsetDelta at 23,
// producer id at 43, records count at 57; a magic 0/1 entry's offset field
// is its last offset), not through the loader.
func realPartitions(tb testing.TB) map[string][]realSegment {
	tb.Helper()
	parts := map[string][]realSegment{}
	err := filepath.WalkDir(realDataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !segmentName.MatchString(d.Name()) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		base, err := strconv.ParseInt(strings.TrimSuffix(d.Name(), ".log"), 10, 64)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path) // WalkDir visits a directory's files in name order: segments in offset order
		parts[dir] = append(parts[dir], realSegment{base, readBatchHeaders(data)})
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return parts
}

func readBatchHeaders(data []byte) []realBatch {
	var out []realBatch
	for pos := 0; pos+17 <= len(data); {
		n := int(int32(binary.BigEndian.Uint32(data[pos+8:])))
		if n < 14 || pos+12+n > len(data) {
			break
		}
		b := data[pos : pos+12+n]
		off := int64(binary.BigEndian.Uint64(b))
		pos += 12 + n
		if b[16] < 2 || len(b) < 61 {
			out = append(out, realBatch{base: off, last: off, records: 1, pid: -1, control: -1})
			continue
		}
		attrs := binary.BigEndian.Uint16(b[21:])
		rb := realBatch{
			base: off, last: off + int64(int32(binary.BigEndian.Uint32(b[23:]))),
			pid:     int64(binary.BigEndian.Uint64(b[43:])),
			records: int32(binary.BigEndian.Uint32(b[57:])),
			txn:     attrs&AttrTransactional != 0,
			control: -1,
		}
		if attrs&AttrControl != 0 {
			rb.control = controlType(b[61:], attrs&7 == 0)
		}
		out = append(out, rb)
	}
	return out
}

// controlType reads the type of an uncompressed control record's key
// (version int16, type int16: 0 ABORT, 1 COMMIT) after the record's length,
// attributes, timestamp delta, offset delta and key length varints.
func controlType(rec []byte, uncompressed bool) int {
	if !uncompressed {
		return 2
	}
	p := 0
	varint := func() int64 {
		v, n := binary.Varint(rec[p:])
		if n <= 0 {
			p = len(rec) + 1
			return -1
		}
		p += n
		return v
	}
	varint() // length
	p++      // attributes
	if p > len(rec) {
		return 2
	}
	varint() // timestamp delta
	varint() // offset delta
	if k := varint(); k < 4 || p+4 > len(rec) {
		return 2
	}
	if t := binary.BigEndian.Uint16(rec[p+2:]); t <= 1 {
		return int(t)
	}
	return 2
}

// workloadSeeds turns a real partition into genWorkload inputs: windows of
// its batches, each batch one step of the workload language with the real
// shape kept (transactional data and markers of up to four producers,
// idempotent and plain batches, compaction gaps, segment rolls) and the
// record counts capped to what the language says (1-4). Each window comes
// twice: with the high watermark at the log end and the log start at 0, and
// with both moved in.
func workloadSeeds(segs []realSegment) [][]byte {
	type step []byte // pid byte, op byte, argument bytes
	var steps []step
	txnSlot, idemSlot := map[int64]byte{}, map[int64]byte{}
	slot := func(m map[int64]byte, pid int64, n int) byte {
		s, ok := m[pid]
		if !ok {
			s = byte(len(m) % n)
			m[pid] = s
		}
		return s
	}
	count := func(n int32, hi int32) byte { return byte(min(max(n, 1), hi) - 1) }
	// skip says a gap of g offsets in at most two skips of up to 3.
	skip := func(g int64) {
		for k := 0; k < 2 && g > 0; k++ {
			steps = append(steps, step{0, 9, byte(min(g, 3) - 1)})
			g -= 3
		}
	}
	next := int64(-1) // offset after the last batch, -1 before the first
	for _, seg := range segs {
		if next >= 0 {
			skip(seg.base - next) // the previous segment's tail was cleaned
			steps = append(steps, step{0, 8})
			next = max(next, seg.base)
		} else {
			next = seg.base
		}
		for _, b := range seg.batches {
			skip(b.base - next) // compaction, or a segment's cleaned head
			next = max(next, b.last+1)
			switch {
			case b.control == 0 || b.control == 1:
				steps = append(steps, step{slot(txnSlot, b.pid, 4), 4, byte(b.control)})
			case b.control > 1 || b.records == 0:
				// Another control type, or a batch the cleaner emptied:
				// its offsets hold nothing the workload can say.
				skip(min(b.last-b.base+1, 3))
			case b.txn && b.pid >= 0:
				steps = append(steps, step{slot(txnSlot, b.pid, 4), 0, count(b.records, 4)})
			case b.pid >= 0:
				steps = append(steps, step{0, 6, slot(idemSlot, b.pid, 3), count(b.records, 3)})
			default:
				steps = append(steps, step{0, 7, count(b.records, 3)})
			}
		}
	}
	const window, maxWindows = 40, 4
	var seeds [][]byte
	for start := 0; start < len(steps) && len(seeds) < 2*maxWindows; start += window {
		w := steps[start:min(start+window, len(steps))]
		// genWorkload plays 8 to 55 steps; rolls before the first batch
		// do nothing, so they pad a short window.
		var body []byte
		for range max(0, 8-len(w)) {
			body = append(body, 0, 8)
		}
		for _, s := range w {
			body = append(body, s...)
		}
		n := max(len(w), 8)
		seed := append([]byte{byte(n - 8)}, body...)
		// from, maxBytes, then HWM (back from the log end) and log start.
		seeds = append(seeds, append(slices.Clip(seed), 0, 0, 0, 0))
		seeds = append(seeds, append(slices.Clip(seed), 3, 1, 5, 2))
	}
	return seeds
}

// realDataSeeds is every partition's workload seeds, in a fixed order.
func realDataSeeds(tb testing.TB) [][]byte {
	parts := realPartitions(tb)
	dirs := make([]string, 0, len(parts))
	for d := range parts {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	var seeds [][]byte
	for _, d := range dirs {
		seeds = append(seeds, workloadSeeds(parts[d])...)
	}
	return seeds
}

// TestRealDataWorkloads runs the oracle comparison on the workloads taken
// from the real partitions, so they are checked in every `go test`, and
// checks that the real data still gives what the seeds are for: segment
// rolls, compaction gaps, idempotent producers and a transaction's COMMIT.
func TestRealDataWorkloads(t *testing.T) {
	seeds := realDataSeeds(t)
	var rolls, gaps, idem, commits int
	for _, s := range seeds {
		w := genWorkload(s)
		checkWorkload(t, w)
		if len(w.b.p.Segments) > 1 {
			rolls++
		}
		for i := range w.b.p.Batches {
			b := &w.b.p.Batches[i]
			switch {
			case i > 0 && b.BaseOffset > w.b.p.Batches[i-1].NextOffset():
				gaps++
			case b.IsCommitMarker():
				commits++
			case b.ProducerID >= 100:
				idem++
			}
		}
	}
	checkBoundsVary(t, seeds)
	t.Logf("%d seeds: %d with rolls; %d gaps, %d idempotent batches, %d commits", len(seeds), rolls, gaps, idem, commits)
	if len(seeds) < 20 || rolls == 0 || gaps == 0 || idem == 0 || commits == 0 {
		t.Fatalf("real data gave %d seeds, %d with rolls; %d gaps, %d idempotent batches, %d commits", len(seeds), rolls, gaps, idem, commits)
	}
}
