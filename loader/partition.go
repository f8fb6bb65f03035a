package loader

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/txnscope/txnscope/txnindex"
)

// Partition is a loaded partition directory: the txnindex input Build
// needs, plus every file decoded on the way, for display.
type Partition struct {
	Dir string
	// DirKind is "" for a live partition, or the suffix of a directory
	// the broker set aside: "delete", "future" or "stray".
	DirKind string

	// Partition is what txnindex.Build takes. Its Segments parallel
	// Segments below, and its Batches are shared with them.
	Partition *txnindex.Partition

	Segments []*SegmentFiles

	// Snapshots are the producer-state snapshots in offset order.
	// Snapshot is the newest one that decoded cleanly (the broker falls
	// back the same way when the newest is corrupt), nil if none.
	Snapshots []*ProducerSnapshot
	Snapshot  *ProducerSnapshot

	LeaderEpochs *LeaderEpochCheckpoint // nil if absent
	Metadata     *PartitionMetadata     // nil if absent

	// Checkpoints are the log directory's checkpoint files; RecoveryPoint
	// and CleanerOffset are this partition's lines of two of them, -1 if
	// not listed. LogStartOffset and HighWatermark are in Partition.
	Checkpoints   *LogDirCheckpoints
	RecoveryPoint int64
	CleanerOffset int64

	// Ignored lists the files the broker would not load, each with why.
	Ignored []IgnoredFile

	// Damage is every problem found in any file, segments' included.
	Damage []*FormatError

	shared []txnindex.Batch // what the segments were scanned into
}

// SegmentFiles is one segment and its sibling index files.
type SegmentFiles struct {
	Log       *SegmentFile
	Index     *OffsetIndex  // nil if there is no .index
	TimeIndex *TimeIndex    // nil if there is no .timeindex
	TxnIndex  *TxnIndexFile // nil if there is no .txnindex
	Swap      bool          // the segment was read from .swap files (LogLoader completes the swap)
}

// IgnoredFile is a file of a partition directory that was not loaded.
type IgnoredFile struct {
	Name   string
	Reason string
}

// Build runs txnindex.Build on the loaded partition.
func (p *Partition) Build() *txnindex.Log { return txnindex.Build(p.Partition) }

// LogDirCheckpoints are the checkpoint files at the root of a log directory.
// A nil field means the file is absent.
type LogDirCheckpoints struct {
	Dir               string
	ReplicationOffset *OffsetCheckpoint
	RecoveryPoint     *OffsetCheckpoint
	LogStartOffset    *OffsetCheckpoint
	CleanerOffset     *OffsetCheckpoint
	Damage            []*FormatError
}

// ReadLogDirCheckpoints reads the four offset checkpoints of a log
// directory. A damaged file is recorded in Damage with the entries read
// before the damage; only an I/O error fails.
func ReadLogDirCheckpoints(dir string) (*LogDirCheckpoints, error) {
	c := &LogDirCheckpoints{Dir: dir}
	for _, f := range []struct {
		name string
		dst  **OffsetCheckpoint
	}{
		{ReplicationOffsetCheckpoint, &c.ReplicationOffset},
		{RecoveryPointOffsetCheckpoint, &c.RecoveryPoint},
		{LogStartOffsetCheckpoint, &c.LogStartOffset},
		{CleanerOffsetCheckpoint, &c.CleanerOffset},
	} {
		data, err := readFileIfExists(filepath.Join(dir, f.name))
		if err != nil {
			return nil, err
		}
		if data == nil {
			continue
		}
		cp, err := ReadOffsetCheckpoint(bytes.NewReader(data), f.name)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				return nil, err
			}
			c.Damage = append(c.Damage, fe)
		}
		*f.dst = cp
	}
	return c, nil
}

