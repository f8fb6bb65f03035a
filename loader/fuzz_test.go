package loader

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/txnindex"
)

// seedFiles adds every file under testdata/real whose name matches one of
// the suffixes.
func seedFiles(f *testing.F, suffixes ...string) {
	err := filepath.WalkDir(filepath.Join("testdata", "real"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		for _, s := range suffixes {
			if strings.HasSuffix(d.Name(), s) {
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				f.Add(data)
			}
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
}

// realTxnDir is the corpus's partition a transactional producer wrote
// (ksqlDB's command topic, in the repository's testdata/realdata): data
// batches closed by a COMMIT marker a broker wrote, and a producer
// snapshot with a coordinator epoch, which testdata/real lacks.
const realTxnDir = "../testdata/realdata/ItumelengMogase_Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_confluent-ksql-default__command_topic-0"

// seedRealTxn adds realTxnDir's files whose name ends in suffix; without
// the corpus, none.
func seedRealTxn(f *testing.F, suffix string) {
	files, _ := filepath.Glob(filepath.Join(realTxnDir, "*"+suffix))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
}

// seedBatches adds generated batches covering what the real seeds lack:
// markers, zstd, xerial snappy, legacy wrappers.
func seedBatches(f *testing.F) {
	f.Add(concat(dataBatch(f, 0, 7, true, 3), marker(f, 3, 7, false, 5), dataBatch(f, 4, -1, false, 2)))
	for _, c := range []codec{codecGzip, codecSnappy, codecRawSnappy, codecLZ4, codecZstd} {
		f.Add(batch(f, kmsg.RecordBatch{FirstOffset: 10, ProducerID: -1, FirstSequence: -1}, c, records(5, 30)))
	}
	inner := concat(legacyMessage(0, 1, 0, 1, []byte("k"), []byte("a")), legacyMessage(1, 1, 0, 2, nil, []byte("b")))
	f.Add(concat(legacyMessage(5, 1, 1, 9, nil, compress(f, codecGzip, inner)), legacyMessage(6, 0, 0, -1, nil, []byte("plain"))))
	f.Add([]byte{})
	seedHostile(f)
}

// fuzzBound is the decompression bound of the fuzz targets.
const fuzzBound = 1 << 20

// seedHostile adds the hostile shapes, scaled down so that an
// input derived from them still costs about a millisecond (the fuzzer
// spends up to a minute minimising each new input): a record-count bomb
// (zstd of 32 KiB of 7-byte records; the held 64 MiB),
// control-batch bombs (a marker followed by 256 KiB of zeros in zstd,
// claiming one record and claiming millions),
// and offsets that overflow, go negative or go backwards after valid
// batches. testdata/fuzz holds the same shapes as files.
func seedHostile(f *testing.F) {
	for _, s := range hostileSeeds(f) {
		f.Add(s)
	}
}

func hostileSeeds(t testing.TB) [][]byte {
	valid := concat(dataBatch(t, 0, -1, false, 3), dataBatch(t, 3, 7, true, 2), marker(t, 5, 7, true, 1))
	n := (32 << 10) / len(tinyRecord)
	countBomb := rawBatch(kmsg.RecordBatch{Attributes: int16(codecZstd), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		LastOffsetDelta: int32(n - 1)}, int32(n), compress(t, codecZstd, bytes.Repeat(tinyRecord, n)))
	zeros := make([]byte, 256<<10)
	copy(zeros, markerRecord(5))
	ctl := compress(t, codecZstd, zeros)
	txnZstd := kmsg.RecordBatch{FirstOffset: 6, Attributes: 0x34, ProducerID: 7, ProducerEpoch: 1, FirstSequence: -1}
	return [][]byte{
		concat(valid, countBomb),
		concat(valid, rawBatch(txnZstd, 1, ctl), dataBatch(t, 7, -1, false, 1)),
		concat(valid, rawBatch(txnZstd, 9_586_980, ctl)),
		concat(valid, hostileOffsetBatch(t, math.MaxInt64-7, math.MaxInt32)),
		concat(valid, hostileOffsetBatch(t, 6, -5)),
		concat(valid, hostileOffsetBatch(t, 4, 0)),
	}
}

// checkScan states the segment invariants.
func checkScan(t *testing.T, data []byte, s *SegmentFile) {
	if len(s.Batches) > len(data)/17 {
		t.Fatalf("%d batches from %d bytes", len(s.Batches), len(data))
	}
	pos := int64(0)
	for _, b := range s.Batches {
		if b.Position() != pos || b.Size < logOverhead+recordOverheadV0 {
			t.Fatalf("batch at %d size %d, expected position %d", b.Position(), b.Size, pos)
		}
		pos += int64(b.Size)
	}
	if pos != s.ValidBytes || s.ValidBytes > int64(len(data)) {
		t.Fatalf("batches end at %d, ValidBytes %d, size %d", pos, s.ValidBytes, len(data))
	}
	if s.ValidBytes < int64(len(data)) && len(s.Damage) == 0 {
		t.Fatalf("stopped at %d of %d with no damage", s.ValidBytes, len(data))
	}
	for _, d := range s.Damage {
		if d.Offset < 0 || d.Offset > int64(len(data)) {
			t.Fatalf("damage outside the input: %v", d)
		}
	}
	checkOffsets(t, s.Batches)
}

// checkOffsets states the offset invariants of every scan: non-negative,
// strictly increasing, a next offset an int64 holds, and an end-transaction
// marker of one record.
func checkOffsets(t *testing.T, bs []txnindex.Batch) {
	last := int64(-1)
	for _, b := range bs {
		if b.BaseOffset <= last || b.LastOffsetDelta() < 0 || b.BaseOffset > math.MaxInt64-1-int64(b.LastOffsetDelta()) {
			t.Fatalf("batch at %d: offsets [%d, +%d] after last offset %d", b.Position(), b.BaseOffset, b.LastOffsetDelta(), last)
		}
		last = b.LastOffset()
		if c := b.Control(); (c == txnindex.ControlAbort || c == txnindex.ControlCommit) && b.Records != 1 {
			t.Fatalf("batch at %d: %v marker with %d records", b.Position(), c, b.Records)
		}
	}
}

// checkPages states that a page of a batch is the same records as that
// part of Records, and that it never holds more than asked.
func checkPages(t *testing.T, s *SegmentFile, b txnindex.Batch, all []Record, err error) {
	for _, lim := range []PageLimits{{Limit: 2}, {From: 1, Limit: 3}} {
		p, perr := s.RecordsPage(context.Background(), b, lim)
		if perr != nil {
			if err == nil {
				t.Fatalf("batch at %d: page %+v failed (%v) where Records succeeded", b.Position(), lim, perr)
			}
			continue
		}
		if len(p.Records) > lim.Limit {
			t.Fatalf("batch at %d: page of %d records, limit %d", b.Position(), len(p.Records), lim.Limit)
		}
		if err == nil {
			want := all[min(lim.From, len(all)):min(lim.From+lim.Limit, len(all))]
			if len(p.Records) != len(want) || (len(want) > 0 && !reflect.DeepEqual(p.Records, want)) || p.Total != len(all) {
				t.Fatalf("batch at %d: page %+v differs from Records", b.Position(), lim)
			}
		}
	}
}

// FuzzSegment: any input scans without panicking, never yields more
// batches than bytes/17, accounts for every byte (batches then damage), and
// Records never panics on a scanned batch. The verifying scan's batches are
// a prefix of the header-only scan's.
func FuzzSegment(f *testing.F) {
	seedFiles(f, ".log")
	seedRealTxn(f, ".log")
	seedBatches(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		limit := ScanOptions{VerifyCRC: true, ExpandLegacy: true, MaxDecompressedSize: fuzzBound}
		full := NewSegmentBytes(data, "f.log", limit)
		checkScan(t, data, full)
		head := NewSegmentBytes(data, "f.log", ScanOptions{MaxDecompressedSize: fuzzBound})
		checkScan(t, data, head)
		if len(full.Batches) > len(head.Batches) {
			t.Fatalf("verifying scan kept %d batches, header scan %d", len(full.Batches), len(head.Batches))
		}
		for i, b := range full.Batches {
			if head.Batches[i].Position() != b.Position() {
				t.Fatalf("batch %d at %d vs %d", i, b.Position(), head.Batches[i].Position())
			}
		}
		// A clean-shutdown scan (CRCs noted, never cut) keeps what the
		// header scan keeps.
		noted := NewSegmentBytes(data, "f.log", ScanOptions{crcKept: flushedCRC, MaxDecompressedSize: fuzzBound})
		checkScan(t, data, noted)
		if len(noted.Batches) != len(head.Batches) {
			t.Fatalf("CRC-noting scan kept %d batches, header scan %d", len(noted.Batches), len(head.Batches))
		}
		for i, b := range noted.Batches {
			if h := head.Batches[i]; h.Position() != b.Position() || h.Control() != b.Control() || h.CoordinatorEpoch() != b.CoordinatorEpoch() {
				t.Fatalf("batch %d: CRC-noting scan %+v, header scan %+v", i, b, h)
			}
		}
		viaReader, err := NewSegmentWith(bytes.NewReader(data), int64(len(data)), "f.log", limit)
		if err != nil || len(viaReader.Batches) != len(full.Batches) || len(viaReader.Damage) != len(full.Damage) {
			t.Fatalf("ReaderAt scan differs: %v", err)
		}
		// Cut at batch starts, and at a byte that is none, the walk in
		// parts (scanParts, each into its region of one slice) finds
		// what one walk finds.
		if n := len(head.Batches); n > 1 {
			cuts := []int64{head.Batches[n/2].Position()}
			if n > 3 {
				cuts = []int64{head.Batches[n/3].Position(), head.Batches[2*n/3].Position()}
			}
			for _, o := range []ScanOptions{limit, {MaxDecompressedSize: fuzzBound}} {
				seq, _, err := scanSegmentContext(context.Background(), bytes.NewReader(data), int64(len(data)), "f.log", o, nil, 0, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range [][]int64{cuts, {cuts[0] + 1}} {
					if c[0] <= 0 || c[len(c)-1] >= int64(len(data)) {
						continue
					}
					parts, _, err := scanSegmentContext(context.Background(), bytes.NewReader(data), int64(len(data)), "f.log", o, nil, 0, 0, c)
					if err != nil {
						t.Fatal(err)
					}
					sameScan(t, fmt.Sprintf("cuts %v", c), seq, parts)
					// Each part sampled at every other batch start in
					// it and at a byte that is none: the regions are
					// sized otherwise, the walk finds the same.
					spots := make([][]int64, len(c)+1)
					for i := range spots {
						lo, hi := int64(0), int64(len(data))
						if i > 0 {
							lo = c[i-1]
						}
						if i < len(c) {
							hi = c[i]
						}
						spots[i] = []int64{lo}
						for k := 0; k < n; k += 2 {
							if p := head.Batches[k].Position(); p > spots[i][len(spots[i])-1] && p < hi {
								spots[i] = append(spots[i], p)
							}
						}
						if p := lo + 5; p > spots[i][len(spots[i])-1] && p < hi {
							spots[i] = append(spots[i], p)
						}
					}
					spotted, _, err := scanSegmentFrom(context.Background(), bytes.NewReader(data), int64(len(data)), 0, "f.log", o, nil, 0, 0, split{cuts: c, spots: spots}, nil)
					if err != nil {
						t.Fatal(err)
					}
					sameScan(t, fmt.Sprintf("cuts %v, spots %v", c, spots), seq, spotted)
				}
			}
		}
		for _, b := range head.Batches {
			rs, err := head.Records(b)
			if err == nil && b.Magic() == 2 && int32(len(rs)) != b.Records {
				t.Fatalf("batch at %d: %d records, header says %d", b.Position(), len(rs), b.Records)
			}
			checkPages(t, head, b, rs, err)
		}
	})
}

// FuzzRecordSet: ParseRecordSet never panics, never returns more batches
// than bytes/17, and its batches tile a prefix of the input.
func FuzzRecordSet(f *testing.F) {
	seedFiles(f, ".log")
	seedRealTxn(f, ".log")
	seedBatches(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		bs, errs := ParseRecordSet(data, "fetch")
		if len(bs) > len(data)/17 {
			t.Fatalf("%d batches from %d bytes", len(bs), len(data))
		}
		pos := int64(0)
		for _, b := range bs {
			if b.Position() != pos || b.Segment != -1 {
				t.Fatalf("batch at %d, expected %d", b.Position(), pos)
			}
			pos += int64(b.Size)
		}
		if pos < int64(len(data)) && len(errs) == 0 {
			t.Fatalf("stopped at %d of %d with no error", pos, len(data))
		}
		checkOffsets(t, bs)
		seg := NewSegmentBytes(data, "fetch", ScanOptions{MaxDecompressedSize: fuzzBound})
		for _, b := range bs {
			seg.Records(b)
		}
	})
}

// FuzzTxnIndex: any .txnindex decodes without panicking into at most
// bytes/34 entries, each a whole valid entry.
func FuzzTxnIndex(f *testing.F) {
	// An .index as the broker writes it (an entry every 4 KiB of log)
	// with its zero-filled preallocated tail.
	var idx []byte
	for i := range 4096 {
		idx = binary.BigEndian.AppendUint32(idx, uint32(4*i))
		idx = binary.BigEndian.AppendUint32(idx, uint32(4096*i*4))
	}
	f.Add(append(idx, make([]byte, 800)...))
	f.Add(txnindex.EncodeTxnIndex([]txnindex.AbortedTxn{{ProducerID: 1, FirstOffset: 5, LastOffset: 9, LastStableOffset: 10}, {ProducerID: 2, FirstOffset: 6, LastOffset: 12, LastStableOffset: 13}}))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ReadTxnIndexFile(bytes.NewReader(data), int64(len(data)), "00000000000000000000.txnindex", 0)
		if len(x.Entries) > len(data)/txnindex.AbortedTxnSize {
			t.Fatalf("%d entries from %d bytes", len(x.Entries), len(data))
		}
		if len(data)%txnindex.AbortedTxnSize != 0 && err == nil {
			t.Fatalf("partial entry not reported")
		}
		// Index readers share the concern: check them on the same bytes.
		oi, _ := ReadOffsetIndex(bytes.NewReader(data), int64(len(data)), "i.index", 0)
		ti, _ := ReadTimeIndex(bytes.NewReader(data), int64(len(data)), "i.timeindex", 0)
		if len(oi.Entries) > len(data)/8 || len(ti.Entries) > len(data)/12 {
			t.Fatalf("index entries %d/%d from %d bytes", len(oi.Entries), len(ti.Entries), len(data))
		}
		for i := 1; i < len(oi.Entries); i++ {
			if a, b := oi.Entries[i-1], oi.Entries[i]; b.Offset <= a.Offset || b.Position < a.Position {
				t.Fatalf(".index entries %d and %d out of order: %+v %+v", i-1, i, a, b)
			}
		}
		// The scan's plan read in place (rawIndex): cuts and sample
		// spots strictly increasing inside the bytes planned for, each
		// part's spots starting at its start, however the bytes lie.
		defer func(b int64) { spotBytes = b }(spotBytes)
		spotBytes = 1 << 20
		ri := newRawIndex(bytes.NewReader(data), int64(len(data)))
		if ri.n < 0 || ri.n > len(data)/8 {
			t.Fatalf("%d raw entries from %d bytes", ri.n, len(data))
		}
		const logSize = 64 << 20
		cuts := ri.cuts(3, logSize, 4)
		starts := append([]int64{3}, cuts...)
		ends := append(append([]int64(nil), cuts...), logSize)
		for i, c := range cuts {
			if c <= starts[i] || c >= logSize {
				t.Fatalf("cuts %v for (3, %d)", cuts, int64(logSize))
			}
		}
		spots := ri.sampleSpots(starts, ends)
		if spots != nil && len(spots) != len(starts) {
			t.Fatalf("spots for %d parts: %v", len(starts), spots)
		}
		for i, sp := range spots {
			for j, p := range sp {
				if j == 0 && p != starts[i] || j > 0 && (p <= sp[j-1] || p >= ends[i]) || len(sp) > maxSpots {
					t.Fatalf("part %d [%d, %d): spots %v", i, starts[i], ends[i], sp)
				}
			}
		}
	})
}

