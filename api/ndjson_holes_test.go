package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// v2Batch is a v2 batch at base whose header claims lastDelta and whose
// records sit at deltas (a batch the cleaner compacted keeps its offsets
// and drops records, KIP-98), with a correct CRC: attrs sets the
// transactional and control bits.
func v2Batch(base int64, lastDelta int32, pid int64, attrs int16, deltas ...int32) []byte {
	var raw []byte
	for _, d := range deltas {
		r := kmsg.Record{OffsetDelta: d, Key: []byte(fmt.Sprint("k", d)), Value: []byte("v")}
		if attrs&txnindex.AttrControl != 0 {
			// An ABORT marker's key (version 0, type 0) and value
			// (version 0, coordinator epoch 0).
			r.Key, r.Value = []byte{0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0}
		}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		raw = r.AppendTo(raw)
	}
	epoch, seq := int16(1), int32(0)
	if pid < 0 {
		epoch, seq = -1, -1
	}
	rb := kmsg.RecordBatch{FirstOffset: base, Magic: 2, Attributes: attrs, ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq,
		LastOffsetDelta: lastDelta, NumRecords: int32(len(deltas)), Records: raw, Length: int32(49 + len(raw)),
		FirstTimestamp: 1000, MaxTimestamp: 1000}
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// segmentLog scans data as one segment and builds its log, with the pages
// of its records as `txnscope decide` reads them.
func segmentLog(t *testing.T, data []byte) (*txnindex.Log, BatchPages) {
	t.Helper()
	seg := loader.NewSegmentBytes(data, "00000000000000000000.log", loader.DefaultScanOptions)
	if len(seg.Damage) != 0 {
		t.Fatalf("scan: damage %v", seg.Damage)
	}
	l := txnindex.Build(&txnindex.Partition{Topic: "t", Segments: []txnindex.Segment{seg.Segment()}, Batches: seg.Batches,
		LogStartOffset: -1, HighWatermark: -1})
	return l, func(ctx context.Context, b *txnindex.Batch, req RecordPageRequest) (RecordPage, error) {
		return segmentRecords{seg}.RecordPage(ctx, "", l, b, req)
	}
}

// errTooManyLines ends a write that passed its line bound.
var errTooManyLines = errors.New("too many lines")

// boundedWriter keeps at most max lines and then fails, so that an encoder
// writing a line per claimed offset fails the test at once instead of
// writing 2^31 lines.
type boundedWriter struct {
	buf   bytes.Buffer
	lines int
	max   int
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte{'\n'})
	if w.lines > w.max {
		return 0, errTooManyLines
	}
	return w.buf.Write(p)
}

// ndjsonLine is what the tests read of a line.
type ndjsonLine struct {
	Offset   *int64 `json:"offset"`
	From     int64  `json:"from"`
	To       int64  `json:"to"`
	Records  *int64 `json:"records"`
	Decision string `json:"decision"`
	Cause    string `json:"cause"`
}

func readLines(t *testing.T, b []byte) []ndjsonLine {
	t.Helper()
	var out []ndjsonLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m ndjsonLine
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		out = append(out, m)
	}
	return out
}

// short is a line as "3 delivered" or "1-2 gap".
func (m ndjsonLine) short() string {
	switch {
	case m.Offset != nil:
		return fmt.Sprintf("%d %s", *m.Offset, m.Decision)
	case m.Records != nil:
		return fmt.Sprintf("%d-%d %s (%d records)", m.From, m.To, m.Decision, *m.Records)
	}
	return fmt.Sprintf("%d-%d %s", m.From, m.To, m.Decision)
}

