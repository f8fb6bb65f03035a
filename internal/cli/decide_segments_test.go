package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/scenario/gen"
)

// TestDecideBySegmentEqualsWholeLoad: `decide --by-segment` of a partition
// directory, a segment window at a time under a --max-memory that holds
// about one window, writes exactly what the whole load writes: every NDJSON
// byte, and every decision line of the text (its header differs), for every
// consumer of decideOptions. The partitions: the generator's logs
// (transactions spanning segments, a hanging one, one begun before the log
// start, retention-deleted segments, keyed records), the production shapes
// of diagnose's tests (compaction's holes and emptied batches, so records
// paged from the segment files, markers without their data, stray
// snapshots), and the real partition directories of testdata. A partition
// whose whole load would take more than half of --max-memory is decided so
// by default. So are the record
// counts of the whole partition (--counts), which equal the whole load's.
func TestDecideBySegmentEqualsWholeLoad(t *testing.T) {
	var dirs []string
	const seg = 64 << 10
	for _, o := range []gen.LogOptions{
		{Seed: 1, HangingFrom: seg / 2},
		{Seed: 2, HangingFrom: -1},
		{Seed: 4, OldTxn: true, OldTxnLateWrite: true, DeleteSegments: 2},
	} {
		o.SegmentBytes, o.BatchBytes, o.TotalBytes, o.Keyed = seg, 1024, 6*seg, true
		st, err := gen.WriteLog(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, st.Dir)
	}
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for _, sc := range append(compactedShapes(now), exitStatusShapes(now-60_000)...) {
		dirs = append(dirs, sc.dir(t))
	}
	real, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "realdata", "*", "*", "*-[0-9]*"))
	for _, d := range real {
		if st, err := os.Stat(d); err == nil && st.IsDir() && !strings.HasPrefix(filepath.Base(d), "__") {
			dirs = append(dirs, d)
		}
	}
	// A shape written as a log directory: its partition directories.
	var parts []string
	for _, d := range dirs {
		if input.DataPartition(d) {
			parts = append(parts, d)
			continue
		}
		kids, _ := filepath.Glob(filepath.Join(d, "*-[0-9]*"))
		for _, k := range kids {
			if input.DataPartition(k) {
				parts = append(parts, k)
			}
		}
	}
	dirs = parts
	compared := 0
	for i, dir := range dirs {
		args := decideOptions[i%len(decideOptions)]
		what := fmt.Sprintf("%s %v", dir, args)
		code, whole, errOut := runArgs(t, append(append([]string{"decide", "--format", "ndjson"}, args...), dir)...)
		if code != exitOK || errOut != "" {
			continue // damaged on purpose: the whole load's own tests cover it
		}
		compared++
		seg := decideOK(t, append(append([]string{"--format", "ndjson", "--by-segment", "--max-memory", "4000000"}, args...), dir)...)
		if seg != whole {
			t.Fatalf("%s: NDJSON by segment differs from the whole load:\n%.2000s\nwhole load:\n%.2000s", what, seg, whole)
		}
		text := decideOK(t, append(append([]string{"--by-segment", "--max-memory", "4000000"}, args...), dir)...)
		wholeText := decideOK(t, append(args, dir)...)
		if uncommented(text) != uncommented(wholeText) {
			t.Fatalf("%s: text by segment differs from the whole load:\n%.2000s\nwhole load:\n%.2000s", what, text, wholeText)
		}
		if !strings.HasPrefix(text, "# ") || !strings.Contains(text, "--by-segment") {
			t.Errorf("%s: the text does not say it was decided by segment:\n%.300s", what, text)
		}
		for _, f := range []string{"text", "ndjson"} {
			c := decideOK(t, append(append([]string{"--counts", "--format", f, "--by-segment", "--max-memory", "4000000"}, args...), dir)...)
			if want := decideOK(t, append(append([]string{"--counts", "--format", f}, args...), dir)...); c != want {
				t.Fatalf("%s: --counts (%s) by segment:\n%s\nwhole load:\n%s", what, f, c, want)
			}
		}
		// A consumer at a position, and the counts of a range: by
		// segment, only the windows from there on (or of the range)
		// are decided; read from a producer snapshot otherwise.
		st, err := segsum.Open(dir, segsum.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ov, err := st.Overview(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		start, end := ov.LogStartOffset, ov.LogEndOffset
		n := end - start
		positions := []int64{start + n/2, start + n/3, end + 5, 0}
		if k := len(ov.Segments); k > 1 {
			positions[3] = ov.Segments[k-1].BaseOffset
		}
		p := positions[i%len(positions)]
		for _, pa := range [][]string{
			{"--from", fmt.Sprint(p), "--format", "ndjson"},
			{"--from", fmt.Sprint(p)},
			{"--counts", "--range", fmt.Sprintf("%d-%d", start+n/3, start+2*n/3)},
			{"--counts", "--format", "ndjson", "--range", fmt.Sprintf("%d-%d", p, p+n/4)},
			{"--counts", "--from", fmt.Sprint(p)},
		} {
			pa := append(pa, args...)
			got := decideOK(t, append(append([]string{"--by-segment", "--max-memory", "4000000"}, pa...), dir)...)
			want := decideOK(t, append(pa, dir)...)
			if uncommented(got) != uncommented(want) {
				t.Fatalf("%s %v: by segment:\n%.2000s\nread from a snapshot:\n%.2000s", dir, pa, got, want)
			}
		}
	}
	if compared < 10 {
		t.Fatalf("only %d of %d partitions compared", compared, len(dirs))
	}
	t.Logf("%d of %d partitions compared", compared, len(dirs))
	// A partition directory whose whole load would take more than half
	// of --max-memory (384 KiB of 1 KiB batches: some 48 KB) is decided
	// by segment without being asked, and says so on stderr; under a
	// larger --max-memory, or with --full-replay, it is loaded whole.
	whole := decideOK(t, "--format", "ndjson", dirs[0])
	code, auto, errOut := runArgs(t, "decide", "--format", "ndjson", "--max-memory", "20000", dirs[0])
	if code != exitOK || auto != whole || !strings.Contains(errOut, "more than half of --max-memory 19.5 KiB: decided a segment at a time (--full-replay loads it whole)") {
		t.Errorf("a partition too large for --max-memory: exit %d, same output %v, stderr %q", code, auto == whole, errOut)
	}
	// So is a consumer's position whose load from there on would.
	wantFrom := decideOK(t, "--format", "ndjson", "--from", "100", dirs[0])
	code, auto, errOut = runArgs(t, "decide", "--format", "ndjson", "--from", "100", "--max-memory", "20000", dirs[0])
	if code != exitOK || auto != wantFrom || !strings.Contains(errOut, "whose load from offset 100 on would take about") {
		t.Errorf("--from 100 too large for --max-memory: exit %d, same output %v, stderr %q", code, auto == wantFrom, errOut)
	}
	for _, args := range [][]string{{"--max-memory", "200000"}, {"--max-memory", "20000", "--full-replay"}} {
		code, out, errOut := runArgs(t, append(append([]string{"decide", "--format", "ndjson"}, args...), dirs[0])...)
		if code != exitOK || out != whole || errOut != "" {
			t.Errorf("%v: exit %d, same output %v, stderr %q; want the whole load", args, code, out == whole, errOut)
		}
	}
	for _, bad := range [][]string{
		{"--by-segment", filepath.Dir(dirs[0])},
		{"--by-segment", "--from", "5", "--full-replay", dirs[0]},
		{"--by-segment", "--demo", "stuck-lso"},
		{"--by-segment", "--max-memory", "0", dirs[0]},
	} {
		if code, _, errOut := runArgs(t, append([]string{"decide"}, bad...)...); code != exitUsage || errOut == "" {
			t.Errorf("decide %v: exit %d, %q; want a usage error", bad, code, errOut)
		}
	}
}
