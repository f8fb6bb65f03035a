package loader

import (
	"fmt"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/txnindex"
)

// noSegmentEvidence marks a partition directory that holds no .log
// segment (a copy that left them out, or the KRaft metadata log of a node
// that holds only its snapshots): its offsets are unknown, not 0, and the
// other files say what can be said of them. A KRaft snapshot
// <end offset>-<epoch>.checkpoint holds the metadata up to its end offset
// (exclusive, Snapshots.parse); a producer snapshot is written at a
// segment roll or a clean shutdown with the log end of that moment
// (ProducerStateManager.takeSnapshot), so the log reached at least its
// offset; an index without its .log shows a segment that is not here.
func (p *Partition) noSegmentEvidence(l dirListing) {
	if len(p.Segments) > 0 {
		return
	}
	in := p.Input
	in.NoSegment = true
	ev := []string{}
	ks := slices.Clone(p.KRaftSnapshots)
	slices.SortFunc(ks, func(a, b KRaftSnapshot) int { return int(min(max(a.EndOffset-b.EndOffset, -1), 1)) })
	if n := len(ks); n > 0 {
		s := ks[n-1]
		ev = append(ev, fmt.Sprintf("the newest of %s, %s, holds the cluster metadata up to offset %s (epoch %d): the log reached at least that far",
			txnindex.Plural(n, "KRaft snapshot", "KRaft snapshots"), s.Name, txnindex.Count(s.EndOffset), s.Epoch))
	}
	newest, name := int64(-1), ""
	for _, n := range l.snapshots {
		if off, _, ok := splitSegmentName(n); ok && off > newest {
			newest, name = off, n
		}
	}
	if newest >= 0 {
		ev = append(ev, fmt.Sprintf("the newest producer snapshot, %s, was written when the log end was %s (at a segment roll or a clean shutdown)",
			name, txnindex.Count(newest)))
	}
	var orphans []string
	for _, ig := range p.Ignored {
		if strings.HasPrefix(ig.Reason, "orphaned index file") {
			orphans = append(orphans, ig.Name)
		}
	}
	if len(orphans) > 0 {
		slices.Sort(orphans)
		ev = append(ev, fmt.Sprintf("index files without their .log segment (%s): the segments' data is not in this copy", strings.Join(orphans, ", ")))
	}
	if in.HighWatermarkSource == ReplicationOffsetCheckpoint && in.HighWatermark >= 0 {
		ev = append(ev, fmt.Sprintf("replication-offset-checkpoint says high watermark %s", txnindex.Count(in.HighWatermark)))
	}
	in.NoSegmentEvidence = ev
}