// checkCounts: the lines of each kind add up to what txnindex.Counts (and
// so `decide --counts`) counts of the whole log: a per-offset line is a
// record, a range line with records holds that many, a gap line is its
// offsets.
func checkCounts(t *testing.T, l *txnindex.Log, o txnindex.ConsumeOptions, lines []ndjsonLine) {
	t.Helper()
	c := txnindex.NewCounts(l.LogStartOffset, l.LogEndOffset-1)
	for d := range l.Decisions(o) {
		c.Add(&d)
	}
	got := map[string]int64{}
	for _, m := range lines {
		switch {
		case m.Offset != nil:
			got[m.Decision]++
		case m.Records != nil:
			got[m.Decision] += *m.Records
		default:
			got[m.Decision] += m.To - m.From + 1
		}
	}
	want := map[string]int64{"delivered": c.Delivered, "aborted": c.Aborted, "control": c.ControlMarkers, "pending": c.Pending,
		"before_position": c.BeforePosition, "gap": c.Missing}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: the lines have %d, --counts %d (%+v)", k, got[k], v, c)
		}
	}
}

// TestOffsetsNDJSONCompacted, on a compacted batch:
// records at deltas 0, 3 and 7 of a batch whose lastOffsetDelta is 9 are
// three lines, the offsets between them gap lines (gap_compacted), not ten
// "delivered" lines; the lines agree with --counts. Without the record
// bytes (a capture, dump text) the batch is one range line with its 3
// records.
func TestOffsetsNDJSONCompacted(t *testing.T) {
	data := bytes.Join([][]byte{
		v2Batch(0, 9, -1, 0, 0, 3, 7),
		v2Batch(10, 1, -1, 0, 0, 1),
		v2Batch(12, 4, 5, txnindex.AttrTransactional, 2, 4), // aborted below, holes at 12-13 and 15
		v2Batch(17, 0, 5, txnindex.AttrTransactional|txnindex.AttrControl, 0),
	}, nil)
	l, pages := segmentLog(t, data)
	o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: txnindex.DefaultMaxBytes}
	for _, tc := range []struct {
		name  string
		pages BatchPages
		want  string
	}{
		{"records", pages, "0 delivered|1-2 gap|3 delivered|4-6 gap|7 delivered|8-9 gap|10 delivered|11 delivered|" +
			"12-13 gap|14 aborted|15-15 gap|16 aborted|17 control"},
		{"no record bytes", nil, "0-9 delivered (3 records)|10 delivered|11 delivered|12-16 aborted (2 records)|17 control"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &boundedWriter{max: 100}
			if err := WriteOffsetsNDJSON(context.Background(), w, l, l.Decisions(o), tc.pages); err != nil {
				t.Fatal(err)
			}
			lines := readLines(t, w.buf.Bytes())
			var got []string
			for _, m := range lines {
				got = append(got, m.short())
				if m.Decision == "gap" && m.Cause != "gap_compacted" {
					t.Errorf("%s: cause %s", m.short(), m.Cause)
				}
			}
			if g := strings.Join(got, "|"); g != tc.want {
				t.Errorf("lines\n%s\nwant\n%s", g, tc.want)
			}
			if tc.pages != nil {
				checkCounts(t, l, o, lines)
			}
		})
	}
}

// TestOffsetsNDJSONHostile: a batch of a few hundred
// bytes whose header claims 2^31 offsets wrote 2^31 lines. Data, control
// and emptied batches claiming MaxInt32 offsets now write at most their
// records plus their gaps, fast; the lines agree with --counts.
func TestOffsetsNDJSONHostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"data", v2Batch(0, math.MaxInt32, -1, 0, 0)},
		{"data_records_apart", v2Batch(0, math.MaxInt32, -1, 0, 0, 1<<30, math.MaxInt32)},
		{"control", v2Batch(0, math.MaxInt32, 7, txnindex.AttrTransactional|txnindex.AttrControl, 0)},
		{"emptied", v2Batch(0, math.MaxInt32, 7, txnindex.AttrTransactional)},
		{"after_a_batch", bytes.Join([][]byte{v2Batch(0, 1, -1, 0, 0, 1), v2Batch(2, math.MaxInt32, -1, 0, 5)}, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, pages := segmentLog(t, tc.data)
			if len(l.Batches) == 0 || l.LogEndOffset < math.MaxInt32 {
				t.Fatalf("%d batches, log end %d: want the claimed offsets", len(l.Batches), l.LogEndOffset)
			}
			var records int64
			for i := range l.Batches {
				records += int64(l.Batches[i].Records)
			}
			o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadUncommitted, MaxBytes: txnindex.DefaultMaxBytes}
			// Each record is at most one line and splits a gap in two.
			bound := int(2*records + 1 + int64(len(l.Batches)))
			w := &boundedWriter{max: bound}
			start := time.Now()
			err := WriteOffsetsNDJSON(context.Background(), w, l, l.Decisions(o), pages)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("%d bytes: %v after %d lines (bound %d = records + gaps)", len(tc.data), err, w.lines, bound)
			}
			if took > 2*time.Second {
				t.Errorf("%d lines took %v", w.lines, took)
			}
			lines := readLines(t, w.buf.Bytes())
			t.Logf("%d-byte segment, %d records: %d lines in %v", len(tc.data), records, len(lines), took)
			checkCounts(t, l, o, lines)
		})
	}
}