// FuzzSnapshot: any .snapshot decodes without panicking; entries are
// returned only for a valid file, and never more than fit.
func FuzzSnapshot(f *testing.F) {
	seedFiles(f, ".snapshot", ".timeindex", ".index")
	seedRealTxn(f, ".snapshot")
	f.Add(snapshotFile(SnapshotEntry{ProducerID: 5, Epoch: 3, LastOffset: 95, CurrentTxnFirstOffset: 90}))
	f.Add(snapshotFile())
	// The shape of a snapshot that claims many open transactions (a
	// hostile 100,000-producer file scaled down): each entry open, each
	// pinning its own first offset.
	many := make([]SnapshotEntry, 1000)
	for i := range many {
		many[i] = SnapshotEntry{ProducerID: txnindex.ProducerID(1000 + i), Epoch: 1, LastOffset: int64(2*i + 1), CurrentTxnFirstOffset: int64(2 * i)}
	}
	f.Add(snapshotFile(many...))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadProducerSnapshot(data, "00000000000000000001.snapshot")
		if int64(len(s.Entries))*snapshotEntrySize > int64(max(len(data)-snapshotEntriesStart, 0)) {
			t.Fatalf("%d entries from %d bytes", len(s.Entries), len(data))
		}
		if err == nil && len(data) != snapshotEntriesStart+len(s.Entries)*snapshotEntrySize {
			t.Fatalf("clean decode of %d bytes with %d entries", len(data), len(s.Entries))
		}
		s.Ongoing(1 << 62)
	})
}

