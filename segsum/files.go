package segsum

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/txnindex"
)

// segFile is one .log file of the partition directory.
type segFile struct {
	name    string
	base    int64
	size    int64
	modTime int64
}

// listSegments lists dir's <20 digits>.log files in offset order. Files
// the broker has not finished with (.swap, .cleaned, .deleted) are not
// segments of the log and are left out, as the broker leaves them out of
// the log it serves.
func listSegments(dir string) ([]segFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []segFile
	for _, e := range ents {
		n := e.Name()
		stem, ok := strings.CutSuffix(n, ".log")
		if !ok || len(stem) != 20 || !e.Type().IsRegular() {
			continue
		}
		base, err := strconv.ParseInt(stem, 10, 64)
		if err != nil || base < 0 {
			continue
		}
		st, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, segFile{name: n, base: base, size: st.Size(), modTime: st.ModTime().UnixNano()})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("segsum: %s: no segment (.log file)", dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].base < out[j].base })
	return out, nil
}

// indexFiles fills seg with what the segment's index files tell fetches,
// as loader.OpenPartition does: the .txnindex entries (Kafka creates the
// file lazily, so a segment with other index files and no .txnindex had no
// aborted transaction) and the .index entries, nil when damaged (the broker
// rebuilds a corrupt index, and so does txnindex.Build).
func indexFiles(dir string, seg *txnindex.Segment) {
	stem := filepath.Join(dir, fmt.Sprintf("%020d", seg.BaseOffset))
	found := false
	if fh, err := os.Open(stem + ".index"); err == nil {
		if st, err := fh.Stat(); err == nil {
			found = true
			x, err := loader.ReadOffsetIndex(fh, st.Size(), filepath.Base(stem)+".index", seg.BaseOffset)
			if err == nil {
				seg.OffsetIndex = x.Entries
				if seg.OffsetIndex == nil {
					seg.OffsetIndex = []txnindex.IndexEntry{}
				}
			}
		}
		fh.Close()
	}
	if _, err := os.Stat(stem + ".timeindex"); err == nil {
		found = true
	}
	if fh, err := os.Open(stem + ".txnindex"); err == nil {
		if st, err := fh.Stat(); err == nil {
			found = true
			if x, _ := loader.ReadTxnIndexFile(fh, st.Size(), filepath.Base(stem)+".txnindex", seg.BaseOffset); x != nil {
				seg.TxnIndex = x.Entries
			}
		}
		fh.Close()
	}
	seg.TxnIndexOnDisk = found
}

// firstSeed is the producer state the first segment starts from, as
// loader.OpenPartition seeds it: the transactions open in the newest
// producer snapshot that began before the first batch (retention deleted
// their start, so replay cannot see them open).
func firstSeed(dir string, first int64) []txnindex.OngoingTxn {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".snapshot") && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // 20-digit names: newest first
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		s, err := loader.ReadProducerSnapshot(data, n)
		if err != nil || s == nil {
			continue
		}
		if s.Offset >= 0 && s.Offset < first && first != math.MaxInt64 {
			return nil // older than the first batch: seeds nothing
		}
		return s.Ongoing(first)
	}
	return nil
}