// readFileIfExists returns nil, nil for a missing file.
func readFileIfExists(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// Partition directory names (LocalLog.parseTopicPartitionName): the topic
// is everything before the last '-'; directories the broker set aside are
// "<topic>-<partition>.<unique id>-<delete|future|stray>".
var setAsideDir = regexp.MustCompile(`^(\S+)-(\S+)\.(\S+)-(delete|future|stray)$`)

// ParsePartitionDir splits a partition directory's base name into topic,
// partition and set-aside kind.
func ParsePartitionDir(name string) (topic string, partition int32, kind string, err error) {
	pstr := ""
	if m := setAsideDir.FindStringSubmatch(name); m != nil {
		topic, pstr, kind = m[1], m[2], m[4]
	} else {
		i := strings.LastIndexByte(name, '-')
		if i < 0 {
			return "", 0, "", fmt.Errorf("loader: %q is not a partition directory name (<topic>-<partition>)", name)
		}
		topic, pstr = name[:i], name[i+1:]
	}
	p, perr := strconv.ParseInt(pstr, 10, 32)
	if topic == "" || perr != nil || p < 0 {
		return "", 0, "", fmt.Errorf("loader: %q is not a partition directory name (<topic>-<partition>)", name)
	}
	return topic, int32(p), kind, nil
}

// OpenPartition loads a <topic>-<partition> directory with
// DefaultScanOptions, reading the checkpoints of its parent directory.
func OpenPartition(dir string) (*Partition, error) {
	return OpenPartitionWith(dir, DefaultScanOptions)
}

// OpenPartitionWith is OpenPartition with explicit scan options.
func OpenPartitionWith(dir string, o ScanOptions) (*Partition, error) {
	cps, err := ReadLogDirCheckpoints(filepath.Dir(filepath.Clean(dir)))
	if err != nil {
		return nil, err
	}
	p, err := openPartition(dir, cps, o)
	if err != nil {
		return nil, err
	}
	p.Damage = append(p.Damage, cps.Damage...)
	return p, nil
}

// segFiles collects a segment's file names while listing a directory.
type segFiles struct {
	base                                int64
	log, index, time, txn               string
	swapLog, swapIdx, swapTime, swapTxn string
	hasLog, hasSwap                     bool
}

func openPartition(dir string, cps *LogDirCheckpoints, o ScanOptions) (*Partition, error) {
	topic, num, kind, err := ParsePartitionDir(filepath.Base(filepath.Clean(dir)))
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &Partition{
		Dir: dir, DirKind: kind, Checkpoints: cps, RecoveryPoint: -1, CleanerOffset: -1,
		Partition: &txnindex.Partition{Topic: topic, Partition: num, LogStartOffset: -1, HighWatermark: -1},
	}
	segs := map[int64]*segFiles{}
	seg := func(base int64) *segFiles {
		s := segs[base]
		if s == nil {
			s = &segFiles{base: base}
			segs[base] = s
		}
		return s
	}
	var snapshots []string
	var swaps []string
	minCleaned := int64(math.MaxInt64)
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() {
			p.Ignored = append(p.Ignored, IgnoredFile{name, "directory"})
			continue
		}
		base, suffix, ok := splitSegmentName(name)
		switch {
		case name == LeaderEpochCheckpointFile || name == PartitionMetadataFile:
			// read below
		case ok && strings.HasSuffix(suffix, ".deleted"):
			// LogLoader deletes these at startup: a segment or index
			// already scheduled for deletion.
			p.Ignored = append(p.Ignored, IgnoredFile{name, "pending delete (.deleted)"})
		case ok && strings.HasSuffix(suffix, ".cleaned"):
			// Cleaner output that never reached .swap: deleted at
			// startup, and it invalidates later swaps (KAFKA-6264).
			p.Ignored = append(p.Ignored, IgnoredFile{name, "unfinished cleaner output (.cleaned)"})
			minCleaned = min(minCleaned, base)
		case ok && strings.HasSuffix(suffix, ".swap"):
			swaps = append(swaps, name)
		case ok && suffix == ".log":
			s := seg(base)
			s.log, s.hasLog = name, true
		case ok && suffix == ".index":
			seg(base).index = name
		case ok && suffix == ".timeindex":
			seg(base).time = name
		case ok && suffix == ".txnindex":
			seg(base).txn = name
		case ok && suffix == ".snapshot":
			snapshots = append(snapshots, name)
		default:
			p.Ignored = append(p.Ignored, IgnoredFile{name, "not a segment, index, snapshot or checkpoint file"})
		}
	}
	// LogLoader.removeTempFilesAndCollectSwapFiles: a .swap file at or
	// past the lowest .cleaned offset is deleted; the others are valid
	// and their suffix is stripped.
	for _, name := range swaps {
		base, suffix, _ := splitSegmentName(name)
		if base >= minCleaned {
			p.Ignored = append(p.Ignored, IgnoredFile{name, "swap file at or past an unfinished .cleaned file (deleted by the broker, KAFKA-6264)"})
			continue
		}
		s := seg(base)
		switch strings.TrimSuffix(suffix, ".swap") {
		case ".log":
			s.swapLog, s.hasSwap = name, true
		case ".index":
			s.swapIdx = name
		case ".timeindex":
			s.swapTime = name
		case ".txnindex":
			s.swapTxn = name
		default:
			p.Ignored = append(p.Ignored, IgnoredFile{name, "unknown .swap file"})
		}
	}

	bases := make([]int64, 0, len(segs))
	for b, s := range segs {
		if !s.hasLog && !s.hasSwap {
			// LogLoader deletes index files whose segment is gone.
			for _, n := range []string{s.index, s.time, s.txn, s.swapIdx, s.swapTime, s.swapTxn} {
				if n != "" {
					p.Ignored = append(p.Ignored, IgnoredFile{n, "orphaned index file: no .log for this base offset"})
				}
			}
			continue
		}
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })

	var loaded []*SegmentFiles
	// All segments' batches go into one slice: no per-segment growth, no
	// copy to join them. The scanner sizes it from the bytes of this and
	// the later segments (scanner.add), bounded by what they can hold.
	var shared []txnindex.Batch
	var remaining, done int64
	for _, b := range bases {
		name := segs[b].log
		if segs[b].hasSwap {
			name = segs[b].swapLog
		}
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
			remaining += st.Size()
		}
	}
	if workers := min(runtime.GOMAXPROCS(0), len(bases), maxScanWorkers); workers > 1 {
		var err error
		if loaded, err = p.loadSegmentsParallel(dir, segs, bases, o, workers); err != nil {
			return nil, err
		}
	} else {
		for _, b := range bases {
			s := segs[b]
			sf, err := p.loadSegment(dir, s, o, &shared, done, remaining)
			if err != nil {
				return nil, err
			}
			done += sf.Log.Size
			loaded = append(loaded, sf)
		}
	}
	p.shared = shared
	loaded = p.applySwaps(loaded)
	p.Segments = loaded
	p.assemble()

	if err := p.loadSnapshots(dir, snapshots); err != nil {
		return nil, err
	}
	if err := p.loadPartitionFiles(dir); err != nil {
		return nil, err
	}
	p.applyCheckpoints()
	return p, nil
}

