// Package logindex is the lazy index of a log directory (a log.dirs entry)
// for `serve --load DIR`: its partitions are listed at once from the
// directory names alone, then ranked by LSO lag from tail-only scans that
// a bounded pool of workers runs in the background. A broker's log.dirs
// entry holds thousands of partitions and terabytes; listing reads no
// segment, and a tail scan reads only what the last stable offset needs
// (tail.go), so the index is usable long before every partition has been
// looked at. A partition is opened in full only when someone asks for it.
package logindex

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// MetadataTopic is KRaft's metadata log (__cluster_metadata-0): the
// controllers' record of the cluster, kept with .checkpoint snapshots and
// indexes, often without a .log worth reading. It is not a partition a
// consumer reads, so it is listed apart and never ranked.
const MetadataTopic = "__cluster_metadata"

// State is where a partition's tail scan stands.
type State int32

// States of a tail scan.
const (
	Queued  State = iota // not scanned yet
	Loading              // being scanned now
	Scanned              // Tail is set
	Failed               // Err is set
)

func (s State) String() string {
	switch s {
	case Queued:
		return "queued"
	case Loading:
		return "loading"
	case Scanned:
		return "scanned"
	}
	return "failed"
}

// Entry is one partition directory of the log directory.
type Entry struct {
	Dir       string // the directory's path
	Name      string // its base name, topic-partition
	Topic     string
	Partition int32
	Internal  bool // one of the broker's own topics (txnindex.IsInternalTopic)
	// Metadata: KRaft's metadata log (MetadataTopic), not a data
	// partition; its State is Scanned from the start, with a diagnosis
	// that says what it is (txnindex.MetadataLogNote) and nothing read.
	Metadata bool

	state atomic.Int32
	mu    sync.Mutex
	tail  *Summary
	err   error
}

// Summary is what a tail scan found: enough for a row of the index, not
// the log (2,000 partitions' tails would not fit in memory).
type Summary struct {
	// Diagnosis is the tail's diagnosis, cut down to the LSO, the high
	// watermark, the lag and the open transactions.
	Diagnosis *diagnosis.Diagnosis
	Info      TailInfo
	Batches   int // batches read
	Took      time.Duration
	Damage    []*loader.FormatError // met in the files read
}

// State returns the scan's state, its summary once Scanned and its error
// once Failed.
func (e *Entry) State() (State, *Summary, error) {
	s := State(e.state.Load())
	e.mu.Lock()
	defer e.mu.Unlock()
	return s, e.tail, e.err
}

// Index is a log directory's partitions, listed from their names.
type Index struct {
	Root        string
	Checkpoints *loader.LogDirCheckpoints
	Entries     []*Entry // topic, then partition, in natural order
	// Metadata are KRaft metadata log directories (__cluster_metadata-0),
	// listed apart: not partitions of a topic, never ranked.
	// MetadataEntries are the same as entries, for a row and a page each.
	Metadata        []string
	MetadataEntries []*Entry
	// Skipped are entries that are neither: files, set-aside directories
	// (-delete, -future, -stray), other names.
	Skipped []loader.IgnoredFile

	// JoinBytes bounds what Join reads of the internal topics;
	// DefaultJoinBytes when 0. Set it before the first Join.
	JoinBytes int64

	scanned  atomic.Int64
	joinOnce sync.Once
	join     *Join
	started  time.Time
	done     chan struct{}
	took     atomic.Int64 // nanoseconds from Start to the last scan
}

