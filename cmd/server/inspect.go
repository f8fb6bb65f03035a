package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

func runInspect(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "inspect", "[flags] PATH",
		"Show what a PATH holds: segments, batches, indexes, producer snapshots, checkpoints,\n.txnindex mismatches against the log, gaps and damage; for a capture, its fetches.")
	var (
		format  = fs.String("format", "text", "text or json")
		batches = fs.Bool("batches", false, "list every batch header")
		records = fs.Bool("records", false, "decode and list every record (implies --batches)")
	)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usagef("--format must be text or json, not %q", *format)
	}
	if fs.NArg() != 1 {
		return usagef("want exactly one PATH, got %d arguments", fs.NArg())
	}
	ld, err := input.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	v := inspectView(ld, *batches || *records, *records)
	if *format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	writeInspectText(e.stdout, v)
	return ctx.Err()
}

type inspectOut struct {
	Path       string             `json:"path,omitempty"`
	Kind       string             `json:"kind"`
	Partitions []inspectPartition `json:"partitions"`
	Fetches    []inspectFetch     `json:"fetches,omitempty"`
	Problems   []string           `json:"problems"`
}

type inspectPartition struct {
	Topic               string              `json:"topic"`
	Partition           int32               `json:"partition"`
	Dir                 string              `json:"dir,omitempty"`
	LogStartOffset      int64               `json:"log_start_offset"`
	LogEndOffset        int64               `json:"log_end_offset"`
	HighWatermark       int64               `json:"high_watermark"`
	HighWatermarkSource string              `json:"high_watermark_source"`
	LastStableOffset    int64               `json:"last_stable_offset"`
	RecoveryPoint       *int64              `json:"recovery_point,omitempty"`
	TopicID             string              `json:"topic_id,omitempty"`
	LeaderEpochs        [][2]int64          `json:"leader_epochs,omitempty"`
	Segments            []inspectSegment    `json:"segments"`
	Snapshots           []inspectSnapshot   `json:"snapshots,omitempty"`
	Mismatches          []inspectMismatch   `json:"txnindex_mismatches"`
	Gaps                []inspectGap        `json:"gaps"`
	Transactions        int                 `json:"transactions"`
	Open                int                 `json:"open_transactions"`
	Producers           []txnindex.Producer `json:"producers"`
	Ignored             []string            `json:"ignored_files,omitempty"`
	Batches             []inspectBatch      `json:"batches,omitempty"`
}

type inspectSegment struct {
	Name            string   `json:"name"`
	BaseOffset      int64    `json:"base_offset"`
	Bytes           int64    `json:"bytes"`
	ValidBytes      int64    `json:"valid_bytes,omitempty"`
	Batches         int      `json:"batches"`
	IndexEntries    *int     `json:"index_entries,omitempty"`
	TimeEntries     *int     `json:"timeindex_entries,omitempty"`
	TxnIndexEntries []string `json:"txnindex_entries,omitempty"`
	TxnIndexOnDisk  bool     `json:"txnindex_on_disk"`
	Swap            bool     `json:"from_swap,omitempty"`
}

type inspectSnapshot struct {
	Name    string   `json:"name"`
	Offset  int64    `json:"offset"`
	Entries []string `json:"entries"`
}

type inspectMismatch struct {
	Segment string `json:"segment"`
	Kind    string `json:"kind"`
	Disk    string `json:"disk,omitempty"`
	Rebuilt string `json:"rebuilt,omitempty"`
	Note    string `json:"note,omitempty"`
}

type inspectGap struct {
	From  int64  `json:"from"`
	To    int64  `json:"to"`
	Cause string `json:"cause"`
}

