package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/txnscope/txnscope/txnindex"
)

// gappy is small with offsets missing between batches (a compacted log),
// a batch of 60 records (more than an export embeds) and a batch outside
// any segment (as from a capture).
func gappy() *txnindex.Log {
	b := newBuilder("g")
	b.data(-1, 2, false)
	b.next += 3
	b.data(7, 60, true)
	b.data(8, 2, true)
	b.marker(7, txnindex.ControlAbort)
	b.next += 10
	b.marker(8, txnindex.ControlCommit)
	b.data(-1, 1, false)
	b.p.Batches[len(b.p.Batches)-1].Segment = -1
	b.data(9, 2, true)
	return txnindex.Build(&b.p)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecisionJSONTags: the JSON appendDecisionJSON writes is, byte for
// byte, encoding/json's encoding of DecisionJSON decoded from it (every
// field known, in the tags' order, omitempty where they say): the Go type
// and the route agree.
func TestDecisionJSONTags(t *testing.T) {
	for _, l := range []*txnindex.Log{small(), gappy(), large(500)} {
		for _, iso := range []txnindex.Isolation{txnindex.ReadCommitted, txnindex.ReadUncommitted} {
			for d := range l.Decisions(txnindex.ConsumeOptions{From: 3, Isolation: iso, MaxBytes: 100}) {
				b := appendDecisionJSON(nil, l, &d)
				dec := json.NewDecoder(bytes.NewReader(b))
				dec.DisallowUnknownFields()
				var j DecisionJSON
				if err := dec.Decode(&j); err != nil {
					t.Fatalf("%s: %v", b, err)
				}
				if w := mustJSON(t, j); !bytes.Equal(b, w) {
					t.Fatalf("appendDecisionJSON\n%s\nencoding/json\n%s", b, w)
				}
			}
		}
	}
}

// TestOffsetsNDJSON: `txnscope decide --format ndjson` has one line per
// offset of each batch and one per gap, and every line holds the same
// values as the decision's DecisionJSON.
func TestOffsetsNDJSON(t *testing.T) {
	l := gappy()
	o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: txnindex.DefaultMaxBytes}
	var buf bytes.Buffer
	if err := WriteOffsetsNDJSON(context.Background(), &buf, l, l.Decisions(o), nil); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	lines, gaps := 0, 0
	for d := range l.Decisions(o) {
		var want map[string]any
		json.Unmarshal(appendDecisionJSON(nil, l, &d), &want)
		delete(want, "batch_index")
		delete(want, "transaction")
		n := d.To - d.From + 1
		if d.Batch == nil {
			n = 1
			gaps++
		}
		for k := range n {
			if !sc.Scan() {
				t.Fatalf("%d lines; missing the line of %d", lines, d.From+k)
			}
			lines++
			var got map[string]any
			if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got["topic"] != "g" || got["partition"] != 0.0 {
				t.Errorf("%s: topic or partition", sc.Bytes())
			}
			delete(got, "topic")
			delete(got, "partition")
			if d.Batch == nil {
				for k, v := range got {
					if !reflect.DeepEqual(v, want[k]) {
						t.Errorf("gap line %s: %s %v, want %v", sc.Bytes(), k, v, want[k])
					}
				}
				if len(got) != 5 {
					t.Errorf("gap line %s: want from, to, decision, cause and reason", sc.Bytes())
				}
				continue
			}
			{
				if got["offset"] != float64(d.From+k) {
					t.Errorf("%s: want offset %d", sc.Bytes(), d.From+k)
				}
				delete(got, "offset")
				delete(want, "from")
				delete(want, "to")
				if want["segment"] == nil {
					want["segment"] = "" // the line always has a segment
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("line %d\n%s\nwant the values of\n%s", lines, sc.Bytes(), appendDecisionJSON(nil, l, &d))
			}
		}
	}
	if sc.Scan() {
		t.Errorf("extra line %s", sc.Bytes())
	}
	if gaps != 2 || lines < 70 {
		t.Errorf("%d lines, %d gaps", lines, gaps)
	}
}
