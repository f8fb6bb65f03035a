package gen

import (
	"strings"
	"testing"

	"github.com/txnscope/txnscope/loader"
)

// TestWriteLogDir: a log dir of three generated partitions loads with no
// damage; each has its segments, indexes and snapshots, the checkpoints
// list all three, and the hanging transaction holds each LSO at or below
// its first offset (a longer transaction of another producer may pin it
// lower).
func TestWriteLogDir(t *testing.T) {
	dir := t.TempDir()
	sts, err := WriteLogDir(dir, LogOptions{SegmentBytes: 32 << 10, BatchBytes: 4096, TotalBytes: 6 * 32 << 10, DeleteSegments: 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := loader.OpenLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Partitions) != 3 || len(ld.Damage) != 0 {
		t.Fatalf("%d partitions, damage %v", len(ld.Partitions), ld.Damage)
	}
	for i, p := range ld.Partitions {
		st := sts[i]
		if len(p.Damage) != 0 {
			t.Errorf("partition %d: damage %v", i, p.Damage)
		}
		// The snapshot at the log start (retention keeps it,
		// deleteSnapshotsBefore) is the running broker's, which only its
		// next start deletes (truncateAndReload): loaded, not ignored.
		ignored := 0
		for _, f := range p.Ignored {
			if strings.HasSuffix(f.Name, ".snapshot") {
				ignored++
			}
		}
		if len(p.Segments) != len(st.Segments) || len(p.Snapshots) != len(st.Snapshots) || ignored != 0 || p.Snapshot == nil {
			t.Errorf("partition %d: %d segments, %d snapshots and %d ignored; wrote %d and %d", i, len(p.Segments), len(p.Snapshots), ignored, len(st.Segments), len(st.Snapshots))
		}
		for _, s := range p.Segments {
			if s.Index == nil || s.TimeIndex == nil || len(s.Index.Entries) == 0 {
				t.Errorf("partition %d segment %s: index %v timeindex %v", i, s.Log.Name, s.Index, s.TimeIndex)
			}
		}
		l := p.Build()
		if l.LogStartOffset != st.LogStartOffset || l.HighWatermark != st.NextOffset || l.LastStableOffset > st.HangingFirstOffset {
			t.Errorf("partition %d: log start %d, HWM %d, LSO %d; want %d, %d, at most %d", i, l.LogStartOffset, l.HighWatermark, l.LastStableOffset,
				st.LogStartOffset, st.NextOffset, st.HangingFirstOffset)
		}
		hanging := false
		for _, ti := range l.Open {
			hanging = hanging || l.Txns[ti].ProducerID == hangingPID && l.Txns[ti].FirstOffset == st.HangingFirstOffset
		}
		if !hanging {
			t.Errorf("partition %d: producer %d's transaction from %d is not open", i, hangingPID, st.HangingFirstOffset)
		}
		if len(l.Mismatches) != 0 {
			t.Errorf("partition %d: the .txnindex files differ from the rebuilt ones: %v", i, l.Mismatches)
		}
	}
}