type inspectBatch struct {
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

type inspectFetch struct {
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

func inspectView(ld *input.Contents, withBatches, withRecords bool) inspectOut {
	out := inspectOut{Kind: ld.Kind, Problems: []string{}}
	for _, p := range ld.Problems {
		out.Problems = append(out.Problems, p.Error())
	}
	for _, pt := range ld.Partitions {
		l := pt.Log
		ip := inspectPartition{
			Topic: l.Topic, Partition: l.Partition, LogStartOffset: l.LogStartOffset, LogEndOffset: l.LogEndOffset,
			HighWatermark: l.HighWatermark, HighWatermarkSource: l.HighWatermarkSource, LastStableOffset: l.LastStableOffset,
			Transactions: len(l.Txns), Open: len(l.Open), Producers: l.Producers,
			Mismatches: []inspectMismatch{}, Gaps: []inspectGap{}, Segments: []inspectSegment{},
		}
		if ip.Producers == nil {
			ip.Producers = []txnindex.Producer{}
		}
		d := ld.Dir(l.Topic, l.Partition)
		for si, s := range l.Segments {
			is := inspectSegment{Name: s.Name, BaseOffset: s.BaseOffset, Bytes: s.Size, TxnIndexOnDisk: s.TxnIndexOnDisk}
			for _, e := range s.TxnIndex {
				is.TxnIndexEntries = append(is.TxnIndexEntries, e.String())
			}
			for bi := range l.Batches {
				if int(l.Batches[bi].Segment) == si {
					is.Batches++
				}
			}
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
				is := inspectSnapshot{Name: s.Name, Offset: s.Offset}
				for _, e := range s.Entries {
					is.Entries = append(is.Entries, fmt.Sprintf("%+v", e))
				}
				ip.Snapshots = append(ip.Snapshots, is)
			}
			for _, ig := range d.Ignored {
				ip.Ignored = append(ip.Ignored, fmt.Sprintf("%+v", ig))
			}
		}
		for _, m := range l.Mismatches {
			im := inspectMismatch{Segment: l.Segments[m.Segment].TxnIndexName(), Kind: m.Kind.String(), Note: m.Note}
			if m.Kind != txnindex.MissingOnDisk {
				im.Disk = m.Disk.String()
			}
			if m.Kind != txnindex.ExtraOnDisk {
				im.Rebuilt = m.Rebuilt.String()
			}
			ip.Mismatches = append(ip.Mismatches, im)
		}
		for _, g := range l.Gaps {
			ip.Gaps = append(ip.Gaps, inspectGap{g.From, g.To, g.Cause.String()})
		}
		if withBatches {
			for bi := range l.Batches {
				b := &l.Batches[bi]
				ib := inspectBatch{BaseOffset: b.BaseOffset, LastOffset: b.LastOffset(), Count: b.Records, ProducerID: int64(b.ProducerID),
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
						ib.Records = append(ib.Records, dumpRecord(b, r))
					}
				}
				ip.Batches = append(ip.Batches, ib)
			}
		}
		out.Partitions = append(out.Partitions, ip)
	}
	if c := ld.Capture; c != nil {
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
			out.Fetches = append(out.Fetches, inspectFetch{Time: f.Time.UTC().Format("2006-01-02T15:04:05.000000Z"), Connection: conn,
				Correlation: f.CorrelationID, Version: f.Version, Isolation: f.Isolation.String(), Topic: f.Topic, Partition: f.Partition,
				FetchOffset: f.FetchOffset, HighWatermark: f.HighWatermark, LastStableOffset: f.LastStableOffset, Aborted: ab,
				Batches: len(f.Batches), Bytes: len(f.Records)})
		}
	}
	return out
}