// FuzzOffsetsNDJSON: whatever a segment's batches claim, decide's NDJSON
// has at most a line per record and per gap, and its
// lines tile the decided offsets in order, each offset once.
func FuzzOffsetsNDJSON(f *testing.F) {
	f.Add(v2Batch(0, 9, -1, 0, 0, 3, 7))
	f.Add(v2Batch(0, math.MaxInt32, -1, 0, 0))
	f.Add(v2Batch(0, math.MaxInt32, -1, 0, 0, 1<<30, math.MaxInt32))
	f.Add(v2Batch(0, math.MaxInt32, 7, txnindex.AttrTransactional|txnindex.AttrControl, 0))
	f.Add(v2Batch(0, math.MaxInt32, 7, txnindex.AttrTransactional))
	f.Add(v2Batch(0, 5, -1, 0, 4, 2, 2, 9)) // deltas out of order, repeated, past the last offset
	f.Add(bytes.Join([][]byte{v2Batch(0, 4, 5, txnindex.AttrTransactional, 1, 3), v2Batch(5, 0, 5, txnindex.AttrTransactional|txnindex.AttrControl, 0)}, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		seg := loader.NewSegmentBytes(data, "00000000000000000000.log", loader.DefaultScanOptions)
		if len(seg.Batches) == 0 {
			return
		}
		l := txnindex.Build(&txnindex.Partition{Topic: "t", Segments: []txnindex.Segment{seg.Segment()}, Batches: seg.Batches,
			LogStartOffset: -1, HighWatermark: -1})
		pages := func(ctx context.Context, b *txnindex.Batch, req RecordPageRequest) (RecordPage, error) {
			return segmentRecords{seg}.RecordPage(ctx, "", l, b, req)
		}
		o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: txnindex.DefaultMaxBytes}
		var records, decisions int64
		first, last := int64(-1), int64(-1)
		for d := range l.Decisions(o) {
			if d.Batch != nil {
				records += int64(d.Batch.Records)
			}
			if first < 0 {
				first = d.From
			}
			decisions++
			last = d.To
		}
		w := &boundedWriter{max: int(2*records + 2*decisions + 1)}
		if err := WriteOffsetsNDJSON(context.Background(), w, l, l.Decisions(o), pages); err != nil {
			if errors.Is(err, errTooManyLines) {
				t.Fatalf("%d records, %d decisions: more than %d lines", records, decisions, w.max)
			}
			return // damaged records: an error naming the batch
		}
		next := first
		for _, m := range readLines(t, w.buf.Bytes()) {
			lo, hi := m.From, m.To
			if m.Offset != nil {
				lo, hi = *m.Offset, *m.Offset
			}
			if lo != next || hi < lo {
				t.Fatalf("line %s after offset %d", m.short(), next-1)
			}
			next = hi + 1
		}
		if next != last+1 {
			t.Fatalf("lines end at %d, decisions at %d", next-1, last)
		}
	})
}
