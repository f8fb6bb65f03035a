package main

import (
	"fmt"
	"sort"

	"github.com/txnscope/txnscope/txnindex"
)

// demoScenario is a built-in partition. Until scenario files land (issue 8)
// the demos are written here batch by batch, laid out as a broker lays
// them out: consecutive offsets and byte positions, 78-byte markers.
type demoScenario struct {
	name, title string
	build       func(w *demoWriter)
}

func demoScenarios() []demoScenario {
	return []demoScenario{
		{"interleaved", "Commit and abort interleaved across producers", func(w *demoWriter) {
			w.data(-1, 2, false)
			w.data(7, 3, true)
			w.data(8, 2, true)
			w.data(7, 2, true)
			w.marker(8, txnindex.ControlCommit)
			w.data(-1, 1, false)
			w.marker(7, txnindex.ControlAbort)
			w.data(8, 4, true)
			w.marker(8, txnindex.ControlCommit)
		}},
		{"spanning", "A transaction spanning segments", func(w *demoWriter) {
			w.data(3, 4, true)
			w.data(-1, 2, false)
			w.roll()
			w.data(3, 4, true)
			w.roll()
			w.marker(3, txnindex.ControlAbort)
			w.data(-1, 2, false)
		}},
		{"stuck-lso", "A stuck LSO from a hanging transaction", func(w *demoWriter) {
			w.data(5, 2, true)
			w.marker(5, txnindex.ControlCommit)
			w.data(6, 3, true) // never ends
			w.data(5, 2, true)
			w.marker(5, txnindex.ControlCommit)
			w.data(-1, 3, false)
		}},
	}
}

func findDemo(name string) (demoScenario, error) {
	var names []string
	for _, d := range demoScenarios() {
		if d.name == name {
			return d, nil
		}
		names = append(names, d.name)
	}
	sort.Strings(names)
	return demoScenario{}, usagef("unknown demo %q (have %v)", name, names)
}

// partition builds the scenario's partition.
func (d demoScenario) partition() *txnindex.Partition {
	w := &demoWriter{p: txnindex.Partition{Topic: "demo-" + d.name, LogStartOffset: -1, HighWatermark: -1}, ts: 1_767_225_600_000}
	w.p.Segments = []txnindex.Segment{{Name: fmt.Sprintf("%020d.log", 0)}}
	d.build(w)
	return &w.p
}

type demoWriter struct {
	p        txnindex.Partition
	next     int64
	pos      int64
	ts       int64
	sequence map[txnindex.ProducerID]int32
}

func (w *demoWriter) add(b txnindex.Batch) {
	b.Segment = int32(len(w.p.Segments) - 1)
	b.Position = w.pos
	b.BaseTimestamp, b.MaxTimestamp = w.ts, w.ts
	w.ts += 1000
	w.pos += int64(b.Size)
	w.p.Segments[len(w.p.Segments)-1].Size = w.pos
	w.p.Batches = append(w.p.Batches, b)
	w.next = b.LastOffset + 1
}

func (w *demoWriter) data(pid txnindex.ProducerID, n int, txn bool) {
	if w.sequence == nil {
		w.sequence = map[txnindex.ProducerID]int32{}
	}
	b := txnindex.Batch{BaseOffset: w.next, LastOffset: w.next + int64(n) - 1, Magic: 2, ProducerID: pid,
		Records: int32(n), Size: int32(61 + 24*n), BaseSequence: -1, CoordinatorEpoch: -1, Control: txnindex.ControlNone}
	if pid >= 0 {
		b.BaseSequence = w.sequence[pid]
		w.sequence[pid] += int32(n)
	}
	if txn {
		b.Attributes = txnindex.AttrTransactional
	}
	w.add(b)
}

func (w *demoWriter) marker(pid txnindex.ProducerID, ct txnindex.ControlType) {
	w.add(txnindex.Batch{BaseOffset: w.next, LastOffset: w.next, Magic: 2, ProducerID: pid, Records: 1, Size: 78,
		Attributes: txnindex.AttrTransactional | txnindex.AttrControl, BaseSequence: -1, Control: ct, CoordinatorEpoch: 0})
}

func (w *demoWriter) roll() {
	w.p.Segments = append(w.p.Segments, txnindex.Segment{Name: fmt.Sprintf("%020d.log", w.next), BaseOffset: w.next})
	w.pos = 0
}
