// Package inspect describes what an input holds, for `txnscope inspect`:
// per partition its offsets, segments with their index files, producer
// snapshots, checkpoints, .txnindex mismatches against the log and gaps,
// optionally every batch and record, and for a capture its fetches. The
// text form prints batches and records as kafka-dump-log.sh
// (DumpLogSegments) does, so that it can be diffed against the real tool's
// output and read back by package loader/dumplog.
package inspect

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

// Report is what inspect shows of an input; its JSON is `txnscope inspect
// --format json`.
type Report struct {
	Path       string      `json:"path,omitempty"`
	Kind       string      `json:"kind"`
	Partitions []Partition `json:"partitions"`
	Fetches    []Fetch     `json:"fetches,omitempty"`
	// Files is the side file of a segment inspected alone (NewFile).
	Files    []File   `json:"files,omitempty"`
	Problems []string `json:"problems"`
	// CleanShutdown: a log directory read holds the broker's clean
	// shutdown marker (loader.CleanShutdownFile).
	CleanShutdown bool `json:"clean_shutdown,omitempty"`
}

// Partition is one partition: its offsets, files, transactions and,
// when asked for, its batches.
type Partition struct {
	Topic               string     `json:"topic"`
	Partition           int32      `json:"partition"`
	Dir                 string     `json:"dir,omitempty"`
	LogStartOffset      int64      `json:"log_start_offset"`
	LogEndOffset        int64      `json:"log_end_offset"`
	HighWatermark       int64      `json:"high_watermark"`
	HighWatermarkSource string     `json:"high_watermark_source"`
	LastStableOffset    int64      `json:"last_stable_offset"`
	RecoveryPoint       *int64     `json:"recovery_point,omitempty"`
	TopicID             string     `json:"topic_id,omitempty"`
	LeaderEpochs        [][2]int64 `json:"leader_epochs,omitempty"`
	Segments            []Segment  `json:"segments"`
	Snapshots           []Snapshot `json:"snapshots,omitempty"`
	// Note says what a partition that is not a data partition is (the
	// KRaft metadata log, txnindex.MetadataLogNote); KRaftSnapshots are
	// that log's .checkpoint snapshots.
	Note           string                 `json:"note,omitempty"`
	KRaftSnapshots []loader.KRaftSnapshot `json:"kraft_snapshots,omitempty"`
	Mismatches     []Mismatch             `json:"txnindex_mismatches"`
	// MismatchesTotal counts the differences, those past
	// txnindex.MaxMismatches, which the log did not keep, too.
	MismatchesTotal int                 `json:"txnindex_mismatches_total"`
	Gaps            []Gap               `json:"gaps"`
	Transactions    int                 `json:"transactions"`
	Open            int                 `json:"open_transactions"`
	Producers       []txnindex.Producer `json:"producers"`
	Ignored         []string            `json:"ignored_files,omitempty"`
	Batches         []Batch             `json:"batches,omitempty"`
}

// Segment is one segment and the index files beside it.
type Segment struct {
	Name            string   `json:"name"`
	BaseOffset      int64    `json:"base_offset"`
	Bytes           int64    `json:"bytes"`
	ValidBytes      int64    `json:"valid_bytes,omitempty"`
	Batches         int      `json:"batches"`
	IndexEntries    *int     `json:"index_entries,omitempty"`
	TimeEntries     *int     `json:"timeindex_entries,omitempty"`
	TxnIndexEntries []string `json:"txnindex_entries,omitempty"`
	TxnIndexOnDisk  bool     `json:"txnindex_on_disk"`
	// TxnIndexAbsent: the segment has its .index but no .txnindex file,
	// which the broker creates with the segment's first aborted
	// transaction: it lists none of the segment's.
	TxnIndexAbsent bool `json:"txnindex_absent,omitempty"`
	// TxnIndexRejected: the .txnindex holds an entry whose version
	// Kafka refuses, at this byte; a broker fails to start with it
	// (txnindex.Segment.TxnIndexRejected).
	TxnIndexRejected *txnindex.RejectedEntry `json:"txnindex_rejected,omitempty"`
	Swap             bool                    `json:"from_swap,omitempty"`
}

// Snapshot is one producer-state snapshot.
type Snapshot struct {
	Name    string   `json:"name"`
	Offset  int64    `json:"offset"`
	Entries []string `json:"entries"`
}

// Mismatch is a .txnindex entry that differs from the one rebuilt from
// the log, with its explanation: the same report `diagnose` gives.
type Mismatch = txnindex.MismatchReport