// splitSegmentName splits "<20 digits><suffix>" where suffix starts at the
// first '.', as LogFileUtils.offsetFromFileName reads it.
func splitSegmentName(name string) (int64, string, bool) {
	if len(name) <= 20 || name[20] != '.' {
		return 0, "", false
	}
	for i := 0; i < 20; i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, "", false
		}
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return v, name[20:], true
}

func (p *Partition) damage(err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		p.Damage = append(p.Damage, fe)
		return nil
	}
	return err
}

// maxScanWorkers bounds the segments scanned at once: past a few, the scan
// is bound by memory latency and the page cache, not by cores.
const maxScanWorkers = 4

// loadSegmentsParallel loads the segments on workers goroutines, each into
// its own batch slice, and returns them in offset order with their damage
// and ignored files appended to p in that order too, exactly as the
// sequential loop would. assemble then joins the slices with one copy.
//
// Why: a header-only scan is bound by the latency of reading each batch
// header (a dependent load per batch: the next position is in this header),
// so one core walks one segment at a time, and a second core walking
// another segment nearly halves the load (scripts/bench-scan.sh, "scan"
// against "scan-1cpu" with GOMAXPROCS=1). The join's copy costs less than
// what the second core saves.
func (p *Partition) loadSegmentsParallel(dir string, segs map[int64]*segFiles, bases []int64, o ScanOptions, workers int) ([]*SegmentFiles, error) {
	type result struct {
		sf   *SegmentFiles
		part Partition // only Damage and Ignored are filled
		err  error
	}
	results := make([]result, len(bases))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &results[i]
				var own []txnindex.Batch
				size := int64(0)
				name := segs[bases[i]].log
				if segs[bases[i]].hasSwap {
					name = segs[bases[i]].swapLog
				}
				if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
					size = st.Size()
				}
				r.sf, r.err = r.part.loadSegment(dir, segs[bases[i]], o, &own, 0, size)
			}
		}()
	}
	for i := range bases {
		next <- i
	}
	close(next)
	wg.Wait()
	loaded := make([]*SegmentFiles, 0, len(bases))
	for i := range results {
		r := &results[i]
		if r.err != nil {
			return nil, r.err
		}
		p.Ignored = append(p.Ignored, r.part.Ignored...)
		p.Damage = append(p.Damage, r.part.Damage...)
		loaded = append(loaded, r.sf)
	}
	return loaded, nil
}