// clip shortens a key or value for display and escapes it when it is not
// printable text, so a binary payload cannot break the line format.
func clip(b []byte) string {
	s := string(b)
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

func writeInspectText(w io.Writer, v inspectOut) {
	fmt.Fprintf(w, "%s\n", v.Kind)
	for _, p := range v.Partitions {
		fmt.Fprintf(w, "\n%s-%d %s\n", p.Topic, p.Partition, p.Dir)
		fmt.Fprintf(w, "  log start %d, log end %d, high watermark %d (%s), LSO %d, %d transactions (%d open), %d producers\n",
			p.LogStartOffset, p.LogEndOffset, p.HighWatermark, p.HighWatermarkSource, p.LastStableOffset, p.Transactions, p.Open, len(p.Producers))
		if p.TopicID != "" {
			fmt.Fprintf(w, "  topic id %s\n", p.TopicID)
		}
		for _, s := range p.Segments {
			fmt.Fprintf(w, "  segment %s: base %d, %d bytes, %d batches", s.Name, s.BaseOffset, s.Bytes, s.Batches)
			if s.IndexEntries != nil {
				fmt.Fprintf(w, ", .index %d entries", *s.IndexEntries)
			}
			if s.TimeEntries != nil {
				fmt.Fprintf(w, ", .timeindex %d entries", *s.TimeEntries)
			}
			if s.TxnIndexOnDisk {
				fmt.Fprintf(w, ", .txnindex %d entries", len(s.TxnIndexEntries))
			} else {
				fmt.Fprint(w, ", .txnindex rebuilt")
			}
			fmt.Fprintln(w)
			for _, e := range s.TxnIndexEntries {
				fmt.Fprintf(w, "    %s\n", e)
			}
		}
		for _, s := range p.Snapshots {
			fmt.Fprintf(w, "  snapshot %s (offset %d): %d producers\n", s.Name, s.Offset, len(s.Entries))
			for _, e := range s.Entries {
				fmt.Fprintf(w, "    %s\n", e)
			}
		}
		for _, m := range p.Mismatches {
			fmt.Fprintf(w, "  txnindex mismatch in %s: %s disk[%s] rebuilt[%s] %s\n", m.Segment, m.Kind, m.Disk, m.Rebuilt, m.Note)
		}
		for _, g := range p.Gaps {
			fmt.Fprintf(w, "  gap %d-%d: %s\n", g.From, g.To, g.Cause)
		}
		// Batches print as kafka-dump-log.sh (DumpLogSegments) prints them,
		// so the text can be diffed against the real tool's and read back
		// by txnscope's own dump-text loader.
		seg := ""
		for _, b := range p.Batches {
			if b.Segment != seg {
				seg = b.Segment
				fmt.Fprintf(w, "Dumping %s\n", filepath.Join(p.Dir, seg))
			}
			fmt.Fprintln(w, dumpBatch(b))
			for _, r := range b.Records {
				fmt.Fprintf(w, "| %s\n", r)
			}
		}
	}
	for _, f := range v.Fetches {
		fmt.Fprintf(w, "fetch %s %s corr %d v%d %s %s-%d offset %d: HWM %d LSO %d aborted %s, %d batches, %d bytes\n",
			f.Time, f.Connection, f.Correlation, f.Version, f.Isolation, f.Topic, f.Partition, f.FetchOffset, f.HighWatermark, f.LastStableOffset, f.Aborted, f.Batches, f.Bytes)
	}
	for _, p := range v.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
}

// optionalLong renders Java's OptionalLong.toString().
func optionalLong(v int64) string {
	if v < 0 {
		return "OptionalLong.empty"
	}
	return fmt.Sprintf("OptionalLong[%d]", v)
}

// dumpBatch renders a batch line in DumpLogSegments' format. The stored CRC
// is not kept by the header scan, so crc and isvalid are left out.
func dumpBatch(b inspectBatch) string {
	if b.Magic < 2 {
		return fmt.Sprintf("offset: %d position: %d %s: %d size: %d magic: %d compresscodec: %s",
			b.LastOffset, b.Position, b.TimestampType, b.MaxTimestamp, b.Size, b.Magic, b.Codec)
	}
	return fmt.Sprintf("baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %v isControl: %v deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s",
		b.BaseOffset, b.LastOffset, b.Count, b.BaseSequence, b.LastSequence, b.ProducerID, b.ProducerEpoch, b.LeaderEpoch,
		b.Transactional, b.IsControl, optionalLong(b.DeleteHorizon), b.Position, b.TimestampType, b.MaxTimestamp, b.Size, b.Magic, b.Codec)
}

// dumpRecord renders a record line as DumpLogSegments does with
// --deep-iteration --print-data-log (without the "| " prefix).
func dumpRecord(b *txnindex.Batch, r loader.Record) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "offset: %d %s: %d keySize: %d valueSize: %d", r.Offset, b.TimestampType(), r.Timestamp, size(r.Key), size(r.Value))
	if b.Magic() >= 2 {
		keys := make([]string, len(r.Headers))
		for i, h := range r.Headers {
			keys[i] = h.Key
		}
		fmt.Fprintf(&sb, " sequence: %d headerKeys: [%s]", r.Sequence, strings.Join(keys, ","))
	}
	if b.IsControl() {
		if r.Control == txnindex.ControlAbort || r.Control == txnindex.ControlCommit {
			fmt.Fprintf(&sb, " endTxnMarker: %s coordinatorEpoch: %d", r.Control, r.CoordinatorEpoch)
		} else {
			fmt.Fprintf(&sb, " controlType: %s(%d)", r.Control, int16(r.Control))
		}
		return sb.String()
	}
	if r.Key != nil {
		fmt.Fprintf(&sb, " key: %s", clip(r.Key))
	}
	if r.Value != nil {
		fmt.Fprintf(&sb, " payload: %s", clip(r.Value))
	}
	return sb.String()
}

func size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}
