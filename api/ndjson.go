package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/internal/jsonid"
	"github.com/txnscope/txnscope/txnindex"
)

// The JSON of a decision is written here alone, for the two formats that
// carry it:
//
//   - a decision range, one object per batch or gap: the lines of GET
//     .../decisions and the "decision" of GET .../batches/{offset}
//     (docs/protocol.md), DecisionJSON in Go;
//   - one object per offset, a gap being one object with from and to: the
//     output of `txnscope decide --format ndjson` (docs/cli.md, "decide").
//
// decisionFields is the one list of fields: each field's key and how its
// value is written, so what "control" or "producer_id" look like is
// decided once. A format is an order of those keys (rangeFields,
// offsetFields, gapFields), fixed by the documented formats, with
// encoding/json's omitempty where a field is left out when empty.

// decisionValue is what the fields are written from.
type decisionValue struct {
	l      *txnindex.Log
	d      *txnindex.Decision
	topic  []byte // l.Topic as JSON, computed once per log
	reason []byte // d.Reason() as JSON, computed once per decision
}

// A fieldWriter appends the JSON value of one field; empty reports a value
// that omitempty leaves out (no batch, no transaction, an empty string).
type fieldWriter func(dst []byte, v *decisionValue) (out []byte, empty bool)

// batchField is a field of the decision's batch, null (and empty) for a gap.
func batchField(f func(dst []byte, b *txnindex.Batch) []byte) fieldWriter {
	return func(dst []byte, v *decisionValue) ([]byte, bool) {
		if v.d.Batch == nil {
			return append(dst, "null"...), true
		}
		return f(dst, v.d.Batch), false
	}
}

func intField(f func(v *decisionValue) int64) fieldWriter {
	return func(dst []byte, v *decisionValue) ([]byte, bool) {
		return strconv.AppendInt(dst, f(v), 10), false
	}
}

// nameField writes a verdict or cause name. The names are lower-case ASCII
// identifiers (txnindex), which need no JSON escaping.
func nameField(f func(d *txnindex.Decision) string) fieldWriter {
	return func(dst []byte, v *decisionValue) ([]byte, bool) {
		dst = append(dst, '"')
		return append(append(dst, f(v.d)...), '"'), false
	}
}

var decisionFields = map[string]fieldWriter{
	"topic":     func(dst []byte, v *decisionValue) ([]byte, bool) { return append(dst, v.topic...), false },
	"partition": intField(func(v *decisionValue) int64 { return int64(v.l.Partition) }),
	// offset is written per offset by appendOffsets; From stands in.
	"offset": intField(func(v *decisionValue) int64 { return v.d.From }),
	"from":   intField(func(v *decisionValue) int64 { return v.d.From }),
	"to":     intField(func(v *decisionValue) int64 { return v.d.To }),
	// records is what txnindex.Counts counts for the range: its offsets,
	// capped at the batch's recordsCount.
	"records":          intField(func(v *decisionValue) int64 { return min(v.d.Offsets(), int64(v.d.Batch.Records)) }),
	"decision":         nameField(func(d *txnindex.Decision) string { return d.Verdict.String() }),
	"cause":            nameField(func(d *txnindex.Decision) string { return d.Cause.String() }),
	"read_uncommitted": nameField(func(d *txnindex.Decision) string { return d.Uncommitted.String() }),
	"reason":           func(dst []byte, v *decisionValue) ([]byte, bool) { return append(dst, v.reason...), false },
	"batch_index":      intField(func(v *decisionValue) int64 { return int64(v.d.BatchIndex) }),
	"batch_base_offset": batchField(func(dst []byte, b *txnindex.Batch) []byte {
		return strconv.AppendInt(dst, b.BaseOffset, 10)
	}),
	"batch_last_offset": batchField(func(dst []byte, b *txnindex.Batch) []byte {
		return strconv.AppendInt(dst, b.LastOffset(), 10)
	}),
	// producer_id is followed by its string twin past 2^53 (jsonid's rule,
	// written here rather than by jsonid.Twins over each line).
	"producer_id": batchField(func(dst []byte, b *txnindex.Batch) []byte {
		return jsonid.AppendTwin(strconv.AppendInt(dst, int64(b.ProducerID), 10), "producer_id", int64(b.ProducerID))
	}),
	"producer_epoch": batchField(func(dst []byte, b *txnindex.Batch) []byte {
		return strconv.AppendInt(dst, int64(b.ProducerEpoch), 10)
	}),
	"transactional": func(dst []byte, v *decisionValue) ([]byte, bool) {
		t := v.d.Batch != nil && v.d.Batch.IsTransactional()
		return strconv.AppendBool(dst, t), !t
	},
	"control": func(dst []byte, v *decisionValue) ([]byte, bool) {
		if v.d.Batch == nil {
			return append(dst, "null"...), true
		}
		c := controlName(v.d.Batch)
		if c == nil {
			return append(dst, "null"...), true
		}
		return append(append(append(dst, '"'), *c...), '"'), false
	},
	"segment": func(dst []byte, v *decisionValue) ([]byte, bool) {
		s := ""
		if v.d.Batch != nil {
			s = segmentName(v.l, v.d.Batch)
		}
		b, _ := json.Marshal(s)
		return append(dst, b...), s == ""
	},
	"fetch_offset": intField(func(v *decisionValue) int64 { return v.d.FetchOffset }),
	"transaction": func(dst []byte, v *decisionValue) ([]byte, bool) {
		if v.d.Txn == nil {
			return append(dst, "null"...), true
		}
		b, _ := jsonid.Marshal(txnRef(v.d.Txn))
		return append(dst, b...), false
	},
}

