package segsum

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"

	"github.com/txnscope/txnscope/txnindex"
)

// cacheVersion changes whenever Summary's meaning changes, so that a file
// written by an older server is recomputed, not misread. 4: a segment
// after segments the cleaner emptied is summarised (and the bounds' LSO
// computed) from where the last batch before it ends (Store.prevEnd);
// Summary.FirstOffset. 5: Summary.LowOffset, HighOffset and
// LastNextOffset, for segments that overlap the ones before them. 6: the
// seed (seedPrint). 7: a summary holds the transactions its segment opens
// and moves (Opened, Dropped, OpenCount), not every one open at its end.
// 8: Summary.TxnIndexRejected. 9: Summary.Damage says what a run of
// zero bytes is. 10: Summary.Damaged.
const cacheVersion = 10

type cacheFile struct {
	Version int        `json:"version"`
	Dir     string     `json:"dir"`
	Scan    string     `json:"scan"`
	Sums    []*Summary `json:"summaries"`
	// Bounds hold while every summary does and the checkpoints they were
	// computed with (HWM, LogStart; -1 absent) have not moved: the LSO
	// depends on nothing else.
	Bounds   *Bounds `json:"bounds"`
	HWM      int64   `json:"hwm"`
	LogStart int64   `json:"log_start"`
	// Seed is what the summaries took from the producer snapshots
	// (seedPrint): they hold while it is what the snapshots give now.
	Seed string `json:"seed"`
}

// cachePath is the summaries' file for the partition: in the cache
// directory, never in the log dir (a broker's directory is not ours to
// write), named by a hash of the directory's absolute path.
func (s *Store) cachePath() string {
	if s.o.CacheDir == "" {
		return ""
	}
	abs, err := filepath.Abs(s.dir)
	if err != nil {
		return ""
	}
	h := sha256.Sum256([]byte(abs))
	return filepath.Join(s.o.CacheDir, "segsum-"+hex.EncodeToString(h[:12])+".json")
}

func (s *Store) scanKey() string {
	b, _ := json.Marshal(s.o.Scan)
	if k := s.crc.Key(); k != "" {
		return string(b) + " " + k
	}
	return string(b)
}

// loadCache takes the cached summaries that still describe the files: a
// summary is kept while its segment and every one before it have the same
// name, size and modification time (a later segment's summary starts from
// the state an earlier one ends in). A missing or unreadable file is no
// cache.
func (s *Store) loadCache() {
	p := s.cachePath()
	if p == "" {
		return
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return
	}
	var c cacheFile
	if json.Unmarshal(data, &c) != nil || c.Version != cacheVersion || c.Dir != s.dir || c.Scan != s.scanKey() {
		return
	}
	for k, x := range c.Sums {
		if k >= len(s.segs) || x == nil {
			return
		}
		f := s.segs[k]
		if x.Name != f.name || x.BaseOffset != f.base || x.Size != f.size || x.ModTime != f.modTime {
			return
		}
		s.sums[k] = x
	}
	if len(c.Sums) == len(s.segs) && c.Bounds != nil && c.HWM == s.hwm && c.LogStart == s.logStart {
		s.bounds = c.Bounds
	}
	// A producer snapshot written, replaced or deleted since may seed the
	// first segment otherwise (a transaction open since before the log
	// start), and every summary after it starts from that one's end. A
	// snapshot of a roll that seeds the same (nothing, in a log with no
	// such transaction) keeps them all.
	// (firstSeed's note of a snapshot past the log end is summarize's to
	// take when it seeds a summary: not kept from here.)
	seedEnd := s.seedEnd
	if s.seedPrint(s.sums) != c.Seed {
		for k := range s.sums {
			s.sums[k] = nil
		}
		s.bounds = nil
	}
	s.seedEnd = seedEnd
}

// seedPrint is what summaries starting with sums took from the producer
// snapshots, as JSON: the transactions firstSeed seeds the first segment
// holding batches with, and every emptied one before it (firstSeed of no
// batch).
func (s *Store) seedPrint(sums []*Summary) string {
	var seeds [][]txnindex.OngoingTxn
	sd := &seeder{s: s}
	for _, x := range sums {
		if x == nil {
			break
		}
		first := int64(math.MaxInt64)
		if x.Batches > 0 {
			first = x.FirstOffset
		}
		seeds = append(seeds, sd.seed(first))
		if x.Batches > 0 {
			break
		}
	}
	b, _ := json.Marshal(seeds)
	return string(b)
}

// saveCache writes the summaries, through a temporary file and a rename so
// that a reader never sees half a file. Failing to write is not an error:
// the cache only saves time.
func (s *Store) saveCache() {
	p := s.cachePath()
	if p == "" {
		return
	}
	if err := os.MkdirAll(s.o.CacheDir, 0o700); err != nil {
		return
	}
	data, err := json.Marshal(cacheFile{Version: cacheVersion, Dir: s.dir, Scan: s.scanKey(), Sums: s.sums, Bounds: s.bounds, HWM: s.hwm, LogStart: s.logStart, Seed: s.seedPrint(s.sums)})
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(s.o.CacheDir, ".segsum-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}
