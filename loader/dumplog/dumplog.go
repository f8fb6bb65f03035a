// Package dumplog reads the text that Kafka's kafka-dump-log.sh
// (DumpLogSegments) prints for .log, .txnindex and .snapshot files, with or
// without --deep-iteration and --print-data-log, and turns it into the
// partitions txnindex decides on.
//
// Each "Dumping <path>" header starts a file; files are grouped into
// partitions by their directory (<topic>-<partition>). Batch lines are
// parsed as "key: value" pairs, so the fields older and newer Kafka versions
// add or drop (deleteHorizonMs since KIP-534, upper-case codec names before
// 2.x) do not matter. A control batch's type (COMMIT or ABORT) is printed only
// on its record line, so it is known only with --deep-iteration; without it,
// markers whose offset a dumped .txnindex names as lastOffset are ABORTs,
// the rest stay ControlUnknown and are reported.
//
// The API is internal to txnscope.
package dumplog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// maxLine bounds what is read of one line of dump text; lineBuffer is
// the reader's buffer, a longer line gathered past it.
const (
	maxLine    = 1 << 20
	lineBuffer = 64 << 10
)

// lineReader reads dump text a line at a time, holding at most maxLine
// bytes of one.
type lineReader struct {
	br   *bufio.Reader
	pos  int64 // where the next line starts
	long []byte
	err  error // a read error other than the end of the text
}

// next returns the next line without its "\n" (and, as bufio.ScanLines,
// one "\r" before it), the byte where it starts and its length. A line
// longer than maxLine is returned by its first maxLine bytes, the rest read
// past without being held. ok is false at the end of the text or on a read
// error (lr.err).
func (lr *lineReader) next() (line []byte, start, length int64, ok bool) {
	start = lr.pos
	b, err := lr.br.ReadSlice('\n')
	length = int64(len(b))
	if err == bufio.ErrBufferFull {
		// Longer than the reader's buffer: gathered into long, up to
		// maxLine bytes, and counted to its end.
		lr.long = append(lr.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = lr.br.ReadSlice('\n')
			length += int64(len(b))
			part := bytes.TrimSuffix(b, []byte{'\n'})
			lr.long = append(lr.long, part[:min(len(part), max(maxLine-len(lr.long), 0))]...)
		}
		if len(b) > 0 && b[len(b)-1] == '\n' {
			lr.long = append(lr.long, '\n') // the end of the line, for the trim below
		}
		b = lr.long
	}
	lr.pos += length
	if err != nil && err != io.EOF {
		lr.err = err
		return nil, start, 0, false
	}
	if length == 0 {
		return nil, start, 0, false
	}
	if b[len(b)-1] == '\n' {
		b, length = b[:len(b)-1], length-1
		if len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
		}
	}
	return b, start, length, true
}