// FuzzCheckpoint: the text decoders never panic and never return more
// entries than the input has lines.
func FuzzCheckpoint(f *testing.F) {
	seedFiles(f, "checkpoint", "partition.metadata")
	f.Add([]byte("0\n2\nt 0 5\nt 1 6\n"))
	f.Add([]byte("0\r\n1\r\n3 7\r\n"))
	f.Add([]byte("version: 0\ntopic_id: Fa1tHmowQS2lSyUrEd4jSA"))
	f.Add([]byte("0\n4\nother 0 1\nt 3 9\n other 1 2\nt 3 10\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) + 1
		c, err := ReadOffsetCheckpoint(bytes.NewReader(data), "cp")
		if len(c.Entries) > lines {
			t.Fatalf("%d entries from %d lines", len(c.Entries), lines)
		}
		if err == nil && len(c.Entries) > 0 {
			// A clean decode round-trips through the Java format.
			var sb strings.Builder
			sb.WriteString("0\n")
			sb.WriteString(strconv.Itoa(len(c.Entries)) + "\n")
			for _, e := range c.Entries {
				sb.WriteString(e.Topic + " " + strconv.Itoa(int(e.Partition)) + " " + strconv.Itoa(int(e.Offset)) + "\n")
			}
			c2, err := ReadOffsetCheckpoint(strings.NewReader(sb.String()), "cp")
			if err != nil || len(c2.Entries) != len(c.Entries) {
				t.Fatalf("round trip: %v", err)
			}
		}
		// Keeping one partition's lines checks every line alike: the
		// same error, and the kept entries are the full read's for it.
		if len(c.Entries) > 0 {
			k := tp{c.Entries[0].Topic, c.Entries[0].Partition}
			f, ferr := readOffsetCheckpoint(bytes.NewReader(data), "cp", map[tp]bool{k: true})
			if (ferr == nil) != (err == nil) || ferr != nil && ferr.Error() != err.Error() {
				t.Fatalf("filtered read: %v, full read: %v", ferr, err)
			}
			var want []OffsetCheckpointEntry
			for _, e := range c.Entries {
				if (tp{e.Topic, e.Partition}) == k {
					want = append(want, e)
				}
			}
			if !slices.Equal(f.Entries, want) {
				t.Fatalf("filtered read kept %v, want %v", f.Entries, want)
			}
		}
		e, _ := ReadLeaderEpochCheckpoint(bytes.NewReader(data), "le")
		if len(e.Entries) > lines {
			t.Fatalf("%d epochs from %d lines", len(e.Entries), lines)
		}
		ReadPartitionMetadata(bytes.NewReader(data), "pm")
	})
}
