package logindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/internal/genlogdir"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
)

// TestIndexRanksByTail lists a log dir of 3 topics of 12 partitions, the
// internal topics and KRaft's metadata log, scans every tail and checks
// each against a full load of the same directory: the same LSO, high
// watermark and pinning transaction, while reading only the last segment
// (the snapshot at the roll seeds the transaction opened before it).
func TestIndexRanksByTail(t *testing.T) {
	dir := t.TempDir()
	stuck := []string{"t1-10", "t2-3", "t0-0", "t2-11"}
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 3, Partitions: 12, Internal: 3, Metadata: true, Stuck: stuck}); err != nil {
		t.Fatal(err)
	}
	x, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Entries) != 3*12+2*3 || !slices.Equal(x.Metadata, []string{"__cluster_metadata-0"}) {
		t.Fatalf("%d entries, metadata %q", len(x.Entries), x.Metadata)
	}
	var names []string
	for _, e := range x.Entries[:12] {
		names = append(names, e.Name)
	}
	if names[2] != "__consumer_offsets-2" || x.Entries[6].Name != "t0-0" || x.Entries[6+9].Name != "t0-9" || x.Entries[6+10].Name != "t0-10" {
		t.Errorf("order %q ... %s", names, x.Entries[16].Name)
	}
	if !x.Entries[0].Internal || x.Entries[6].Internal {
		t.Errorf("internal flags wrong")
	}
	x.Start(context.Background(), 2)
	select {
	case <-x.Done():
	case <-time.After(time.Minute):
		t.Fatal("ranking did not finish")
	}
	if n, total := x.Progress(); n != total {
		t.Fatalf("progress %d of %d", n, total)
	}
	for _, e := range x.Entries {
		st, sum, err := e.State()
		if st != Scanned || err != nil {
			t.Fatalf("%s: %v %v", e.Name, st, err)
		}
		if sum.Info.Full || sum.Info.Segments != 1 || sum.Info.Total != 2 {
			t.Errorf("%s read %s", e.Name, sum.Info)
		}
		p, err := loader.OpenPartition(e.Dir)
		if err != nil {
			t.Fatal(err)
		}
		full := diagnosis.Diagnose(p.Build(), diagOpts())
		d := sum.Diagnosis
		if d.LastStableOffset != full.LastStableOffset || d.HighWatermark != full.HighWatermark || d.LSOLagOffsets != full.LSOLagOffsets ||
			(d.PinnedBy == nil) != (full.PinnedBy == nil) {
			t.Errorf("%s: tail LSO %d HWM %d lag %d, full %d %d %d", e.Name, d.LastStableOffset, d.HighWatermark, d.LSOLagOffsets,
				full.LastStableOffset, full.HighWatermark, full.LSOLagOffsets)
		}
		if d.PinnedBy != nil && (d.PinnedBy.FirstOffset != full.PinnedBy.FirstOffset || d.PinnedBy.ProducerID != full.PinnedBy.ProducerID) {
			t.Errorf("%s: pinned by %+v, full %+v", e.Name, *d.PinnedBy, *full.PinnedBy)
		}
		if want := slices.Contains(stuck, e.Name); want != (d.LSOLagOffsets > 0) {
			t.Errorf("%s: lag %d, stuck %v", e.Name, d.LSOLagOffsets, want)
		}
	}
}

// TestTailWithoutSnapshot: with the snapshots gone the tail scan replays
// every segment, says so, and still finds the transaction opened in the
// first one.
func TestTailWithoutSnapshot(t *testing.T) {
	dir := t.TempDir()
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: 1, Stuck: []string{"t0-0"}}); err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "t0-0", "*.snapshot"))
	for _, s := range snaps {
		os.Remove(s)
	}
	l, info, _, err := ScanTail(context.Background(), filepath.Join(dir, "t0-0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Full || info.Segments != 2 {
		t.Errorf("info %+v", info)
	}
	if l.LastStableOffset != 0 {
		t.Errorf("LSO %d, want 0 (the transaction opened at offset 0)", l.LastStableOffset)
	}
}

func diagOpts() diagnosis.Options {
	return diagnosis.Options{Now: time.Now(), Position: -1}
}

