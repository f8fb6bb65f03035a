package internaltopic

import (
	"errors"
	"fmt"
	"slices"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// maxDamage bounds the problems kept per partition; the rest are counted
// in one last entry, so a hostile file cannot grow the report without end.
const maxDamage = 64

// Stats counts what a partition's records were.
type Stats struct {
	Records       int64 `json:"records"`        // data records read
	OffsetCommits int64 `json:"offset_commits"` // OffsetCommit records, tombstones included
	Tombstones    int64 `json:"tombstones"`
	GroupMetadata int64 `json:"group_metadata"` // GroupMetadata records (skipped)
	OtherRecords  int64 `json:"other_records"`  // record types the reader does not use (newer group types, unknown key versions)
	Aborted       int64 `json:"aborted_records"`
	Damaged       int64 `json:"damaged_records"`
	// Of OtherRecords: the records of KIP-848 consumer groups (types 3 to
	// 8 and 16), KIP-932 share groups (9 to 15), KIP-1071 streams groups
	// (17 on), and of types no Kafka release writes, skipped as the
	// coordinator skips them (KIP-915).
	ConsumerGroupRecords int64 `json:"consumer_group_records"`
	ShareGroupRecords    int64 `json:"share_group_records"`
	StreamsGroupRecords  int64 `json:"streams_group_records"`
	UnknownRecords       int64 `json:"unknown_type_records"`
}

func (s *Stats) add(o Stats) {
	s.Records += o.Records
	s.OffsetCommits += o.OffsetCommits
	s.Tombstones += o.Tombstones
	s.GroupMetadata += o.GroupMetadata
	s.OtherRecords += o.OtherRecords
	s.Aborted += o.Aborted
	s.Damaged += o.Damaged
	s.ConsumerGroupRecords += o.ConsumerGroupRecords
	s.ShareGroupRecords += o.ShareGroupRecords
	s.StreamsGroupRecords += o.StreamsGroupRecords
	s.UnknownRecords += o.UnknownRecords
}

// damage collects a partition's problems, bounded.
type damage struct {
	list    []*loader.FormatError
	dropped int
	file    string
}

func (d *damage) add(e *loader.FormatError) {
	if len(d.list) < maxDamage {
		d.list = append(d.list, e)
		return
	}
	d.dropped++
	d.file = e.File
}

func (d *damage) done() []*loader.FormatError {
	if d.dropped > 0 {
		d.list = append(d.list, &loader.FormatError{File: d.file, Item: "records",
			Msg: fmt.Sprintf("%d more damaged records not listed (the first %d are)", d.dropped, maxDamage)})
		d.dropped = 0
	}
	return d.list
}

// recordErr places a record's problem at its batch, as the loader places
// every problem: the segment file and the batch's byte position.
func recordErr(seg *loader.SegmentFile, b *txnindex.Batch, off int64, err error) *loader.FormatError {
	return &loader.FormatError{File: seg.Name, Offset: b.Position(), Item: "batch",
		Msg: fmt.Sprintf("record at offset %d: %v", off, err)}
}

// records decodes a batch's records; a *loader.FormatError is damage,
// anything else (the file cannot be read) is returned.
func records(p *loader.Partition, b *txnindex.Batch, dmg *damage) ([]loader.Record, *loader.SegmentFile, error) {
	if b.Segment < 0 || int(b.Segment) >= len(p.Segments) {
		return nil, nil, fmt.Errorf("internaltopic: batch at offset %d names segment %d of %d", b.BaseOffset, b.Segment, len(p.Segments))
	}
	seg := p.Segments[b.Segment].Log
	recs, err := seg.Records(*b)
	if err != nil {
		var fe *loader.FormatError
		if errors.As(err, &fe) {
			dmg.add(fe)
			return nil, seg, nil
		}
		return nil, seg, err
	}
	return recs, seg, nil
}

// replayRecords reads the data records of l from the log start offset to
// the log end, in offset order, as a coordinator loads its topic: each is
// counted in st, decoded and replayed; one that does not decode is damage
// and is skipped. The coordinators write no transactions to the topics
// read this way, so no batch is skipped as aborted.
func replayRecords[R any](p *loader.Partition, l *txnindex.Log, st *Stats, dmg *damage,
	decode func(key, value []byte) (R, error), replay func(r R, offset int64)) error {
	for i := range l.Batches {
		b := &l.Batches[i]
		if b.Records == 0 || b.IsControl() || b.LastOffset() < l.LogStartOffset {
			continue
		}
		recs, seg, err := records(p, b, dmg)
		if err != nil {
			return err
		}
		for j := range recs {
			rec := &recs[j]
			st.Records++
			r, err := decode(rec.Key, rec.Value)
			if err != nil {
				st.Damaged++
				dmg.add(recordErr(seg, b, rec.Offset, err))
				continue
			}
			replay(r, rec.Offset)
		}
	}
	return nil
}

// checkTopic refuses a partition of another topic.
func checkTopic(p *loader.Partition, want string) error {
	if p == nil || p.Input == nil {
		return errors.New("internaltopic: no partition")
	}
	if p.Input.Topic != want {
		return fmt.Errorf("internaltopic: %s is a partition of %q, want %q", p.Dir, p.Input.Topic, want)
	}
	return nil
}

func source(p *loader.Partition) string {
	return fmt.Sprintf("%s-%d", p.Input.Topic, p.Input.Partition)
}

// covers reports whether parts (sorted, distinct) is exactly 0..n-1.
func covers(parts []int32, n int32) bool {
	if n <= 0 || int32(len(parts)) != n {
		return false
	}
	for i, p := range parts {
		if p != int32(i) {
			return false
		}
	}
	return true
}

func addPartition(parts []int32, p int32) []int32 {
	i, ok := slices.BinarySearch(parts, p)
	if ok {
		return parts
	}
	return slices.Insert(parts, i, p)
}