// controlName is the control type of a control batch ("COMMIT", "ABORT",
// ...), nil for a data batch: the "control" of a decision and of a batch.
func controlName(b *txnindex.Batch) *string {
	if !b.IsControl() {
		return nil
	}
	c := b.Control().String()
	return &c
}

// segmentName is the file name of b's segment, "" when l has no such
// segment (a batch of a capture).
func segmentName(l *txnindex.Log, b *txnindex.Batch) string {
	if s := int(b.Segment); s >= 0 && s < len(l.Segments) {
		return l.Segments[s].Name
	}
	return ""
}

// field is one entry of a format: a key of decisionFields and its writer.
type field struct {
	name      string
	key       []byte // `"name":`
	omitEmpty bool
	write     fieldWriter
}

// format resolves a list of keys, each optionally followed by ",omitempty"
// as in a struct tag. The keys are constants of this file; an unknown one
// is a programming error, caught when the package is initialised.
func format(names ...string) []field {
	out := make([]field, len(names))
	for i, n := range names {
		f := field{name: n}
		if k, opt, ok := strings.Cut(n, ","); ok {
			if opt != "omitempty" {
				panic("api: decision field option " + strconv.Quote(opt))
			}
			f.name, f.omitEmpty = k, true
		}
		w, ok := decisionFields[f.name]
		if !ok {
			panic("api: no decision field " + strconv.Quote(f.name))
		}
		f.write = w
		f.key = append(strconv.AppendQuote(nil, f.name), ':')
		out[i] = f
	}
	return out
}

// The formats. rangeFields is DecisionJSON's order and omissions;
// offsetFields and gapFields are the lines of `txnscope decide`.
var (
	rangeFields = format("from", "to", "decision", "cause", "read_uncommitted", "reason", "batch_index",
		"batch_base_offset,omitempty", "batch_last_offset,omitempty", "producer_id,omitempty", "producer_epoch,omitempty",
		"transactional", "control", "segment,omitempty", "fetch_offset", "transaction,omitempty")
	offsetFields = format("topic", "partition", "offset", "batch_base_offset", "batch_last_offset", "producer_id",
		"producer_epoch", "transactional", "control", "decision", "cause", "read_uncommitted", "segment", "fetch_offset", "reason")
	gapFields = format("topic", "partition", "from", "to", "decision", "cause", "reason")
	// unknownFields are offsetFields with a range and the records in it, for
	// a batch with holes whose records cannot be read.
	unknownFields = format("topic", "partition", "from", "to", "records", "batch_base_offset", "batch_last_offset", "producer_id",
		"producer_epoch", "transactional", "control", "decision", "cause", "read_uncommitted", "segment", "fetch_offset", "reason")
)

// appendObject appends the object of v in format fs. mark names a field
// whose value's bytes are returned as dst[start:end] (-1: none).
func appendObject(dst []byte, fs []field, v *decisionValue, mark int) (out []byte, start, end int) {
	dst = append(dst, '{')
	first := true
	for i := range fs {
		f := &fs[i]
		n := len(dst)
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, f.key...)
		vs := len(dst)
		var empty bool
		dst, empty = f.write(dst, v)
		if empty && f.omitEmpty {
			dst = dst[:n]
			continue
		}
		first = false
		if i == mark {
			start, end = vs, len(dst)
		}
	}
	return append(dst, '}'), start, end
}

func newDecisionValue(l *txnindex.Log) decisionValue {
	topic, _ := json.Marshal(l.Topic)
	return decisionValue{l: l, topic: topic}
}