// TestJoinWithinBound: the join reads the internal partitions whole when
// they fit its bound, and only their newest segments when they do not,
// saying which and from what offset, the coordinators then incomplete;
// the result is read once.
func TestJoinWithinBound(t *testing.T) {
	dir := t.TempDir()
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: 1, Internal: 1}); err != nil {
		t.Fatal(err)
	}
	segs := func(topic string) (first, last int64) {
		logs, _ := filepath.Glob(filepath.Join(dir, topic+"-0", "*.log"))
		slices.Sort(logs)
		a, _ := os.Stat(logs[0])
		b, _ := os.Stat(logs[len(logs)-1])
		return a.Size(), b.Size()
	}
	of, ol := segs("__consumer_offsets")
	tf, tl := segs("__transaction_state")

	x, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	j := x.Join(context.Background())
	if j.Evidence.Coordinators == nil || !j.Evidence.HaveOffsets || j.Partial != "" || !strings.Contains(j.Read, "1 partition of __consumer_offsets and 1 partition of __transaction_state") {
		t.Errorf("whole join: %+v", j)
	}
	if x.Join(context.Background()) != j {
		t.Errorf("the join is read again")
	}

	// Room for both last segments, not for a first one beside them.
	x, _ = List(dir)
	x.JoinBytes = 2*max(ol, tl) + min(of, tf)/2
	j = x.Join(context.Background())
	for _, w := range []string{"only the newest segments of 2 internal partitions", "__consumer_offsets-0 from offset", "__transaction_state-0 from offset"} {
		if !strings.Contains(j.Partial, w) {
			t.Errorf("partial join note %q lacks %q", j.Partial, w)
		}
	}
	if j.Evidence.Coordinators == nil || j.Evidence.Coordinators.Complete || j.Evidence.Note != j.Partial {
		t.Errorf("a partial join's coordinators: %+v", j.Evidence)
	}
}

// TestScanTailSkipsSnapshotsBrokerDeletes: a stray snapshot (no segment
// begins at its offset, below the last segment's base) newer than the
// ones the broker keeps, holding a transaction open before the log start,
// is one the broker deletes on startup (loader.SnapshotsKept): the tail
// scan does not seed from it, and its LSO is the full load's.
func TestScanTailSkipsSnapshotsBrokerDeletes(t *testing.T) {
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: 32 << 10, BatchBytes: 512, TotalBytes: 9 * 32 << 10, HangingFrom: -1, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	p, err := loader.OpenPartition(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	n := len(p.Segments)
	stray := fmt.Sprintf("%020d.snapshot", p.Segments[n-1].Log.BaseOffset-1)
	for _, s := range []string{fmt.Sprintf("%020d.snapshot", p.Segments[n-1].Log.BaseOffset)} {
		if err := os.Remove(filepath.Join(st.Dir, s)); err != nil {
			t.Fatal(err)
		}
	}
	first := p.Input.Batches[0].BaseOffset
	fake := loader.AppendProducerSnapshot(nil, []loader.SnapshotEntry{{ProducerID: 4242, LastOffset: first, CurrentTxnFirstOffset: first}})
	if err := os.WriteFile(filepath.Join(st.Dir, stray), fake, 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := loader.OpenPartition(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	want := full.Build()
	l, info, _, err := ScanTail(context.Background(), st.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Snapshot == stray {
		t.Errorf("the tail scan seeded from %s, which the broker deletes", stray)
	}
	if l.LastStableOffset != want.LastStableOffset {
		t.Errorf("tail LSO %d (%s), full load %d", l.LastStableOffset, info, want.LastStableOffset)
	}
}

// TestTailIsASeededReplay: a tail seeded from a snapshot says so
// (Log.Replay: from the snapshot's offset, the segments read of all), so
// that the offsets below it, not read, are no gap of the log (a partition
// page's first view drew them as one); without a snapshot every segment is
// replayed, a full replay that leaves nothing unread.
func TestTailIsASeededReplay(t *testing.T) {
	dir := t.TempDir()
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: 1, Stuck: []string{"t0-0"}}); err != nil {
		t.Fatal(err)
	}
	l, info, _, err := ScanTail(context.Background(), filepath.Join(dir, "t0-0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := l.Replay
	if info.Full || r == nil || r.Mode != txnindex.ReplaySnapshot || r.FromOffset != info.From || r.SegmentsRead != info.Segments || r.Segments != info.Total || r.Snapshot != info.Snapshot || r.BytesRead <= 0 || r.Bytes <= r.BytesRead {
		t.Fatalf("info %+v, replay %+v", info, r)
	}
	for _, g := range l.Gaps {
		if g.From < info.From {
			t.Errorf("gap %+v below the tail's first offset %d", g, info.From)
		}
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "t0-0", "*.snapshot"))
	for _, s := range snaps {
		os.Remove(s)
	}
	if l, _, _, err := ScanTail(context.Background(), filepath.Join(dir, "t0-0"), nil); err != nil || l.Replay.Seeded() {
		t.Fatalf("every segment replayed: replay %+v, %v", l.Replay, err)
	}
}

// TestListSkipsDotTopics: directories of topic "." or "..", which Kafka
// refuses to create, are skipped with that reason; the index's links to
// them would have named the current or the parent directory.
func TestListSkipsDotTopics(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"t-0", "..-0", ".-0", "...-1"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	x, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, e := range x.Entries {
		listed = append(listed, e.Name)
	}
	if strings.Join(listed, ",") != "...-1,t-0" {
		t.Errorf("listed %v, want ...-1 and t-0", listed)
	}
	skipped := map[string]string{}
	for _, s := range x.Skipped {
		skipped[s.Name] = s.Reason
	}
	for _, name := range []string{"..-0", ".-0"} {
		if !strings.Contains(skipped[name], `Kafka refuses these topic names`) {
			t.Errorf("%s: skipped with %q", name, skipped[name])
		}
	}
}