// loadSegment scans one segment's .log (or .log.swap) and reads its indexes.
// before and remaining are the bytes of the partition's segments before
// this one and from this one on, for sizing the shared batch slice.
func (p *Partition) loadSegment(dir string, s *segFiles, o ScanOptions, shared *[]txnindex.Batch, before, remaining int64) (*SegmentFiles, error) {
	logName, idx, tim, txn := s.log, s.index, s.time, s.txn
	out := &SegmentFiles{}
	if s.hasSwap {
		out.Swap = true
		logName, idx, tim, txn = s.swapLog, s.swapIdx, s.swapTime, s.swapTxn
		if s.hasLog {
			// Kept until applySwaps decides which segments the swap
			// replaces; the .log of the same base is always one.
			p.Ignored = append(p.Ignored, IgnoredFile{s.log, "replaced by " + s.swapLog})
		}
	}
	path := filepath.Join(dir, logName)
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	f, grown, err := scanFile(fh, st.Size(), logName, o, *shared, before, max(remaining-before-st.Size(), 0))
	*shared = grown
	fh.Close()
	if err != nil {
		return nil, err
	}
	// Segments are reopened on demand by Records: a log dir can have
	// more segments than a process may hold open.
	f.r, f.path = nil, path
	f.BaseOffset = s.base
	out.Log = f
	p.Damage = append(p.Damage, f.Damage...)

	if idx != "" {
		err := withFile(filepath.Join(dir, idx), func(fh *os.File, size int64) error {
			x, err := ReadOffsetIndex(fh, size, idx, s.base)
			out.Index = x
			return p.damage(err)
		})
		if err != nil {
			return nil, err
		}
	}
	if tim != "" {
		err := withFile(filepath.Join(dir, tim), func(fh *os.File, size int64) error {
			x, err := ReadTimeIndex(fh, size, tim, s.base)
			out.TimeIndex = x
			return p.damage(err)
		})
		if err != nil {
			return nil, err
		}
	}
	if txn != "" {
		err := withFile(filepath.Join(dir, txn), func(fh *os.File, size int64) error {
			x, err := ReadTxnIndexFile(fh, size, txn, s.base)
			out.TxnIndex = x
			return p.damage(err)
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func withFile(path string, fn func(*os.File, int64) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	return fn(fh, st.Size())
}

// nextOffset is LogSegment.readNextOffset: after the last batch, or the
// base offset of an empty segment.
func (s *SegmentFiles) nextOffset() int64 {
	if n := len(s.Log.Batches); n > 0 {
		return s.Log.Batches[n-1].NextOffset()
	}
	return s.Log.BaseOffset
}

// applySwaps completes swaps the way LogLoader does on startup: a swap
// segment replaces every other segment whose base offset lies in
// [swap base, swap next offset).
func (p *Partition) applySwaps(segs []*SegmentFiles) []*SegmentFiles {
	var swaps []*SegmentFiles
	for _, s := range segs {
		if s.Swap {
			swaps = append(swaps, s)
		}
	}
	if len(swaps) == 0 {
		return segs
	}
	out := segs[:0:0]
	for _, s := range segs {
		replaced := ""
		if !s.Swap {
			for _, w := range swaps {
				if s.Log.BaseOffset >= w.Log.BaseOffset && s.Log.BaseOffset < w.nextOffset() {
					replaced = w.Log.Name
					break
				}
			}
		}
		if replaced != "" {
			p.Ignored = append(p.Ignored, IgnoredFile{s.Log.Name, "replaced by " + replaced})
			continue
		}
		out = append(out, s)
	}
	return out
}

// assemble fills Partition.Segments and Batches from the loaded segments.
func (p *Partition) assemble() {
	total := 0
	for _, s := range p.Segments {
		total += len(s.Log.Batches)
	}
	// Segments scanned into one shared slice (in order, no swap dropped
	// one) are joined already; otherwise copy them together.
	batches := p.contiguous(total)
	if batches == nil {
		batches = makeBatches(0, total)
	} else if cap(p.shared) > total {
		// The estimate left spare capacity: keep exactly the batches.
		batches = trimBatches(p.shared[:total])
	}
	p.shared = nil
	joined := len(batches) == total && total > 0
	next := 0
	segs := make([]txnindex.Segment, len(p.Segments))
	for si, s := range p.Segments {
		lo := next
		if !joined {
			batches = append(batches, s.Log.Batches...)
		}
		hi := lo + len(s.Log.Batches)
		next = hi
		for i := lo; i < hi; i++ {
			batches[i].Segment = int32(si)
		}
		s.Log.Batches = batches[lo:hi:hi]

		ts := s.Log.Segment()
		// Kafka creates .txnindex lazily (TransactionIndex), so a
		// segment whose other index files survived but has none had no
		// aborted transaction: the broker serves no entries from it. A
		// segment with no index file at all (a bare copy of .log files)
		// says nothing, and Build rebuilds its entries from the log.
		ts.TxnIndexOnDisk = s.TxnIndex != nil || s.Index != nil || s.TimeIndex != nil
		if s.TxnIndex != nil {
			ts.TxnIndex = s.TxnIndex.Entries
		}
		if s.Index != nil && !p.hasDamageIn(s.Index.Name) {
			// A corrupt index is rebuilt by the broker
			// (CorruptIndexException on sanityCheck), so only a clean
			// one is handed on; nil makes Build rebuild it too.
			ts.OffsetIndex = s.Index.Entries
			if ts.OffsetIndex == nil {
				ts.OffsetIndex = []txnindex.IndexEntry{}
			}
		}
		segs[si] = ts
	}
	p.Partition.Segments = segs
	p.Partition.Batches = batches
}

func (p *Partition) hasDamageIn(file string) bool {
	for _, d := range p.Damage {
		if d.File == file {
			return true
		}
	}
	return false
}

// loadSnapshots decodes every .snapshot and seeds Partition.Ongoing from the
// newest clean one.
func (p *Partition) loadSnapshots(dir string, names []string) error {
	sort.Strings(names) // 20-digit names sort by offset
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		s, err := ReadProducerSnapshot(data, n)
		if err := p.damage(err); err != nil {
			return err
		}
		p.Snapshots = append(p.Snapshots, s)
		if err == nil {
			p.Snapshot = s
		}
	}
	if p.Snapshot == nil {
		return nil
	}
	first := int64(math.MaxInt64)
	if len(p.Partition.Batches) > 0 {
		first = p.Partition.Batches[0].BaseOffset
	}
	// A transaction still open in the snapshot whose first offset lies
	// before the first batch began in data retention deleted: replay
	// cannot see it open, so it is seeded. Later ones replay opens
	// itself. A snapshot older than the first batch describes state the
	// log no longer continues from (ProducerStateManager deletes
	// snapshots below the log start offset), so it seeds nothing.
	if p.Snapshot.Offset >= 0 && p.Snapshot.Offset < first && first != math.MaxInt64 {
		return nil
	}
	p.Partition.Ongoing = p.Snapshot.Ongoing(first)
	return nil
}

func (p *Partition) loadPartitionFiles(dir string) error {
	data, err := readFileIfExists(filepath.Join(dir, LeaderEpochCheckpointFile))
	if err != nil {
		return err
	}
	if data != nil {
		c, err := ReadLeaderEpochCheckpoint(bytes.NewReader(data), LeaderEpochCheckpointFile)
		if err := p.damage(err); err != nil {
			return err
		}
		p.LeaderEpochs = c
	}
	data, err = readFileIfExists(filepath.Join(dir, PartitionMetadataFile))
	if err != nil {
		return err
	}
	if data != nil {
		m, err := ReadPartitionMetadata(bytes.NewReader(data), PartitionMetadataFile)
		if err := p.damage(err); err != nil {
			return err
		}
		p.Metadata = m
	}
	return nil
}

// applyCheckpoints takes this partition's lines of the log-dir checkpoints.
func (p *Partition) applyCheckpoints() {
	c, t, n := p.Checkpoints, p.Partition.Topic, p.Partition.Partition
	if c == nil {
		return
	}
	if v, ok := c.LogStartOffset.Lookup(t, n); ok {
		p.Partition.LogStartOffset = v
	}
	if v, ok := c.ReplicationOffset.Lookup(t, n); ok {
		p.Partition.HighWatermark = v
		p.Partition.HighWatermarkSource = ReplicationOffsetCheckpoint
	}
	if v, ok := c.RecoveryPoint.Lookup(t, n); ok {
		p.RecoveryPoint = v
	}
	if v, ok := c.CleanerOffset.Lookup(t, n); ok {
		p.CleanerOffset = v
	}
}

// LogDir is a loaded log directory (a log.dirs entry).
type LogDir struct {
	Dir         string
	Checkpoints *LogDirCheckpoints
	Partitions  []*Partition // sorted by topic, then partition
	Skipped     []IgnoredFile
	Damage      []*FormatError // of the checkpoint files
}

// OpenLogDir loads every partition directory under dir with
// DefaultScanOptions.
func OpenLogDir(dir string) (*LogDir, error) {
	return OpenLogDirWith(dir, DefaultScanOptions)
}

// OpenLogDirWith is OpenLogDir with explicit scan options. Entries that are
// not partition directories (meta.properties, the checkpoints, KRaft's
// bootstrap.checkpoint...) are listed in Skipped.
func OpenLogDirWith(dir string, o ScanOptions) (*LogDir, error) {
	cps, err := ReadLogDirCheckpoints(dir)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	l := &LogDir{Dir: dir, Checkpoints: cps, Damage: cps.Damage}
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() {
			switch name {
			case ReplicationOffsetCheckpoint, RecoveryPointOffsetCheckpoint, LogStartOffsetCheckpoint, CleanerOffsetCheckpoint:
			default:
				l.Skipped = append(l.Skipped, IgnoredFile{name, "not a partition directory"})
			}
			continue
		}
		if _, _, _, err := ParsePartitionDir(name); err != nil {
			l.Skipped = append(l.Skipped, IgnoredFile{name, "directory name is not <topic>-<partition>"})
			continue
		}
		p, err := openPartition(filepath.Join(dir, name), cps, o)
		if err != nil {
			return nil, err
		}
		l.Partitions = append(l.Partitions, p)
	}
	sort.SliceStable(l.Partitions, func(i, j int) bool {
		a, b := l.Partitions[i].Partition, l.Partitions[j].Partition
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return l, nil
}

// contiguous returns the shared slice the segments were scanned into when
// their batches still lie back to back in it, in segment order (applySwaps
// may have dropped or replaced some); nil otherwise.
func (p *Partition) contiguous(total int) []txnindex.Batch {
	if total == 0 || len(p.shared) != total {
		return nil
	}
	n := 0
	for _, s := range p.Segments {
		b := s.Log.Batches
		if len(b) == 0 {
			continue
		}
		if &b[0] != &p.shared[n] {
			return nil
		}
		n += len(b)
	}
	if n != total {
		return nil
	}
	return p.shared[:total:total]
}