func (v *decisionValue) set(d *txnindex.Decision) {
	v.d = d
	v.reason, _ = json.Marshal(d.Reason())
}

// appendDecisionJSON appends the DecisionJSON object of d, a decision of l.
func appendDecisionJSON(dst []byte, l *txnindex.Log, d *txnindex.Decision) []byte {
	v := decisionValue{l: l}
	v.set(d)
	dst, _, _ = appendObject(dst, rangeFields, &v, -1)
	return dst
}

// BatchPages pages the records of a batch of the log being written (as
// PartitionRecordsPage does over a loader.Partition), or is nil when the
// source kept no record bytes (a capture, dump text).
type BatchPages func(ctx context.Context, b *txnindex.Batch, req RecordPageRequest) (RecordPage, error)

// offsetPage is how many records the encoder asks BatchPages for at a time:
// the memory of one page, and few enough pages that a 9.6M-record batch
// (a record-count bomb) is decoded a few hundred times, not once
// per record.
const offsetPage = 1 << 16

// WriteOffsetsNDJSON writes the decisions of l from seq as `txnscope decide
// --format ndjson` prints them: one object per offset that holds a record,
// in offset order; offsets without a record are one gap object with from
// and to per run (a 309-byte batch claiming 2^31
// offsets had 2^31 lines, and compaction's holes were "delivered"). A
// decision's fields are encoded once and repeated for each of its offsets.
//
// The gaps are the log's gaps between batches, a batch the cleaner emptied
// (recordsCount 0), and the offsets of a batch that hold no record: the
// cleaner drops records inside a batch and keeps its last offset
// (MemoryRecords.buildRetainedRecordsInto: overrideLastOffset, "in order
// to ensure that the last sequence number from the batch remains even
// after compaction"), so a batch whose offset range outnumbers its
// recordsCount has holes. Which
// offsets they are is read from the records' offset deltas through pages;
// without pages such a batch is one range object (from, to and "records",
// the count the header declares) with the batch's fields and verdict.
func WriteOffsetsNDJSON(ctx context.Context, w io.Writer, l *txnindex.Log, seq iter.Seq[txnindex.Decision], pages BatchPages) error {
	e := newOffsetsWriter(ctx, w, l, pages)
	for d := range seq {
		if err := e.decision(&d); err != nil {
			return err
		}
	}
	return nil
}

// WindowPages pages the records of a batch of l, one segment window's log.
type WindowPages func(ctx context.Context, l *txnindex.Log, b *txnindex.Batch, req RecordPageRequest) (RecordPage, error)

// WriteWindowsOffsetsNDJSON is WriteOffsetsNDJSON over decisions that each
// come with the log of the segment window they were decided in (a
// partition decided a segment at a time: segsum.Store.Decisions). The
// windows' decisions are a full pass's (segsum's TestWindowsEqualFullPass),
// so the lines are those of the whole log's.
func WriteWindowsOffsetsNDJSON(ctx context.Context, w io.Writer, seq iter.Seq2[*txnindex.Log, *txnindex.Decision], pages WindowPages) error {
	var e *offsetsWriter
	var cur *txnindex.Log
	for l, d := range seq {
		if e == nil {
			e = newOffsetsWriter(ctx, w, l, nil)
		}
		if l != cur {
			cur = l
			e.v.l = l
			e.pages = func(ctx context.Context, b *txnindex.Batch, req RecordPageRequest) (RecordPage, error) {
				return pages(ctx, l, b, req)
			}
		}
		if err := e.decision(d); err != nil {
			return err
		}
	}
	return nil
}

func newOffsetsWriter(ctx context.Context, w io.Writer, l *txnindex.Log, pages BatchPages) *offsetsWriter {
	e := &offsetsWriter{ctx: ctx, w: w, v: newDecisionValue(l), pages: pages, offset: -1}
	for i := range offsetFields {
		if offsetFields[i].name == "offset" {
			e.offset = i
		}
	}
	return e
}

// decision writes the lines of d.
func (e *offsetsWriter) decision(d *txnindex.Decision) error {
	if err := e.ctx.Err(); err != nil {
		return err
	}
	switch b := d.Batch; {
	case b == nil || d.Verdict == txnindex.Missing:
		return e.gap(d)
	case int64(b.Records) >= b.LastOffset()-b.BaseOffset+1 && claimHeld(b):
		// A record per offset: the header alone says where they are.
		return e.offsets(d, func(yield func(int64) bool) {
			for off := d.From; off <= d.To && yield(off); off++ {
			}
		})
	case e.pages == nil:
		return e.unknown(d)
	default:
		return e.sparse(d)
	}
}