// Gap is a range of offsets with no batch, and why.
type Gap struct {
	From  int64  `json:"from"`
	To    int64  `json:"to"`
	Cause string `json:"cause"`
}

// Batch is one batch header, with the fields kafka-dump-log.sh prints, and
// its records when asked for.
type Batch struct {
	BaseOffset    int64    `json:"base_offset"`
	LastOffset    int64    `json:"last_offset"`
	Count         int32    `json:"count"`
	ProducerID    int64    `json:"producer_id"`
	ProducerEpoch int16    `json:"producer_epoch"`
	BaseSequence  int32    `json:"base_sequence"`
	Transactional bool     `json:"transactional"`
	Control       string   `json:"control,omitempty"`
	Position      int64    `json:"position"`
	Size          int32    `json:"size"`
	Magic         int8     `json:"magic"`
	Codec         string   `json:"compresscodec"`
	MaxTimestamp  int64    `json:"max_timestamp"`
	Records       []string `json:"records,omitempty"`

	Segment          string `json:"segment"`
	LastSequence     int32  `json:"last_sequence"`
	LeaderEpoch      int32  `json:"partition_leader_epoch"`
	IsControl        bool   `json:"is_control"`
	TimestampType    string `json:"timestamp_type"`
	CoordinatorEpoch int32  `json:"coordinator_epoch"`
	DeleteHorizon    int64  `json:"delete_horizon_ms"` // -1 if none
}

// Fetch is one captured Fetch response for one partition.
type Fetch struct {
	Time             string `json:"time"`
	Connection       string `json:"connection"`
	Correlation      int32  `json:"correlation_id"`
	Version          int16  `json:"version"`
	Isolation        string `json:"isolation"`
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	FetchOffset      int64  `json:"fetch_offset"`
	HighWatermark    int64  `json:"high_watermark"`
	LastStableOffset int64  `json:"last_stable_offset"`
	Aborted          string `json:"aborted_transactions"`
	Batches          int    `json:"batches"`
	Bytes            int    `json:"bytes"`
}

// Options choose what New adds to the offsets and files of each partition.
type Options struct {
	Batches bool // every batch header
	Records bool // every batch's records decoded (implies Batches)
}

