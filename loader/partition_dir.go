package loader

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The directory rules: which names are partition directories, which files
// of one make its log (LogLoader), and how a finished swap replaces the
// segments it covers.

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
	if topic == "." || topic == ".." {
		return "", 0, "", fmt.Errorf("loader: %q: %w", name, ErrDotTopic)
	}
	return topic, int32(p), kind, nil
}

// ErrDotTopic: a partition directory of topic "." or "..", which Kafka
// refuses to create (Topic.validate: "Topic name cannot be \".\" or
// \"..\""). Such a directory was not written by a broker, and the
// pages' links to it would name the current or parent directory.
var ErrDotTopic = errors.New(`topic "." or ".." (Kafka refuses these topic names)`)

// SkipReason is why a log directory's entry name is not listed as a
// partition, given ParsePartitionDir's error.
func SkipReason(err error) string {
	if errors.Is(err, ErrDotTopic) {
		return ErrDotTopic.Error()
	}
	return "directory name is not <topic>-<partition>"
}

// segFiles collects a segment's file names while listing a directory.
type segFiles struct {
	base                                int64
	log, index, time, txn               string
	swapLog, swapIdx, swapTime, swapTxn string
	hasLog, hasSwap                     bool
}

// dirListing is a partition directory's entries sorted by LogLoader's
// rules: the segments to load and the producer snapshots.
type dirListing struct {
	segs      map[int64]*segFiles
	bases     []int64 // the base offsets of segs to load, ascending
	snapshots []string

	// from is the byte position where the scan of the first of bases
	// begins (OpenPartitionTail: the .index entry at or below the first
	// offset it needs); 0 reads it whole.
	from int64

	// crc says how each segment's CRCs are checked (ServedCRCs).
	crc ServedCRCs

	// span, when set, is the read of the transactions open in the
	// producer snapshot (spanScan): in the segments below fullBase, and
	// in fullBase's before byte fullPos, only its batches are kept.
	span              *spanScan
	fullBase, fullPos int64
}

// options is o for the segment at base: its span, and how its CRCs are
// checked (l.crc).
func (l dirListing) options(base int64, o ScanOptions) ScanOptions {
	switch {
	case l.span == nil || base > l.fullBase:
	case base < l.fullBase:
		o.span, o.spanUntil = l.span, math.MaxInt64
	case l.fullPos > 0:
		o.span, o.spanUntil = l.span, l.fullPos
	}
	return l.crc.Options(o, base)
}

// numbered is options for the i-th listed segment, whose batches are
// numbered i (assemble renumbers them only when a swap moved it).
func (l dirListing) numbered(i int, o ScanOptions) ScanOptions {
	o = l.options(l.bases[i], o)
	o.segment = int32(i)
	return o
}

// startAt is where the scan of the segment at base begins.
func (l dirListing) startAt(base int64) int64 {
	if len(l.bases) > 0 && base == l.bases[0] {
		return l.from
	}
	return 0
}