// List reads dir's entries and its checkpoint files, nothing else. It
// fails only when dir cannot be read or holds no partition directory.
func List(dir string) (*Index, error) {
	cps, err := loader.ReadLogDirCheckpoints(dir)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	// OffsetCheckpoint.Lookup builds its map on first use, unguarded:
	// build them here, before the scan pool reads them concurrently.
	for _, c := range []*loader.OffsetCheckpoint{cps.ReplicationOffset, cps.RecoveryPoint, cps.LogStartOffset, cps.CleanerOffset} {
		c.Lookup("", -1)
	}
	x := &Index{Root: dir, Checkpoints: cps, done: make(chan struct{})}
	for _, de := range ents {
		name := de.Name()
		if !de.IsDir() || de.Type()&fs.ModeSymlink != 0 {
			continue // checkpoints, meta.properties, symlinks (never followed)
		}
		topic, p, kind, err := loader.ParsePartitionDir(name)
		switch {
		case err != nil:
			x.Skipped = append(x.Skipped, loader.IgnoredFile{Name: name, Reason: loader.SkipReason(err)})
		case kind != "":
			x.Skipped = append(x.Skipped, loader.IgnoredFile{Name: name, Reason: "set aside by the broker (" + kind + ")"})
		case topic == MetadataTopic:
			x.Metadata = append(x.Metadata, name)
			x.MetadataEntries = append(x.MetadataEntries, metadataEntry(filepath.Join(dir, name), name, topic, p))
		default:
			x.Entries = append(x.Entries, &Entry{Dir: filepath.Join(dir, name), Name: name, Topic: topic, Partition: p, Internal: txnindex.IsInternalTopic(topic)})
		}
	}
	if len(x.Entries) == 0 {
		return nil, &NoPartitionsError{Dir: dir, Metadata: len(x.Metadata)}
	}
	slices.SortFunc(x.Entries, func(a, b *Entry) int {
		return cmp.Or(txnindex.NaturalCompare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return x, nil
}

// ListPartition is List for one partition directory loaded on its own
// (serve --load PARTITIONDIR over the limits): an index of that partition
// alone, with the checkpoints of the directory above it, as the loader
// reads them for a partition directory (loader.OpenPartition), so that it
// is opened lazily and drawn segment by segment as a log directory's
// partition is. It reads no segment.
func ListPartition(dir string) (*Index, error) {
	name := filepath.Base(filepath.Clean(dir))
	topic, p, kind, err := loader.ParsePartitionDir(name)
	if err != nil {
		return nil, err
	}
	if kind != "" {
		return nil, fmt.Errorf("%s: set aside by the broker (%s), not a partition to open", dir, kind)
	}
	cps, err := loader.ReadLogDirCheckpoints(filepath.Dir(filepath.Clean(dir)))
	if err != nil {
		return nil, err
	}
	for _, c := range []*loader.OffsetCheckpoint{cps.ReplicationOffset, cps.RecoveryPoint, cps.LogStartOffset, cps.CleanerOffset} {
		c.Lookup("", -1) // built before the scan reads them concurrently (List)
	}
	x := &Index{Root: dir, Checkpoints: cps, done: make(chan struct{})}
	if topic == MetadataTopic {
		x.MetadataEntries = []*Entry{metadataEntry(dir, name, topic, p)}
		x.Metadata = []string{name}
		return x, nil
	}
	x.Entries = []*Entry{{Dir: dir, Name: name, Topic: topic, Partition: p, Internal: txnindex.IsInternalTopic(topic)}}
	return x, nil
}

// metadataEntry is the entry of a KRaft metadata log: what it is is known
// from its name (as loader.IsKRaftMetadataDir knows it), so its row says
// so at once, without a scan; its records are metadata, never a producer
// transaction, so there is no LSO to rank it by.
func metadataEntry(dir, name, topic string, p int32) *Entry {
	e := &Entry{Dir: dir, Name: name, Topic: topic, Partition: p, Metadata: true}
	e.tail = &Summary{Diagnosis: &diagnosis.Diagnosis{Topic: topic, Partition: p, HighWatermark: -1, LastStableOffset: -1,
		Note: txnindex.MetadataLogNote(topic)}}
	e.state.Store(int32(Scanned))
	return e
}

// NoPartitionsError is List's answer for a directory without partition
// directories.
type NoPartitionsError struct {
	Dir      string
	Metadata int
}

func (e *NoPartitionsError) Error() string {
	s := e.Dir + ": no partition directory (<topic>-<partition>)"
	if e.Metadata > 0 {
		s += "; only KRaft metadata (" + MetadataTopic + "-0)"
	}
	return s
}

// IsLogDir reports whether dir looks like a log directory rather than one
// partition's: it is not itself named <topic>-<partition> with .log files,
// and at least one entry is a partition directory.
func IsLogDir(dir string) bool {
	if _, _, _, err := loader.ParsePartitionDir(filepath.Base(filepath.Clean(dir))); err == nil {
		if loader.HasLogFile(dir) {
			return false
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, de := range ents {
		if de.IsDir() && de.Type()&fs.ModeSymlink == 0 {
			if t, _, kind, err := loader.ParsePartitionDir(de.Name()); err == nil && kind == "" && t != MetadataTopic {
				return true
			}
		}
	}
	return false
}

// Progress returns how many partitions have been scanned (or failed) and
// how many there are.
func (x *Index) Progress() (scanned, total int) {
	return int(x.scanned.Load()), len(x.Entries)
}

// Done is closed when every partition has been scanned.
func (x *Index) Done() <-chan struct{} { return x.done }

// Took is how long the ranking took, once Done.
func (x *Index) Took() time.Duration { return time.Duration(x.took.Load()) }

// Start scans every partition's tail on workers goroutines (GOMAXPROCS
// when workers <= 0), in the background, until ctx ends. Each scan maps
// and reads at most the tail segments, so the pool bounds both the cores
// and the memory used at once.
func (x *Index) Start(ctx context.Context, workers int) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	x.started = time.Now()
	jobs := make(chan *Entry)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for e := range jobs {
				x.scan(ctx, e)
			}
		})
	}
	go func() {
		defer close(x.done)
		defer wg.Wait()
		defer close(jobs)
		for _, e := range x.Entries {
			select {
			case jobs <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
}

func (x *Index) scan(ctx context.Context, e *Entry) {
	if !e.state.CompareAndSwap(int32(Queued), int32(Loading)) {
		return
	}
	t0 := time.Now()
	l, info, damage, err := ScanTail(ctx, e.Dir, x.Checkpoints)
	e.mu.Lock()
	if err != nil {
		e.err = err
		e.state.Store(int32(Failed))
	} else {
		// The index row shows no client line: its ranking leaves the
		// client passes to the partition's page.
		d := diagnosis.Diagnose(l, diagnosis.Options{Now: time.Now(), Position: -1, NoClientDepartures: true})
		e.tail = &Summary{Diagnosis: trim(d), Info: info, Batches: len(l.Batches), Took: time.Since(t0), Damage: damage}
		e.state.Store(int32(Scanned))
	}
	e.mu.Unlock()
	x.scanned.Add(1)
	x.took.Store(int64(time.Since(x.started)))
}

// trim keeps of d what the index shows, so that nothing of the tail's log
// stays reachable from it.
func trim(d *diagnosis.Diagnosis) *diagnosis.Diagnosis {
	out := &diagnosis.Diagnosis{Topic: d.Topic, Partition: d.Partition, HighWatermark: d.HighWatermark, HighWatermarkSource: d.HighWatermarkSource,
		LastStableOffset: d.LastStableOffset, LastStableOffsetSource: d.LastStableOffsetSource, LSOLagOffsets: d.LSOLagOffsets,
		LSOLagMs: d.LSOLagMs, LSOLagAtLeast: d.LSOLagAtLeast, OpenTransactions: slices.Clone(d.OpenTransactions), ListTotals: d.ListTotals}
	if d.PinnedBy != nil {
		p := *d.PinnedBy
		out.PinnedBy = &p
	}
	return out
}
