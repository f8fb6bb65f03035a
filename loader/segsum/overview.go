package segsum

import (
	"context"

	"github.com/txnscope/txnscope/txnindex"
)

// Overview is what the timeline draws of the whole partition at "fit":
// one entry per segment, from the summaries alone, and which segments are
// scanned (in the LRU) now.
type Overview struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Bounds
	Segments []SegmentView `json:"segments"`
	// Scanned are the indexes of the segments held scanned, MemoryInUse
	// their bytes (with those of other partitions sharing the budget),
	// Budget what they may hold, half of MaxMemory (serve --max-memory).
	Scanned     []int `json:"scanned"`
	MemoryInUse int64 `json:"memory_in_use"`
	Budget      int64 `json:"budget"`
	MaxMemory   int64 `json:"max_memory"`
}

// SegmentView is one segment of the overview: its offsets and times, and
// its records by what became of their transaction, resolved over the
// whole log (a transaction that ends in a later segment counts with its
// outcome). Open records belong to transactions still open at the log end.
type SegmentView struct {
	Name             string `json:"name"`
	BaseOffset       int64  `json:"base_offset"`
	NextOffset       int64  `json:"next_offset"`
	Size             int64  `json:"size"`
	FirstTimestamp   int64  `json:"first_timestamp"`
	MaxTimestamp     int64  `json:"max_timestamp"`
	Batches          int    `json:"batches"`
	Records          int64  `json:"records"`
	Transactions     int    `json:"transactions"`
	Commits          int    `json:"commits"`
	Aborts           int    `json:"aborts"`
	AbortedEntries   int    `json:"aborted_entries"`
	NonTransactional int64  `json:"non_transactional_records"`
	Committed        int64  `json:"committed_records"`
	Aborted          int64  `json:"aborted_records"`
	Open             int64  `json:"open_records"`
	Control          int64  `json:"control_records"`
	Damage           string `json:"damage,omitempty"`
}

// Overview computes the missing summaries and draws the overview.
func (s *Store) Overview(ctx context.Context) (*Overview, error) {
	sums, b, err := s.Summaries(ctx)
	if err != nil {
		return nil, err
	}
	o := &Overview{Topic: s.topic, Partition: s.partition, Bounds: b, Segments: make([]SegmentView, len(sums)),
		Scanned: s.lru.cached(s, len(sums)), MemoryInUse: s.lru.InUse(), Budget: s.lru.Budget(), MaxMemory: s.lru.MaxMemory()}
	for k := range sums {
		x := &sums[k]
		o.Segments[k] = SegmentView{Name: x.Name, BaseOffset: x.BaseOffset, NextOffset: x.NextOffset, Size: x.Size,
			FirstTimestamp: x.FirstTimestamp, MaxTimestamp: x.MaxTimestamp, Batches: x.Batches, Records: x.Records,
			Transactions: x.Txns, Commits: x.Commits, Aborts: x.Aborts, AbortedEntries: x.AbortedCount,
			NonTransactional: x.NonTransactional, Committed: x.Committed, Aborted: x.AbortedRecords, Open: x.Undecided,
			Control: x.ControlRecords, Damage: x.Damage}
	}
	if o.Scanned == nil {
		o.Scanned = []int{}
	}
	resolve(sums, o.Segments)
	return o, nil
}

// resolve moves the records of transactions open at a segment's end to
// the outcome a later segment's marker gives them.
func resolve(sums []Summary, views []SegmentView) {
	type key struct {
		pid   txnindex.ProducerID
		first int64
	}
	type part struct {
		k       int
		records int64
	}
	pending := map[key][]part{}
	for k := range sums {
		for _, c := range sums[k].Closed {
			key := key{c.ProducerID, c.FirstOffset}
			for _, p := range pending[key] {
				v := &views[p.k]
				v.Open -= p.records
				if c.Aborted {
					v.Aborted += p.records
				} else {
					v.Committed += p.records
				}
			}
			delete(pending, key)
		}
		// Only a part with records moves a count: the transactions a
		// segment leaves open without a batch of them are not listed.
		for _, t := range sums[k].Opened {
			key := key{t.ProducerID, t.FirstOffset}
			pending[key] = append(pending[key], part{k, t.Here.Records})
		}
	}
}
