package api

// The websocket's messages (docs/protocol.md): the JSON a stream sends
// besides its binary frames (meta, progress, done, error) and the commands
// a client sends. ws.go handles the connection that carries them;
// stream.go encodes the binary frames.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// Meta is the partition summary: the first message of every stream
// generation, and the summary in the partitions API.
type Meta struct {
	Type                string        `json:"type,omitempty"`
	Version             int           `json:"version"`
	Generation          uint32        `json:"generation"`
	Source              string        `json:"source"`
	Topic               string        `json:"topic"`
	Partition           int32         `json:"partition"`
	LogStartOffset      int64         `json:"log_start_offset"`
	LogEndOffset        int64         `json:"log_end_offset"`
	HighWatermark       int64         `json:"high_watermark"`
	HighWatermarkSource string        `json:"high_watermark_source,omitempty"`
	LastStableOffset    int64         `json:"last_stable_offset"`
	Lanes               []LaneJSON    `json:"lanes"`
	Segments            []SegmentJSON `json:"segments"`
	Open                []TxnRef      `json:"open_transactions"`
	Totals              Totals        `json:"totals"`
	Options             *Options      `json:"options,omitempty"`
	ChunkSize           int           `json:"chunk_size,omitempty"`
	ChunkStarts         []int64       `json:"chunk_starts,omitempty"`
	Window              *Window       `json:"window,omitempty"`
}

// LaneJSON is one producer lane of the timeline. Lane 0 is "none": batches
// without a producer id.
type LaneJSON struct {
	Lane          int    `json:"lane"`
	ProducerID    int64  `json:"producer_id"`
	FirstEpoch    int16  `json:"first_epoch"`
	LastEpoch     int16  `json:"last_epoch"`
	Transactional bool   `json:"transactional"`
	Batches       int    `json:"batches"`
	Txns          int    `json:"transactions"`
	Label         string `json:"label"`
	// Epochs is present.EpochLabel ("epochs 0–3000
	// (transactions v2: one bump per transaction)"); "" for lane 0.
	Epochs string `json:"epochs"`
	// Display, Folded and Row are present.Lane's Label, Folded and Row:
	// the name the page shows ("producer 8070…24917", "orders (producer
	// 7)"), whether the lane is drawn in the non-transactional row, and its
	// default row (present.LaneRows; -1: empty, drawn nowhere).
	Display string `json:"display"`
	Folded  bool   `json:"folded"`
	Row     int    `json:"row"`
}

// SegmentJSON is one segment.
type SegmentJSON struct {
	Name       string `json:"name"`
	BaseOffset int64  `json:"base_offset"`
	Size       int64  `json:"size"`
	TxnIndex   string `json:"txnindex"`
	Aborted    int    `json:"aborted_entries"`
}

// Totals counts what the stream carries.
type Totals struct {
	Batches      int `json:"batches"`
	Decisions    int `json:"decisions,omitempty"`
	Transactions int `json:"transactions"`
	Open         int `json:"open_transactions"`
	Gaps         int `json:"gaps"`
	Chunks       int `json:"chunks,omitempty"`
}

// Window is a range of offsets, inclusive.
type Window struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// lanesJSON returns the timeline lanes of l (present.Lanes: "none"
// first, then one per producer in order of first appearance), as the meta
// message lists them.
func lanesJSON(l *txnindex.Log) []LaneJSON {
	lanes := present.Lanes(l)
	out := make([]LaneJSON, 0, len(lanes))
	for _, ln := range lanes {
		p := ln.Producer
		if p == nil {
			out = append(out, LaneJSON{Lane: ln.Index, ProducerID: -1, FirstEpoch: -1, LastEpoch: -1, Batches: ln.Batches, Label: "no producer id",
				Display: ln.Label, Folded: ln.Folded, Row: ln.Row})
			continue
		}
		ep := present.EpochLabel(p)
		out = append(out, LaneJSON{Lane: ln.Index, ProducerID: int64(p.ID), FirstEpoch: p.FirstEpoch, LastEpoch: p.LastEpoch,
			Transactional: p.Transactional, Batches: ln.Batches, Txns: p.Txns,
			Label: "producer " + strconv.FormatInt(int64(p.ID), 10) + " " + ep, Epochs: ep,
			Display: ln.Label, Folded: ln.Folded, Row: ln.Row})
	}
	return out
}