// New builds the report of what in holds.
func New(in *input.Contents, o Options) Report {
	withBatches, withRecords := o.Batches || o.Records, o.Records
	out := Report{Kind: in.Kind, Problems: []string{}}
	for _, p := range in.Problems {
		out.Problems = append(out.Problems, p.Error())
	}
	for _, pt := range in.Partitions {
		l := pt.Log
		ip := Partition{
			Topic: l.Topic, Partition: l.Partition, LogStartOffset: l.LogStartOffset, LogEndOffset: l.LogEndOffset,
			HighWatermark: l.HighWatermark, HighWatermarkSource: l.HighWatermarkSource, LastStableOffset: l.LastStableOffset,
			Transactions: len(l.Txns), Open: len(l.Open), Producers: l.Producers,
			Mismatches: []Mismatch{}, Gaps: []Gap{}, Segments: []Segment{}, Note: txnindex.MetadataLogNote(l.Topic),
		}
		if ip.Producers == nil {
			ip.Producers = []txnindex.Producer{}
		}
		d := in.Dir(l.Topic, l.Partition)
		if d != nil && d.Checkpoints != nil && d.Checkpoints.CleanShutdown {
			out.CleanShutdown = true
		}
		// Batches per segment in one pass over the batches: a production
		// partition has hundreds of segments and 10^8 batches.
		perSeg := make([]int, len(l.Segments))
		for bi := range l.Batches {
			if s := int(l.Batches[bi].Segment); s >= 0 && s < len(perSeg) {
				perSeg[s]++
			}
		}
		for si, s := range l.Segments {
			if d != nil && si >= len(d.Segments) {
				// A directory without a .log (a KRaft metadata log
				// holding only snapshots): the log's stand-in segment
				// is no file.
				continue
			}
			is := Segment{Name: s.Name, BaseOffset: s.BaseOffset, Bytes: s.Size, TxnIndexOnDisk: s.TxnIndexOnDisk, TxnIndexAbsent: s.TxnIndexAbsent, TxnIndexRejected: s.TxnIndexRejected}
			for _, e := range s.TxnIndex {
				is.TxnIndexEntries = append(is.TxnIndexEntries, e.String())
			}
			is.Batches = perSeg[si]
			if d != nil && si < len(d.Segments) {
				sf := d.Segments[si]
				is.ValidBytes, is.Swap = sf.Log.ValidBytes, sf.Swap
				if sf.Index != nil {
					n := len(sf.Index.Entries)
					is.IndexEntries = &n
				}
				if sf.TimeIndex != nil {
					n := len(sf.TimeIndex.Entries)
					is.TimeEntries = &n
				}
			}
			ip.Segments = append(ip.Segments, is)
		}
		if d != nil {
			ip.Dir = d.Dir
			ip.KRaftSnapshots = d.KRaftSnapshots
			if d.RecoveryPoint >= 0 {
				rp := d.RecoveryPoint
				ip.RecoveryPoint = &rp
			}
			if d.Metadata != nil {
				ip.TopicID = d.Metadata.TopicID.String()
			}
			if d.LeaderEpochs != nil {
				for _, e := range d.LeaderEpochs.Entries {
					ip.LeaderEpochs = append(ip.LeaderEpochs, [2]int64{int64(e.Epoch), e.StartOffset})
				}
			}
			for _, s := range d.Snapshots {
				is := Snapshot{Name: s.Name, Offset: s.Offset}
				for _, e := range s.Entries {
					is.Entries = append(is.Entries, DumpSnapshotEntry(e))
				}
				ip.Snapshots = append(ip.Snapshots, is)
			}
			for _, ig := range d.Ignored {
				ip.Ignored = append(ip.Ignored, ig.Name+": "+ig.Reason)
			}
		}
		ip.Mismatches = l.MismatchReports()
		ip.MismatchesTotal = len(ip.Mismatches) + l.MismatchesOmitted
		for _, g := range l.Gaps {
			ip.Gaps = append(ip.Gaps, Gap{g.From, g.To, g.Cause.String()})
		}
		if withBatches {
			for bi := range l.Batches {
				b := &l.Batches[bi]
				ib := Batch{BaseOffset: b.BaseOffset, LastOffset: b.LastOffset(), Count: b.Records, ProducerID: int64(b.ProducerID),
					ProducerEpoch: b.ProducerEpoch, BaseSequence: b.BaseSequence(), Transactional: b.IsTransactional(),
					Position: b.Position(), Size: b.Size, Magic: b.Magic(), Codec: b.Compression().String(), MaxTimestamp: b.MaxTimestamp,
					LastSequence: b.LastSequence(), LeaderEpoch: b.PartitionLeaderEpoch, IsControl: b.IsControl(),
					TimestampType: b.TimestampType().String(), CoordinatorEpoch: b.CoordinatorEpoch(), DeleteHorizon: -1}
				if b.HasDeleteHorizon() {
					ib.DeleteHorizon = b.BaseTimestamp
				}
				if s := int(b.Segment); s >= 0 && s < len(l.Segments) {
					ib.Segment = l.Segments[s].Name
				}
				if b.IsControl() {
					ib.Control = b.Control().String()
				}
				if withRecords && d != nil && int(b.Segment) < len(d.Segments) {
					recs, err := d.Segments[b.Segment].Log.Records(*b)
					if err != nil {
						ib.Records = append(ib.Records, "error: "+err.Error())
					}
					for _, r := range recs {
						ib.Records = append(ib.Records, DumpRecord(b, r))
					}
				}
				ip.Batches = append(ip.Batches, ib)
			}
		}
		out.Partitions = append(out.Partitions, ip)
	}
	if c := in.Capture; c != nil {
		for _, f := range c.Fetches {
			conn := ""
			if f.Conn != nil {
				conn = f.Conn.Client + "->" + f.Conn.Server
			}
			ab := "null"
			if f.Aborted != nil {
				var parts []string
				for _, a := range f.Aborted {
					parts = append(parts, fmt.Sprintf("(%d,%d)", a.ProducerID, a.FirstOffset))
				}
				ab = "[" + strings.Join(parts, " ") + "]"
			}
			out.Fetches = append(out.Fetches, Fetch{Time: f.Time.UTC().Format("2006-01-02T15:04:05.000000Z"), Connection: conn,
				Correlation: f.CorrelationID, Version: f.Version, Isolation: f.Isolation.String(), Topic: f.Topic, Partition: f.Partition,
				FetchOffset: f.FetchOffset, HighWatermark: f.HighWatermark, LastStableOffset: f.LastStableOffset, Aborted: ab,
				Batches: len(f.Batches), Bytes: f.RecordBytes})
		}
	}
	return out
}