// list sorts a partition directory's entries as LogLoader does at startup,
// adding every file it would not load to p.Ignored with why.
func (p *Partition) list(ents []fs.DirEntry) dirListing {
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
		if why := notRegularReason(e.Type()); why != "" {
			// ReadDir's types are Lstat's: a symlink is listed as one.
			p.Ignored = append(p.Ignored, IgnoredFile{name, why})
			continue
		}
		base, suffix, ok := splitSegmentName(name)
		switch {
		case name == LeaderEpochCheckpointFile || name == PartitionMetadataFile:
			// read below
		case !ok && offsetOverflows(name):
			p.Damage = append(p.Damage, formatErr(name, 0, "file name", "offset %s: want at most %d (the largest offset), found a larger number", name[:20], int64(math.MaxInt64)))
			p.Ignored = append(p.Ignored, IgnoredFile{name, "its offset passes the largest int64: Kafka reads a segment file's offset from its name with Long.parseLong, which refuses it"})
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
		case isKRaftSnapshotName(name):
			ks, err := kraftSnapshot(name, e)
			if err != nil {
				p.Damage = append(p.Damage, err)
				p.Ignored = append(p.Ignored, IgnoredFile{name, "not a KRaft snapshot name: " + err.Msg})
				continue
			}
			p.KRaftSnapshots = append(p.KRaftSnapshots, ks)
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
	return dirListing{segs: segs, bases: bases, snapshots: snapshots}
}

// offsetOverflows reports whether name is a segment, index or snapshot
// file's (as splitSegmentName reads one, pending delete, cleaned or swap
// included) whose 20 digits pass the largest int64.
func offsetOverflows(name string) bool {
	if len(name) <= 20 || name[20] != '.' {
		return false
	}
	for i := 0; i < 20; i++ {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	if _, err := strconv.ParseInt(name[:20], 10, 64); err == nil {
		return false
	}
	kind := name[20:]
	for _, s := range []string{".deleted", ".cleaned", ".swap"} {
		kind = strings.TrimSuffix(kind, s)
	}
	switch kind {
	case ".log", ".index", ".timeindex", ".txnindex", ".snapshot":
		return true
	}
	return false
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

// applySwaps completes swaps the way LogLoader.load does on startup: the
// valid swaps replace every other segment whose base offset lies in the
// range swapRange gives (see swapRange).
func (p *Partition) applySwaps(segs []*SegmentFiles) []*SegmentFiles {
	lo, hi := swapRangeOf(segs)
	if lo >= hi {
		return segs
	}
	out := segs[:0:0]
	for _, s := range segs {
		if !s.Swap && s.Log.BaseOffset >= lo && s.Log.BaseOffset < hi {
			p.Ignored = append(p.Ignored, IgnoredFile{s.Log.Name, "replaced by " + swapCovering(segs, s.Log.BaseOffset)})
			continue
		}
		out = append(out, s)
	}
	return out
}

// swapRangeOf is swapRange of the scanned segments' valid swaps; lo >= hi
// when there is none.
func swapRangeOf(segs []*SegmentFiles) (lo, hi int64) {
	next := map[int64]int64{}
	for _, s := range segs {
		if s.Swap {
			next[s.Log.BaseOffset] = s.nextOffset()
		}
	}
	if len(next) == 0 {
		return 0, 0
	}
	return swapRange(next)
}

// swapRange is the offsets the valid swaps replace, given each swap
// segment's next offset (by base offset): LogLoader.load deletes every
// file, not itself a .swap, whose name's offset lies in [the lowest swap
// base offset, the highest swap next offset), one range for all the swaps
// (the cleaner or a split leaves one group of them), then renames the
// swaps into place.
func swapRange(next map[int64]int64) (lo, hi int64) {
	lo, hi = math.MaxInt64, math.MinInt64
	for b, n := range next {
		lo, hi = min(lo, b), max(hi, n)
	}
	return lo, hi
}

// swapCovering names the swap segment with the highest base offset at or
// below base: the one whose cleaning replaced it.
func swapCovering(segs []*SegmentFiles, base int64) string {
	name := ""
	for _, s := range segs {
		if s.Swap && s.Log.BaseOffset <= base {
			name = s.Log.Name
		}
	}
	return name
}

// nextOffset is LogSegment.readNextOffset: after the last batch, or the
// base offset of an empty segment.
func (s *SegmentFiles) nextOffset() int64 {
	if n := len(s.Log.Batches); n > 0 {
		return s.Log.Batches[n-1].NextOffset()
	}
	return s.Log.BaseOffset
}

// SnapshotsKept splits a partition directory's .snapshot files (names) into
// those the broker keeps on startup, oldest first, and those it deletes
// before it loads producer state from the newest kept one, each with why
// (LogLoader.load, in its order):
//
//   - completing an interrupted cleaning deletes every file, not itself a
//     .swap, whose name's offset lies in the range the valid swaps replace
//     ([swapLo, swapHi), see swapRange; swapLo >= swapHi for none), the
//     snapshots there included;
//   - ProducerStateManager.removeStraySnapshots(the segments' base offsets)
//     deletes every snapshot whose offset is no segment's base offset, but
//     the newest of them when it is at or past the last segment's base (the
//     one a clean shutdown writes at the log end);
//   - ProducerStateManager.truncateAndReload(log start, log end), from
//     UnifiedLog.rebuildProducerState, deletes those past the log end
//     offset and those at or below the log start offset (the larger of the
//     log-start-offset checkpoint and the first segment's base).
//
// One exception: a segment's snapshot at or below the log start is kept.
// The running broker deletes a snapshot only with its segment
// (UnifiedLog.deleteSegments → deleteProducerSnapshots): retention leaves
// the one at the new first segment, exactly at the log start, and
// DeleteRecords, which moves the log start inside a segment
// (UnifiedLog.maybeIncrementLogStartOffset) and deletes no file, leaves
// that segment's snapshot below it. truncateAndReload deletes them only
// when the broker next starts. Their presence means the broker has not
// restarted since, and the state it holds in memory, the one consumers
// meet, is the one these snapshots record (open transactions included).
// diagnosis.Diagnosis.AfterRestart says what the next restart changes.
//
// bases are the segments' base offsets after the swaps, ascending. A
// negative logStart or logEnd leaves that rule out (not known yet). Seeding
// from a snapshot the broker deletes would start the replay from a state
// the broker never loads.
func SnapshotsKept(names []string, bases []int64, swapLo, swapHi, logStart, logEnd int64) (kept []string, deleted []IgnoredFile) {
	names = append([]string(nil), names...)
	sort.Strings(names) // 20-digit names sort by offset
	isBase := make(map[int64]bool, len(bases))
	for _, b := range bases {
		isBase[b] = true
	}
	lastBase := int64(math.MinInt64)
	if len(bases) > 0 {
		lastBase = bases[len(bases)-1]
	}
	newestStray := ""
	for i := len(names) - 1; i >= 0; i-- {
		if off, _, _ := splitSegmentName(names[i]); !isBase[off] && !(off >= swapLo && off < swapHi) {
			newestStray = names[i]
			break
		}
	}
	for _, n := range names {
		off, _, ok := splitSegmentName(n)
		why := ""
		switch {
		case !ok:
			why = "not a producer snapshot name (<20-digit offset>.snapshot)"
		case off >= swapLo && off < swapHi:
			why = fmt.Sprintf("deleted by the broker on startup: its offset lies in [%d, %d), which the interrupted cleaning's .swap replaces (LogLoader.load)", swapLo, swapHi)
		case !isBase[off] && (n != newestStray || off < lastBase):
			why = fmt.Sprintf("deleted by the broker on startup: a stray snapshot, no segment begins at offset %d and it is not the newest at or past the last segment's base %d (ProducerStateManager.removeStraySnapshots)", off, lastBase)
		case logEnd >= 0 && off > logEnd:
			why = fmt.Sprintf("deleted by the broker on startup: offset %d is past the log end offset %d (ProducerStateManager.truncateAndReload)", off, logEnd)
		case logStart >= 0 && off < logStart && (len(bases) == 0 || off < bases[0]):
			why = fmt.Sprintf("deleted by the broker on startup: offset %d is below the log start offset %d (ProducerStateManager.truncateAndReload)", off, logStart)
		}
		if why != "" {
			deleted = append(deleted, IgnoredFile{n, why})
			continue
		}
		kept = append(kept, n)
	}
	return kept, deleted
}

// HasLogFile reports whether dir holds a file named *.log. It lists the
// directory rather than calling filepath.Glob, whose pattern would be the
// directory's path too: a partition directory named "x[1]-0" or "a*-0"
// (any name a file system holds) would match other names or none.
func HasLogFile(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			return true
		}
	}
	return false
}