// LineError is a problem on one line of dump text: Line is 1-based and
// Byte is where the line starts in the text; Line 0 is the whole text.
type LineError struct {
	File string
	Line int
	Byte int64
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line <= 0 {
		return fmt.Sprintf("dumplog: %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("dumplog: %s:%d (byte %#x): %s", e.File, e.Line, e.Byte, e.Msg)
}

// Dump is everything read from one dump text.
type Dump struct {
	Partitions []*txnindex.Partition
	Snapshots  map[string][]SnapshotEntry // by dumped path
	Problems   []error                    // lines that could not be used: the first maxProblems, then one counting the rest
	Unresolved int                        // control batches whose type is unknown (no --deep-iteration)
}

// SnapshotEntry is one producer line of a dumped .snapshot.
type SnapshotEntry struct {
	ProducerID            txnindex.ProducerID
	ProducerEpoch         int16
	CoordinatorEpoch      int32
	CurrentTxnFirstOffset int64 // -1 for OptionalLong.empty
	LastTimestamp         int64
}

var segmentBase = regexp.MustCompile(`^(\d+)\.(log|txnindex|snapshot|index|timeindex)$`)

// LooksLikeDump reports whether head starts like kafka-dump-log.sh output.
func LooksLikeDump(head []byte) bool {
	return strings.HasPrefix(strings.TrimLeft(string(head), "\ufeff \r\n\t"), "Dumping ")
}

type fileState struct {
	path   string
	kind   string // log, txnindex, snapshot, other
	base   int64
	dirKey string
	part   *partState
	seg    int   // index of the file's segment in part.p.Segments
	last   int64 // last offset of the file's last batch kept, -1 before one
}

// partState is one partition being read. Segments are found by base offset
// in a map, so reading is linear in the number of segments (a
// list searched per batch made 80K segments take 36 s).
type partState struct {
	p      *txnindex.Partition
	segs   map[int64]int     // base offset -> index in p.Segments
	aborts map[[2]int64]bool // (pid, marker offset) named by a dumped .txnindex
}

// segment returns the index of the segment with base offset base, adding
// it if new.
func (ps *partState) segment(base int64) int {
	if i, ok := ps.segs[base]; ok {
		return i
	}
	ps.p.Segments = append(ps.p.Segments, txnindex.Segment{Name: fmt.Sprintf("%020d.log", base), BaseOffset: base})
	ps.segs[base] = len(ps.p.Segments) - 1
	return len(ps.p.Segments) - 1
}

// Read parses dump text; name is used in errors.
//
// A line that cannot be used is a problem, at its line and byte, and
// reading goes on: what came before is kept. A batch is refused (a problem,
// not kept) when it could not be a broker's: an offset
// negative or with no next offset in an int64, a last offset below the base
// or more than the int32 lastOffsetDelta above it, a base offset not above
// the last offset of the batch before it in the same file (a segment's
// batches ascend), more records than offsets, or a header field out of its
// type's range.
func Read(r io.Reader, name string) (*Dump, error) {
	// A buffer of lineBuffer, not maxLine: Read is called for every
	// upload and fuzz input, most of a few lines.
	lr := &lineReader{br: bufio.NewReaderSize(r, lineBuffer)}
	var pos int64 // where the current line starts
	d := &Dump{Snapshots: map[string][]SnapshotEntry{}}
	parts := map[string]*partState{}
	var order []string
	var cur *fileState
	var lastBatch *txnindex.Batch
	lineNo := 0
	var probs problems
	var skipped skippedFiles
	problem := func(msg string, a ...any) { probs.add(name, lineNo, pos, msg, a...) }
	sawHeader := false
	// A record's payload is printed raw (StringDecoder), so a payload
	// holding newlines continues on the next lines: after a record line,
	// unrecognised lines belong to it.
	inRecord := false
	for {
		raw, start, length, ok := lr.next()
		if !ok {
			break
		}
		lineNo++
		pos = start
		line := strings.TrimRight(string(raw), "\r")
		isRecord := strings.HasPrefix(line, "| ")
		known := isRecord || strings.HasPrefix(line, "Dumping ") || strings.HasPrefix(line, "baseOffset:") || strings.HasPrefix(line, "offset:") ||
			strings.HasPrefix(line, "version:") || strings.HasPrefix(line, "producerId:") || strings.HasPrefix(line, "Log starting offset:")
		if inRecord && !known {
			continue
		}
		if length > maxLine && !isRecord {
			// A record line is read by its first maxLine bytes: a
			// payload printed whole (--print-data-log) makes it as long
			// as the message, and what txnscope reads of a record, a
			// control record's type and epoch, comes first. Any other
			// line is no line kafka-dump-log.sh writes that long.
			problem("a line of %d bytes, more than the %d a dump line may hold: skipped", length, maxLine)
			inRecord, lastBatch = false, nil
			continue
		}
		inRecord = isRecord
		switch {
		case strings.HasPrefix(line, "Dumping "):
			sawHeader = true
			path := strings.TrimSpace(strings.TrimPrefix(line, "Dumping "))
			cur = &fileState{path: path, kind: "other", dirKey: filepath.Base(filepath.Dir(path)), last: -1}
			if m := segmentBase.FindStringSubmatch(filepath.Base(path)); m != nil {
				cur.kind = m[2]
				cur.base, _ = strconv.ParseInt(m[1], 10, 64)
			}
			lastBatch = nil
			if (cur.kind == "log" || cur.kind == "txnindex") && parts[cur.dirKey] == nil && len(parts) >= maxPartitions {
				// Its lines are read past, as an unknown file's.
				skipped.add(name, lineNo, pos)
				cur.kind = "other"
			}
			if cur.kind == "log" || cur.kind == "txnindex" {
				ps := parts[cur.dirKey]
				if ps == nil {
					p := &txnindex.Partition{LogStartOffset: -1, HighWatermark: -1, HighWatermarkSource: ""}
					p.Topic, p.Partition = splitDir(cur.dirKey)
					ps = &partState{p: p, segs: map[int64]int{}, aborts: map[[2]int64]bool{}}
					parts[cur.dirKey] = ps
					order = append(order, cur.dirKey)
				}
				cur.part = ps
				cur.seg = ps.segment(cur.base)
				seg := &ps.p.Segments[cur.seg]
				if cur.kind == "log" {
					seg.Name = filepath.Base(path)
				} else {
					seg.TxnIndexOnDisk = true
				}
			}
		case cur == nil:
			if strings.TrimSpace(line) != "" {
				problem("want a \"Dumping <file>\" line first, found %q", clip(line))
			}
		case strings.HasPrefix(line, "| "), strings.HasPrefix(line, "| offset:"):
			if lastBatch == nil || !lastBatch.IsControl() {
				continue
			}
			kv := pairs(line[2:])
			if t, ok := kv["endTxnMarker"]; ok && lastBatch.Control() == txnindex.ControlNone {
				switch t {
				case "COMMIT":
					lastBatch.SetControl(txnindex.ControlCommit)
				case "ABORT":
					lastBatch.SetControl(txnindex.ControlAbort)
				default:
					lastBatch.SetControl(txnindex.ControlUnknown)
				}
				if ce, err := strconv.ParseInt(kv["coordinatorEpoch"], 10, 32); err == nil {
					lastBatch.SetCoordinatorEpoch(int32(ce))
				}
			} else if _, ok := kv["controlType"]; ok && lastBatch.Control() == txnindex.ControlNone {
				lastBatch.SetControl(txnindex.ControlUnknown)
			}
		case strings.HasPrefix(line, "Log starting offset:"), strings.HasPrefix(line, "Found "),
			strings.HasPrefix(line, "Snapshot end offset"), strings.HasPrefix(line, "KRaft bootstrap"),
			strings.TrimSpace(line) == "":
			// Headers and trailers carry nothing the engine needs.
		case cur.kind == "log" && (strings.HasPrefix(line, "baseOffset:") || strings.HasPrefix(line, "offset:")):
			// A refused batch is not the control batch the next record
			// lines describe.
			lastBatch = nil
			b, err := parseBatch(line)
			if err != nil {
				problem("%v", err)
				continue
			}
			if b.BaseOffset <= cur.last {
				problem("batch at offset %d: want a base offset above %d, the last offset of the batch before it in %s (a segment's batches ascend)",
					b.BaseOffset, cur.last, filepath.Base(cur.path))
				continue
			}
			cur.last = b.LastOffset()
			p := cur.part.p
			b.Segment = int32(cur.seg)
			p.Batches = append(p.Batches, b)
			lastBatch = &p.Batches[len(p.Batches)-1]
			seg := &p.Segments[cur.seg]
			if end := b.Position() + int64(b.Size); end > seg.Size {
				seg.Size = end
			}
		case cur.kind == "txnindex" && strings.HasPrefix(line, "version:"):
			kv := pairs(line)
			e := txnindex.AbortedTxn{}
			var err error
			var v, pid int64
			// The dump prints the version byte (AbortedTxn.version()).
			if v, err = numIn(kv, "version", math.MinInt8, math.MaxInt8); err == nil {
				if pid, err = num(kv, "producerId"); err == nil {
					if e.FirstOffset, err = num(kv, "firstOffset"); err == nil {
						if e.LastOffset, err = num(kv, "lastOffset"); err == nil {
							e.LastStableOffset, err = num(kv, "lastStableOffset")
						}
					}
				}
			}
			if err != nil {
				problem("%v", err)
				continue
			}
			e.Version, e.ProducerID = int16(v)<<8, txnindex.ProducerID(pid)
			seg := &cur.part.p.Segments[cur.seg]
			seg.TxnIndex = append(seg.TxnIndex, e)
			cur.part.aborts[[2]int64{pid, e.LastOffset}] = true
		case cur.kind == "snapshot" && strings.HasPrefix(line, "producerId:"):
			kv := pairs(line)
			var s SnapshotEntry
			pid, err := num(kv, "producerId")
			if err != nil {
				problem("%v", err)
				continue
			}
			s.ProducerID = txnindex.ProducerID(pid)
			// Older dumps print fewer fields: a missing one reads 0, one
			// out of its type's range is refused.
			ep, err := optIn(kv, "producerEpoch", math.MinInt16, math.MaxInt16)
			if err != nil {
				problem("%v", err)
				continue
			}
			ce, err := optIn(kv, "coordinatorEpoch", math.MinInt32, math.MaxInt32)
			if err != nil {
				problem("%v", err)
				continue
			}
			s.ProducerEpoch, s.CoordinatorEpoch = int16(ep), int32(ce)
			s.CurrentTxnFirstOffset = optionalLong(kv["currentTxnFirstOffset"])
			s.LastTimestamp, _ = num(kv, "lastTimestamp")
			d.Snapshots[cur.path] = append(d.Snapshots[cur.path], s)
		default:
			if cur.kind == "log" || cur.kind == "txnindex" || cur.kind == "snapshot" {
				problem("unrecognised %s dump line %q", cur.kind, clip(line))
			}
		}
	}
	d.Problems = probs.done()
	if err := skipped.problem(); err != nil {
		d.Problems = append(d.Problems, err)
	}
	if lr.err != nil {
		return d, &LineError{name, lineNo + 1, lr.pos, fmt.Sprintf("reading: %v", lr.err)}
	}
	if !sawHeader {
		return d, &LineError{name, 1, 0, "not kafka-dump-log.sh output: want a first line \"Dumping <file>\""}
	}
	for _, k := range order {
		ps := parts[k]
		p := ps.p
		sort.SliceStable(p.Segments, func(i, j int) bool { return p.Segments[i].BaseOffset < p.Segments[j].BaseOffset })
		// Batches keep segment order: each goes to the segment whose
		// base offset is the greatest at or below its own (the first
		// segment if none is), found by binary search.
		sort.SliceStable(p.Batches, func(i, j int) bool { return p.Batches[i].BaseOffset < p.Batches[j].BaseOffset })
		for i := range p.Batches {
			b := &p.Batches[i]
			si := sort.Search(len(p.Segments), func(j int) bool { return p.Segments[j].BaseOffset > b.BaseOffset })
			b.Segment = int32(max(si-1, 0))
			if b.IsControl() && b.Records > 0 && b.Control() == txnindex.ControlNone {
				if ps.aborts[[2]int64{int64(b.ProducerID), b.BaseOffset}] {
					b.SetControl(txnindex.ControlAbort)
				} else {
					b.SetControl(txnindex.ControlUnknown)
					d.Unresolved++
				}
			}
		}
		d.Partitions = append(d.Partitions, p)
	}
	if d.Unresolved > 0 {
		d.Problems = append(d.Problems, &LineError{name, 0, 0, fmt.Sprintf("%d control batches have no record line: dump with --deep-iteration to tell COMMIT from ABORT", d.Unresolved)})
	}
	return d, nil
}

func splitDir(dir string) (string, int32) {
	i := strings.LastIndexByte(dir, '-')
	if i > 0 {
		if n, err := strconv.ParseInt(dir[i+1:], 10, 32); err == nil {
			return dir[:i], int32(n)
		}
	}
	return dir, 0
}

// pairs splits "k1: v1 k2: v2 ..." into a map. A value runs to the next
// token that ends in ':'; values here never contain spaces except the
// header-key list, which is not needed.
func pairs(s string) map[string]string {
	kv := map[string]string{}
	toks := strings.Fields(s)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !strings.HasSuffix(t, ":") {
			continue
		}
		k := strings.TrimSuffix(t, ":")
		if i+1 < len(toks) && !strings.HasSuffix(toks[i+1], ":") {
			if _, dup := kv[k]; !dup {
				kv[k] = toks[i+1]
			}
			i++
		}
	}
	return kv
}

// maxOffset is the largest offset a batch may reach: the log end offset,
// one past it, must be an int64 too.
const maxOffset = math.MaxInt64 - 1

// numIn is num for a field whose value must lie in [lo, hi]: the range of
// the header field's type, or of what a broker writes.
func numIn(kv map[string]string, k string, lo, hi int64) (int64, error) {
	v, err := num(kv, k)
	if err != nil {
		return 0, err
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("field %q: want %d to %d, found %d", k, lo, hi, v)
	}
	return v, nil
}

// optIn is numIn for a field that may be absent (0 then) or not a number
// (0 too, as before), but not out of range.
func optIn(kv map[string]string, k string, lo, hi int64) (int64, error) {
	v, err := num(kv, k)
	if err != nil {
		return 0, nil
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("field %q: want %d to %d, found %d", k, lo, hi, v)
	}
	return v, nil
}

func num(kv map[string]string, k string) (int64, error) {
	v, ok := kv[k]
	if !ok {
		return 0, fmt.Errorf("missing field %q", k)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("field %q: want an integer, found %q", k, clip(v))
	}
	return n, nil
}

// optionalLong parses Java's OptionalLong.toString(): "OptionalLong[5]" or
// "OptionalLong.empty" (-1).
func optionalLong(s string) int64 {
	if strings.HasPrefix(s, "OptionalLong[") && strings.HasSuffix(s, "]") {
		if n, err := strconv.ParseInt(s[len("OptionalLong["):len(s)-1], 10, 64); err == nil {
			return n
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return -1
}

var codecs = map[string]txnindex.Compression{
	"none": txnindex.CompressionNone, "gzip": txnindex.CompressionGzip, "snappy": txnindex.CompressionSnappy,
	"lz4": txnindex.CompressionLZ4, "zstd": txnindex.CompressionZstd, "producer": txnindex.CompressionNone,
}

// parseBatch reads one batch line (magic 2) or shallow entry line (magic 0/1).
func parseBatch(line string) (txnindex.Batch, error) {
	kv := pairs(line)
	b := txnindex.BatchFields{Control: txnindex.ControlNone, CoordinatorEpoch: -1, ProducerID: txnindex.NoProducerID,
		ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1, BaseTimestamp: -1, MaxTimestamp: -1}
	magic, err := num(kv, "magic")
	if err != nil {
		return txnindex.Batch{}, err
	}
	if magic < 0 || magic > 2 {
		return txnindex.Batch{}, fmt.Errorf("field \"magic\": want 0, 1 or 2, found %d", magic)
	}
	b.Magic = int8(magic)
	// A segment's positions are int32s (the .index stores them so).
	pos, err := numIn(kv, "position", 0, math.MaxInt32)
	if err != nil {
		return txnindex.Batch{}, err
	}
	size, err := numIn(kv, "size", 0, math.MaxInt32)
	if err != nil {
		return txnindex.Batch{}, err
	}
	b.Position, b.Size = pos, int32(size)
	for _, tt := range []struct {
		key string
		bit int16
	}{{"CreateTime", 0}, {"LogAppendTime", txnindex.AttrTimestampType}, {"NoTimestampType", 0}} {
		if v, ok := kv[tt.key]; ok {
			b.MaxTimestamp, _ = strconv.ParseInt(v, 10, 64)
			b.Attributes |= tt.bit
		}
	}
	if c, ok := codecs[strings.ToLower(kv["compresscodec"])]; ok {
		b.Attributes |= int16(c)
	}
	if magic < 2 {
		off, err := numIn(kv, "offset", 0, maxOffset)
		if err != nil {
			return txnindex.Batch{}, err
		}
		b.BaseOffset, b.LastOffset, b.Records = off, off, 1
		return b.Batch(), nil
	}
	if b.BaseOffset, err = numIn(kv, "baseOffset", 0, maxOffset); err != nil {
		return txnindex.Batch{}, err
	}
	// lastOffset = baseOffset + lastOffsetDelta, an int32 in the v2
	// header, computed without overflow: baseOffset <= maxOffset here.
	hi := int64(maxOffset)
	if b.BaseOffset <= maxOffset-math.MaxInt32 {
		hi = b.BaseOffset + math.MaxInt32
	}
	if b.LastOffset, err = num(kv, "lastOffset"); err != nil {
		return txnindex.Batch{}, err
	}
	if b.LastOffset < b.BaseOffset || b.LastOffset > hi {
		return txnindex.Batch{}, fmt.Errorf("field \"lastOffset\": want %d to %d (baseOffset plus the int32 lastOffsetDelta), found %d", b.BaseOffset, hi, b.LastOffset)
	}
	// Each record has its own offset delta, so a batch holds at most one
	// record per offset (fewer once compacted, none once emptied).
	offsets := min(b.LastOffset-b.BaseOffset+1, math.MaxInt32)
	count, err := num(kv, "count")
	if err != nil {
		return txnindex.Batch{}, err
	}
	if count < 0 || count > offsets {
		return txnindex.Batch{}, fmt.Errorf("field \"count\": want 0 to %d (one record per offset at most), found %d", offsets, count)
	}
	b.Records = int32(count)
	pid, err := num(kv, "producerId")
	if err != nil {
		return txnindex.Batch{}, err
	}
	b.ProducerID = txnindex.ProducerID(pid)
	seq, err := numIn(kv, "baseSequence", math.MinInt32, math.MaxInt32)
	if err != nil {
		return txnindex.Batch{}, err
	}
	b.BaseSequence = int32(seq)
	epoch, err := numIn(kv, "producerEpoch", math.MinInt16, math.MaxInt16)
	if err != nil {
		return txnindex.Batch{}, err
	}
	b.ProducerEpoch = int16(epoch)
	ple, err := numIn(kv, "partitionLeaderEpoch", math.MinInt32, math.MaxInt32)
	if err != nil {
		return txnindex.Batch{}, err
	}
	b.PartitionLeaderEpoch = int32(ple)
	if kv["isTransactional"] == "true" {
		b.Attributes |= txnindex.AttrTransactional
	}
	if kv["isControl"] == "true" {
		b.Attributes |= txnindex.AttrControl
	}
	// The dump has no base timestamp; the max stands in for it.
	b.BaseTimestamp = b.MaxTimestamp
	if h := optionalLong(kv["deleteHorizonMs"]); h >= 0 {
		b.Attributes |= txnindex.AttrDeleteHorizon
		b.BaseTimestamp = h
	}
	return b.Batch(), nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