func summary(id string, l *txnindex.Log) Meta {
	m := Meta{Version: Version, Source: id, Topic: l.Topic, Partition: l.Partition,
		LogStartOffset: l.LogStartOffset, LogEndOffset: l.LogEndOffset, HighWatermark: l.HighWatermark,
		HighWatermarkSource: l.HighWatermarkSource, LastStableOffset: l.LastStableOffset, Lanes: lanesJSON(l),
		Open: []TxnRef{}, Totals: Totals{Batches: len(l.Batches), Transactions: len(l.Txns), Open: len(l.Open), Gaps: len(l.Gaps)}}
	for i := range l.Segments {
		s := &l.Segments[i]
		m.Segments = append(m.Segments, SegmentJSON{Name: s.Name, BaseOffset: s.BaseOffset, Size: s.Size,
			TxnIndex: s.TxnIndexName(), Aborted: len(l.AbortedEntries(i))})
	}
	for _, i := range l.Open {
		m.Open = append(m.Open, *txnRef(&l.Txns[i]))
	}
	return m
}

// clientMsg is any message a client sends.
type clientMsg struct {
	Type      string `json:"type"`
	From      *int64 `json:"from"`
	To        *int64 `json:"to"`
	Isolation string `json:"isolation"`
	Position  *int64 `json:"position"`
	MaxBytes  int32  `json:"max_bytes"`
	Variant   string `json:"variant"`
}

// clientCmd is one decoded, validated client message: exactly one of
// viewport and opts is set.
type clientCmd struct {
	viewport *Window
	opts     *txnindex.ConsumeOptions
}

// decodeClientMsg parses and validates one client message. Any input gives
// a command or an error the client can act on (with the byte position of a
// JSON error), never a panic; it keeps nothing of b.
func decodeClientMsg(b []byte) (clientCmd, error) {
	var m clientMsg
	if err := json.Unmarshal(b, &m); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return clientCmd{}, fmt.Errorf("bad message at byte %d: %v", se.Offset, err)
		case errors.As(err, &te):
			return clientCmd{}, fmt.Errorf("bad message at byte %d: field %q wants a %v, not a JSON %s", te.Offset, te.Field, te.Type, te.Value)
		}
		return clientCmd{}, fmt.Errorf("bad message: %v", err)
	}
	switch m.Type {
	case "viewport":
		if m.From == nil || m.To == nil || *m.To < *m.From {
			return clientCmd{}, errors.New("viewport needs from <= to")
		}
		return clientCmd{viewport: &Window{From: *m.From, To: *m.To}}, nil
	case "options":
		o := Options{Isolation: m.Isolation, Position: -1, MaxBytes: m.MaxBytes, Variant: m.Variant}
		if m.Position != nil {
			o.Position = *m.Position
		}
		co, err := o.consume()
		if err != nil {
			var he *httpError
			if errors.As(err, &he) {
				return clientCmd{}, errors.New(he.Msg)
			}
			return clientCmd{}, err
		}
		return clientCmd{opts: &co}, nil
	}
	return clientCmd{}, errors.New("unknown message type " + strconv.Quote(m.Type))
}

// progressMsg follows each decision chunk: phase is "window" while the
// chunks of the client's viewport go out, then "rest".
func progressMsg(gen uint32, phase string, sent, total, chunk int) map[string]any {
	return map[string]any{"type": "progress", "generation": gen, "phase": phase,
		"chunks_sent": sent, "chunks_total": total, "chunk": chunk}
}

// doneMsg ends a generation once every chunk and transaction frame is out.
func doneMsg(gen uint32, decisions, chunks int, elapsed time.Duration) map[string]any {
	return map[string]any{"type": "done", "generation": gen, "decisions": decisions,
		"chunks": chunks, "elapsed_ms": elapsed.Milliseconds()}
}

// loadedMsg follows the meta of the generation that replaced a partition's
// tail with its whole log (liveChanged).
func loadedMsg(gen uint32) map[string]any {
	return map[string]any{"type": "loaded", "generation": gen}
}

// errorMsg answers a command the server could not take; the stream goes on.
func errorMsg(s string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "message": s})
	return b
}
