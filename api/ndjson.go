package api

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// The JSON of a decision is written here alone, for the two formats that
// carry it:
//
//   - a decision range, one object per batch or gap: the lines of GET
//     .../decisions and the "decision" of GET .../batches/{offset}
//     (docs/protocol.md), DecisionJSON in Go;
//   - one object per offset, a gap being one object with from and to: the
//     output of `server decide --format ndjson` (README, "decide").
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
	"offset":           intField(func(v *decisionValue) int64 { return v.d.From }),
	"from":             intField(func(v *decisionValue) int64 { return v.d.From }),
	"to":               intField(func(v *decisionValue) int64 { return v.d.To }),
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
	"producer_id": batchField(func(dst []byte, b *txnindex.Batch) []byte {
		return strconv.AppendInt(dst, int64(b.ProducerID), 10)
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
		b, _ := json.Marshal(txnRef(v.d.Txn))
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
// offsetFields and gapFields are the lines of `server decide`.
var (
	rangeFields = format("from", "to", "decision", "cause", "read_uncommitted", "reason", "batch_index",
		"batch_base_offset,omitempty", "batch_last_offset,omitempty", "producer_id,omitempty", "producer_epoch,omitempty",
		"transactional", "control", "segment,omitempty", "fetch_offset", "transaction,omitempty")
	offsetFields = format("topic", "partition", "offset", "batch_base_offset", "batch_last_offset", "producer_id",
		"producer_epoch", "transactional", "control", "decision", "cause", "read_uncommitted", "segment", "fetch_offset", "reason")
	gapFields = format("topic", "partition", "from", "to", "decision", "cause", "reason")
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

// WriteOffsetsNDJSON writes the decisions of l from seq as `server decide
// --format ndjson` prints them: one object per offset, in offset order; a
// gap is one object with from and to. A decision's fields are encoded once
// and repeated for each of its offsets.
func WriteOffsetsNDJSON(ctx context.Context, w io.Writer, l *txnindex.Log, seq iter.Seq[txnindex.Decision]) error {
	v := newDecisionValue(l)
	offset := -1
	for i := range offsetFields {
		if offsetFields[i].name == "offset" {
			offset = i
		}
	}
	var obj, line []byte
	for d := range seq {
		if err := ctx.Err(); err != nil {
			return err
		}
		v.set(&d)
		if d.Batch == nil {
			obj, _, _ = appendObject(obj[:0], gapFields, &v, -1)
			if _, err := w.Write(append(obj, '\n')); err != nil {
				return err
			}
			continue
		}
		var start, end int
		obj, start, end = appendObject(obj[:0], offsetFields, &v, offset)
		for off := d.From; off <= d.To; off++ {
			line = append(line[:0], obj[:start]...)
			line = strconv.AppendInt(line, off, 10)
			line = append(append(line, obj[end:]...), '\n')
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
	}
	return nil
}
