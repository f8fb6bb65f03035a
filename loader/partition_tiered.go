package loader

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/txnscope/txnscope/txnindex"
)

// RemoteIndexCacheDir is the directory the broker keeps, in each log dir,
// for the indexes of remote segments it fetched (RemoteIndexCache): only
// a broker with remote storage (KIP-405) writes it.
const RemoteIndexCacheDir = "remote-log-index-cache"

// detectTiered recognises a partition whose older segments are in remote
// storage (KIP-405) from what the disk holds, and marks Input.Tiered with
// the evidence. Its mark is log-start-offset-checkpoint below the first
// local segment: with remote storage the broker takes that log start as it
// is (LogLoader.load), without it the larger of it and the first segment's
// base. A checkpoint written before retention's deletion reached the disk
// looks the same, so one more sign is needed: the log dir's
// remote-log-index-cache/, or a leader-epoch-checkpoint entry starting
// below the first local segment (the broker truncates the epoch cache
// from the start at the log start, so without remote storage none does).
// Each sign found is listed.
func (p *Partition) detectTiered() {
	in := p.Input
	if len(p.Segments) == 0 || in.LogStartOffset < 0 {
		return
	}
	first := p.Segments[0].Log.BaseOffset
	if in.LogStartOffset >= first {
		return
	}
	ev := []string{fmt.Sprintf("log-start-offset-checkpoint says %s, below the first local segment, %s", txnindex.Count(in.LogStartOffset), txnindex.Count(first))}
	signs := 0
	if st, err := os.Stat(filepath.Join(filepath.Dir(filepath.Clean(p.Dir)), RemoteIndexCacheDir)); err == nil && st.IsDir() {
		signs++
		ev = append(ev, "the log dir holds "+RemoteIndexCacheDir+"/, the broker's cache of remote segments' indexes (RemoteIndexCache)")
	}
	if c := p.LeaderEpochs; c != nil {
		for _, e := range c.Entries {
			if e.StartOffset < first && e.StartOffset >= in.LogStartOffset {
				signs++
				ev = append(ev, fmt.Sprintf("leader-epoch-checkpoint lists epoch %d from offset %s, below the first local segment: the broker keeps the epochs of remote data", e.Epoch, txnindex.Count(e.StartOffset)))
				break
			}
		}
	}
	if signs == 0 {
		return
	}
	in.Tiered = &txnindex.TieredStorage{LogStartOffset: in.LogStartOffset, Evidence: ev}
}
