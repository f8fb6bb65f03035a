package inspect

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

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

// WriteText writes the report as `txnscope inspect` prints it: a summary
// line per partition, segment, snapshot, mismatch and gap, then the
// batches and records in kafka-dump-log.sh's format. Every .txnindex and
// snapshot entry is listed.
func WriteText(w io.Writer, v Report) { WriteTextEntries(w, v, -1) }

// WriteTextEntries is WriteText listing at most max .txnindex and snapshot
// entries a file (every one when max < 0) and counting the rest: a broker's
// 1 GiB segment of short transactions holds tens of thousands of aborted
// ones (30,000 in each of the 8 segments of scripts/genlog's partition:
// 230,000 lines before the first mismatch or gap).
func WriteTextEntries(w io.Writer, v Report, max int) {
	moreOf := func(listed, all int, one, many string) bool {
		if max < 0 || listed < max {
			return false
		}
		word := many
		if all-listed == 1 {
			word = one
		}
		fmt.Fprintf(w, "    … and %s more %s (--entries -1 lists them)\n", txnindex.Count(int64(all-listed)), word)
		return true
	}
	more := func(listed, all int) bool { return moreOf(listed, all, "entry", "entries") }
	fmt.Fprintf(w, "%s\n", v.Kind)
	if v.CleanShutdown {
		fmt.Fprintf(w, "clean shutdown marker %s: the broker shut down cleanly, and its next start recovers no segment (diagnose then keeps a batch whose CRC fails, as the broker serves it, and says so)\n", loader.CleanShutdownFile)
	}
	for _, f := range v.Files {
		// As kafka-dump-log.sh --files prints it, the lines indented.
		where := "of the segment from offset"
		if f.Kind == "producer snapshot" {
			where = "at offset"
		}
		fmt.Fprintf(w, "\nDumping %s (%s %s %d, %s)\n", f.Path, f.Kind, where, f.BaseOffset, txnindex.Plural(f.Bytes, "byte", "bytes"))
		switch {
		case len(f.Entries) == 0 && f.Bytes == 0:
			fmt.Fprintf(w, "  %s is empty.\n", f.Path)
		case len(f.Entries) == 0:
			fmt.Fprintf(w, "  %s holds no entry that could be read (the problem below says why).\n", f.Path)
		}
		for i, e := range f.Entries {
			if more(i, len(f.Entries)) {
				break
			}
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	for _, p := range v.Partitions {
		if name, dir := txnindex.PartitionName(p.Topic, p.Partition), txnindex.TextWord(p.Dir); dir == name {
			fmt.Fprintf(w, "\n%s\n", name) // a demo's, or a directory named from where it lies
		} else {
			fmt.Fprintf(w, "\n%s %s\n", name, dir)
		}
		fmt.Fprintf(w, "  log start %d, log end %d, high watermark %d (%s), LSO %d, %s (%s open), %s\n",
			p.LogStartOffset, p.LogEndOffset, p.HighWatermark, p.HighWatermarkSource, p.LastStableOffset,
			txnindex.Plural(p.Transactions, "transaction", "transactions"), txnindex.Count(int64(p.Open)), txnindex.Plural(len(p.Producers), "producer", "producers"))
		if p.TopicID != "" {
			fmt.Fprintf(w, "  topic id %s\n", p.TopicID)
		}
		if p.Note != "" {
			fmt.Fprintf(w, "  %s\n", p.Note)
		}
		// What the broker would not load is said, not left out: a
		// directory or a symlink named like a segment moves the log
		// start past it.
		for i, ig := range p.Ignored {
			if moreOf(i, len(p.Ignored), "ignored file", "ignored files") {
				break
			}
			fmt.Fprintf(w, "  ignored %s\n", txnindex.OneLine(ig))
		}
		for _, s := range p.KRaftSnapshots {
			// What kafka-dump-log.sh prints first for a .checkpoint
			// (DumpLogSegments: "Snapshot end offset: …, epoch: …").
			fmt.Fprintf(w, "  checkpoint %s, %d bytes: Snapshot end offset: %d, epoch: %d\n", s.Name, s.Bytes, s.EndOffset, s.Epoch)
		}
		for _, s := range p.Segments {
			fmt.Fprintf(w, "  segment %s: base %d, %s, %s", s.Name, s.BaseOffset, txnindex.Plural(s.Bytes, "byte", "bytes"), txnindex.Plural(s.Batches, "batch", "batches"))
			if s.IndexEntries != nil {
				fmt.Fprintf(w, ", .index %s", txnindex.Plural(*s.IndexEntries, "entry", "entries"))
			}
			if s.TimeEntries != nil {
				fmt.Fprintf(w, ", .timeindex %s", txnindex.Plural(*s.TimeEntries, "entry", "entries"))
			}
			switch {
			case s.TxnIndexRejected != nil:
				fmt.Fprintf(w, ", .txnindex %s before an entry at byte %#x of version %d, which Kafka refuses: a broker fails to start with this file", txnindex.Plural(len(s.TxnIndexEntries), "entry", "entries"), s.TxnIndexRejected.Position, s.TxnIndexRejected.Version)
			case s.TxnIndexAbsent:
				fmt.Fprint(w, ", no .txnindex file (the broker creates one with the segment's first aborted transaction)")
			case s.TxnIndexOnDisk:
				fmt.Fprintf(w, ", .txnindex %s", txnindex.Plural(len(s.TxnIndexEntries), "entry", "entries"))
			default:
				fmt.Fprint(w, ", .txnindex rebuilt")
			}
			fmt.Fprintln(w)
			for i, e := range s.TxnIndexEntries {
				if more(i, len(s.TxnIndexEntries)) {
					break
				}
				fmt.Fprintf(w, "    %s\n", e)
			}
		}
		for _, s := range p.Snapshots {
			fmt.Fprintf(w, "  snapshot %s (offset %d): %s\n", s.Name, s.Offset, txnindex.Plural(len(s.Entries), "producer", "producers"))
			for i, e := range s.Entries {
				if more(i, len(s.Entries)) {
					break
				}
				fmt.Fprintf(w, "    %s\n", e)
			}
		}
		all := p.MismatchesTotal
		if all < len(p.Mismatches) {
			all = len(p.Mismatches) // a report made without the total
		}
		for i, m := range p.Mismatches {
			if moreOf(i, all, ".txnindex difference", ".txnindex differences") {
				break
			}
			fmt.Fprintf(w, "  txnindex mismatch in %s: %s disk[%s] rebuilt[%s] %s: %s\n", m.Segment, m.Kind, m.Disk, m.Rebuilt, m.Explanation, m.Note)
		}
		if n := p.MismatchesTotal - len(p.Mismatches); n > 0 && (max < 0 || len(p.Mismatches) < max) {
			fmt.Fprintf(w, "    … and %s more .txnindex differences, counted, not kept (past %s)\n", txnindex.Count(int64(n)), txnindex.Count(txnindex.MaxMismatches))
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
			fmt.Fprintln(w, DumpBatch(b))
			for _, r := range b.Records {
				fmt.Fprintf(w, "| %s\n", r)
			}
		}
	}
	for _, f := range v.Fetches {
		fmt.Fprintf(w, "fetch %s %s corr %d v%d %s %s offset %d: HWM %d LSO %d aborted %s, %s, %s\n",
			f.Time, f.Connection, f.Correlation, f.Version, f.Isolation, txnindex.PartitionName(f.Topic, f.Partition), f.FetchOffset, f.HighWatermark, f.LastStableOffset, f.Aborted,
			txnindex.Plural(f.Batches, "batch", "batches"), txnindex.Plural(f.Bytes, "byte", "bytes"))
	}
	for _, p := range v.Problems {
		fmt.Fprintf(w, "problem: %s\n", txnindex.OneLine(p))
	}
}

// DumpSnapshotEntry renders a producer-state snapshot entry as
// kafka-dump-log.sh (DumpLogSegments.dumpProducerIdSnapshot) prints it:
// since Kafka 3.5 ProducerStateEntry holds currentTxnFirstOffset as an
// OptionalLong, and readSnapshot keeps the entry's batch metadata only when
// its lastOffset is >= 0, printing firstSequence (BatchMetadata.firstSeq:
// lastSequence less offsetDelta, wrapping as DefaultRecordBatch's
// decrementSequence does) to timestamp; without it the line ends after
// lastTimestamp and its space, as Kafka's does.
func DumpSnapshotEntry(e loader.SnapshotEntry) string {
	s := fmt.Sprintf("producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s lastTimestamp: %d ",
		e.ProducerID, e.Epoch, e.CoordinatorEpoch, optionalLong(e.CurrentTxnFirstOffset), e.Timestamp)
	if e.LastOffset >= 0 {
		s += fmt.Sprintf("firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
			decrementSequence(e.LastSequence, e.OffsetDelta), e.LastSequence, e.LastOffset, e.OffsetDelta, e.Timestamp)
	}
	return s
}

// decrementSequence is DefaultRecordBatch.decrementSequence: sequences
// wrap from Integer.MAX_VALUE to 0.
func decrementSequence(seq, dec int32) int32 {
	if seq < dec {
		return int32(int64(math.MaxInt32) - int64(dec-seq) + 1)
	}
	return seq - dec
}

// optionalLong renders Java's OptionalLong.toString().
func optionalLong(v int64) string {
	if v < 0 {
		return "OptionalLong.empty"
	}
	return fmt.Sprintf("OptionalLong[%d]", v)
}

// DumpBatch renders a batch line in DumpLogSegments' format. The stored CRC
// is not kept by the header scan, so crc and isvalid are left out.
func DumpBatch(b Batch) string {
	if b.Magic < 2 {
		return fmt.Sprintf("offset: %d position: %d %s: %d size: %d magic: %d compresscodec: %s",
			b.LastOffset, b.Position, b.TimestampType, b.MaxTimestamp, b.Size, b.Magic, b.Codec)
	}
	return fmt.Sprintf("baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %v isControl: %v deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s",
		b.BaseOffset, b.LastOffset, b.Count, b.BaseSequence, b.LastSequence, b.ProducerID, b.ProducerEpoch, b.LeaderEpoch,
		b.Transactional, b.IsControl, optionalLong(b.DeleteHorizon), b.Position, b.TimestampType, b.MaxTimestamp, b.Size, b.Magic, b.Codec)
}

// DumpRecord renders a record line as DumpLogSegments does with
// --deep-iteration --print-data-log (without the "| " prefix).
func DumpRecord(b *txnindex.Batch, r loader.Record) string {
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
