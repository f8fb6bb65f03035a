package gen

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/present"
	"github.com/txnscope/txnscope/txnindex"
)

// TestBig: the generated demo has the shape its doc promises: n batches, a
// segment every 100,000, a 7-offset gap at every other 50,000 below the
// open transaction (the cleaner never cleans at or past the LSO), and
// producer 99's transaction pinning the LSO from 90% of the way in; the
// diagnosis agrees (a gap above it would be evidence that the cleaner had
// passed it, so that its marker was removed, and the demo would contradict
// itself: the timeline's LSO stuck, the panel clear).
func TestBig(t *testing.T) {
	const n = 600_000
	p := Big(n)
	if len(p.Batches) < n || len(p.Batches) > n+4 || len(p.Segments) != 6 {
		t.Fatalf("%d batches, %d segments", len(p.Batches), len(p.Segments))
	}
	l := txnindex.Build(p)
	hang := p.Batches[n*9/10]
	if hang.ProducerID != 99 || l.LastStableOffset != hang.BaseOffset {
		t.Errorf("LSO %d, batch %d is producer %d at %d", l.LastStableOffset, n*9/10, hang.ProducerID, hang.BaseOffset)
	}
	if len(l.Gaps) != 5 || l.Gaps[0].To-l.Gaps[0].From != 6 || l.Gaps[len(l.Gaps)-1].To >= hang.BaseOffset {
		t.Errorf("gaps %+v", l.Gaps)
	}
	d := present.Diagnose(l, diagnosis.Options{Position: -1})
	if d.PinnedBy == nil || d.PinnedBy.ProducerID != 99 || d.LastStableOffset != hang.BaseOffset || len(d.MarkerRemoved) != 0 {
		t.Errorf("diagnosis: LSO %d, pinned by %+v, compacted %+v", d.LastStableOffset, d.PinnedBy, d.MarkerRemoved)
	}
	if !slices.Equal(Big(n).Batches, p.Batches) {
		t.Error("the same seed gives other batches")
	}
}

// TestDemosOpen: every embedded demo is written to disk and read back by
// the loader without damage, to the batches its scenario builds.
func TestDemosOpen(t *testing.T) {
	t.Cleanup(RemoveDemoFiles)
	demos := Demos()
	if len(demos) < 5 {
		t.Fatalf("%d demos", len(demos))
	}
	for _, d := range demos {
		p, err := d.Open()
		if err != nil || len(p.Damage) != 0 {
			t.Fatalf("%s: %v %v", d.Name, err, p.Damage)
		}
		b, err := d.Scenario.Build()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Input.Batches, b.Log.Batches) || p.Input.Topic != b.Log.Topic {
			t.Errorf("%s: the loader reads %d batches of %s, the scenario built %d of %s", d.Name, len(p.Input.Batches), p.Input.Topic, len(b.Log.Batches), b.Log.Topic)
		}
		// A second open reads the files already written.
		if q, err := d.Open(); err != nil || q.Dir != p.Dir {
			t.Errorf("%s: reopened %v in %s, was %s", d.Name, err, q.Dir, p.Dir)
		}
	}
	if _, err := FindDemo("nope"); err == nil || !strings.Contains(err.Error(), `unknown demo "nope" (have compacted, interleaved, `) {
		t.Errorf("FindDemo: %v", err)
	}
	if d, err := FindDemo(demos[0].Name); err != nil || d.Name != demos[0].Name {
		t.Errorf("FindDemo(%s): %v", demos[0].Name, err)
	}
}

// TestWriteDir: the benchmark partition is real Kafka bytes: the loader
// reads every batch, checking each CRC, and finds the markers written.
func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bench-0")
	st, err := WriteDir(dir, DirOptions{Size: 4 << 20, SegmentBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	p, err := loader.OpenPartition(dir)
	if err != nil || len(p.Damage) != 0 {
		t.Fatalf("%v %v", err, p.Damage)
	}
	var commits, aborts int
	for _, b := range p.Input.Batches {
		switch b.Control() {
		case txnindex.ControlCommit:
			commits++
		case txnindex.ControlAbort:
			aborts++
		}
	}
	if len(p.Segments) != len(st.Segments) || len(p.Input.Batches) != st.Batches || commits != st.Commits || aborts != st.Aborts || aborts == 0 {
		t.Errorf("read %d segments, %d batches, %d commits, %d aborts; wrote %+v", len(p.Segments), len(p.Input.Batches), commits, aborts, st)
	}
	if l := txnindex.Build(p.Input); l.LogEndOffset != st.NextOffset {
		t.Errorf("log end %d, next offset written %d", l.LogEndOffset, st.NextOffset)
	}
}
