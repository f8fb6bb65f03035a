package loader

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// The offset checkpoints sit at the root of a log directory and name every
// partition of the broker's directory: tens of MiB on a broker of many
// partitions (a line is about 40 bytes), within maxStateFile. Opening one
// partition needs its own lines only, and the tools open many partitions
// of one directory (diagnose's tail load and its fallbacks, the server's
// pages and segment stores), each of which read all four files again: two
// 60 MiB checkpoints cost 2.2 GB of allocation to diagnose a partition of
// 290 bytes. So each directory's checkpoints are parsed once, keeping the
// lines of the partitions the directory holds, and reused while the files
// do not change.

// cpStamp is what the cache compares to see a file (or the directory
// itself, for partitions added or removed) unchanged.
type cpStamp struct {
	exists bool
	size   int64
	mtime  time.Time
	mode   os.FileMode
}

func stampOf(path string) cpStamp {
	st, err := os.Lstat(path)
	if err != nil {
		return cpStamp{}
	}
	return cpStamp{exists: true, size: st.Size(), mtime: st.ModTime(), mode: st.Mode()}
}

type cpEntry struct {
	stamps [6]cpStamp
	parsed time.Time // when the files were parsed
	cps    *LogDirCheckpoints
}

var cpCache struct {
	mu     sync.Mutex
	m      map[string]*cpEntry
	parses int // directories' checkpoints parsed, for tests
}

// maxCachedLogDirs bounds the cache: a broker has a few log directories,
// and a cached entry holds only its directory's partitions' lines.
const maxCachedLogDirs = 16

// racyWindow: a file changed within this time of the parse may have been
// changed again since without its size or time moving (file times are as
// coarse as a few milliseconds), so its entry is not trusted, as Git
// treats a "racily clean" index entry.
const racyWindow = 2 * time.Second

func cpStamps(dir string) [6]cpStamp {
	return [6]cpStamp{
		stampOf(dir),
		stampOf(filepath.Join(dir, ReplicationOffsetCheckpoint)),
		stampOf(filepath.Join(dir, RecoveryPointOffsetCheckpoint)),
		stampOf(filepath.Join(dir, LogStartOffsetCheckpoint)),
		stampOf(filepath.Join(dir, CleanerOffsetCheckpoint)),
		stampOf(filepath.Join(dir, CleanShutdownFile)),
	}
}

// cachedLogDirCheckpoints returns dir's checkpoints from the cache when
// none of the files, nor the directory's list of partitions, changed since
// they were parsed; else it parses them and caches the result.
func cachedLogDirCheckpoints(dir string) (*LogDirCheckpoints, error) {
	key := filepath.Clean(dir)
	if abs, err := filepath.Abs(key); err == nil {
		key = abs
	}
	stamps := cpStamps(key)
	if !stamps[1].exists && !stamps[2].exists && !stamps[3].exists && !stamps[4].exists {
		// No checkpoint to parse (a partition directory copied on its
		// own, under /tmp say): nothing to cache, and no listing of a
		// parent that may hold anything.
		return readLogDirCheckpoints(dir, nil)
	}
	cpCache.mu.Lock()
	defer cpCache.mu.Unlock()
	if e := cpCache.m[key]; e != nil && e.stamps == stamps && trusted(stamps, e.parsed) {
		return e.cps, nil
	}
	keep := presentPartitions(key)
	parsed := time.Now()
	cpCache.parses++
	cps, err := readLogDirCheckpoints(dir, keep)
	if err != nil {
		return nil, err
	}
	// Shared from now on: an append to its Damage must copy.
	cps.Damage = slices.Clip(cps.Damage)
	if cpCache.m == nil || len(cpCache.m) >= maxCachedLogDirs {
		cpCache.m = map[string]*cpEntry{}
	}
	cpCache.m[key] = &cpEntry{stamps: stamps, parsed: parsed, cps: cps}
	return cps, nil
}

// trusted reports whether every stamp is older than the parse by more
// than racyWindow.
func trusted(stamps [6]cpStamp, parsed time.Time) bool {
	for _, s := range stamps {
		if s.exists && !s.mtime.Before(parsed.Add(-racyWindow)) {
			return false
		}
	}
	return true
}

// presentPartitions is the set of partitions dir holds a directory of
// (any kind: a -delete or -future directory is still that partition's);
// nil, keep everything, when dir cannot be listed.
func presentPartitions(dir string) map[tp]bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	keep := map[tp]bool{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if topic, p, _, err := ParsePartitionDir(e.Name()); err == nil {
			keep[tp{topic, p}] = true
		}
	}
	return keep
}