// v2RecordsAt is where a v2 batch's records begin: LOG_OVERHEAD (12) and
// the 49 bytes of DefaultRecordBatch's header after it.
const v2RecordsAt = 61

// claimHeld reports whether b's bytes can hold the records its header
// claims, so that a line per offset may be written on the header's word:
// 7 bytes a record uncompressed (DefaultRecord's smallest: length,
// attributes, two deltas, null key and value, no header), a byte a record
// compressed. A 4 KB zstd batch claiming 2^31-1 records would otherwise be
// 2^31 lines (64 GB); one that fails is read (sparse), and a compressed
// batch of records so alike that they take less than a byte each is still
// written right, only slower. A legacy (magic 0 or 1) entry is one record.
func claimHeld(b *txnindex.Batch) bool {
	if b.Magic() < 2 {
		return true
	}
	per := int64(7)
	if b.Compression() != txnindex.CompressionNone {
		per = 1
	}
	return int64(b.Records)*per <= int64(b.Size)-v2RecordsAt
}

// offsetsWriter writes the lines of WriteOffsetsNDJSON.
type offsetsWriter struct {
	ctx       context.Context
	w         io.Writer
	v         decisionValue
	pages     BatchPages
	offset    int // index of "offset" in offsetFields
	obj, line []byte
	start     int // obj[start:end] is the offset's value
	end       int
	gapObj    []byte
}

func (e *offsetsWriter) write(b []byte) error {
	_, err := e.w.Write(append(b, '\n'))
	return err
}

// gap writes d, a decision without records, as one range object.
func (e *offsetsWriter) gap(d *txnindex.Decision) error {
	e.v.set(d)
	e.gapObj, _, _ = appendObject(e.gapObj[:0], gapFields, &e.v, -1)
	return e.write(e.gapObj)
}

// offsets writes one object per offset of offs, each holding a record of
// d's batch.
func (e *offsetsWriter) offsets(d *txnindex.Decision, offs iter.Seq[int64]) error {
	e.encode(d)
	for off := range offs {
		if err := e.record(off); err != nil {
			return err
		}
	}
	return nil
}

// encode encodes d's per-offset object once, for record.
func (e *offsetsWriter) encode(d *txnindex.Decision) {
	e.v.set(d)
	e.obj, e.start, e.end = appendObject(e.obj[:0], offsetFields, &e.v, e.offset)
}

// record writes the object encode made, with offset off.
func (e *offsetsWriter) record(off int64) error {
	e.line = append(e.line[:0], e.obj[:e.start]...)
	e.line = strconv.AppendInt(e.line, off, 10)
	e.line = append(e.line, e.obj[e.end:]...)
	return e.write(e.line)
}

// unknown writes d, a part of a batch with holes whose records cannot be
// read, as one range object with the records the header declares.
func (e *offsetsWriter) unknown(d *txnindex.Decision) error {
	e.v.set(d)
	e.gapObj, _, _ = appendObject(e.gapObj[:0], unknownFields, &e.v, -1)
	return e.write(e.gapObj)
}

// sparse writes the part d of a batch with holes: one object per record
// whose offset lies in [d.From, d.To], in batch order, and a gap object
// (gap_compacted) for each run of offsets between them. A record whose
// offset is not above the one before it is skipped, as the Java consumer
// skips records below its position (CompletedFetch.nextFetchedRecord: "skip any records out of range"), so
// hostile deltas cannot repeat or reorder lines.
func (e *offsetsWriter) sparse(d *txnindex.Decision) error {
	e.encode(d)
	next := d.From // the first offset not yet written
	hole := func(to int64) error {
		if to < next {
			return nil
		}
		h := txnindex.Decision{From: next, To: to, Verdict: txnindex.Missing, Cause: txnindex.CauseGapCompacted,
			Uncommitted: txnindex.Missing, BatchIndex: -1, FetchOffset: -1}
		return e.gap(&h)
	}
	var err error
	for req := (RecordPageRequest{Limit: offsetPage}); req.From >= 0 && next <= d.To; {
		var pg RecordPage
		pg, err = e.pages(e.ctx, d.Batch, req)
		if errors.Is(err, ErrNoRecords) && req.From == 0 {
			return e.unknown(d)
		}
		if err != nil {
			return err
		}
		for i := 0; i < len(pg.Records) && err == nil; i++ {
			off := pg.Records[i].Offset
			if off < next || off > d.To {
				continue
			}
			if err = hole(off - 1); err == nil {
				err = e.record(off)
				next = off + 1
			}
		}
		if err != nil {
			return err
		}
		req.From = pg.Next
	}
	return hole(d.To)
}
