package segsum

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/diagnosis"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/inspect"
	"github.com/txnscope/txnscope/scenario/gen"
)

// Snapshots the broker deletes on startup (LogLoader.load, see
// loader.SnapshotsKept) seed nothing: the full load, the seeded diagnose
// (loader.OpenPartitionTail) and the segment windows all replay as the
// broker does, from the newest snapshot it keeps.

// strayPartition writes a genlog partition (7 segments of 32 KiB after
// retention removed the first two, a .snapshot at each roll, no hanging
// transaction) and returns its directory, its segments' base offsets, its
// log start and end offsets.
func strayPartition(t *testing.T) (string, []int64, int64, int64) {
	t.Helper()
	const seg = 32 << 10
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: seg, BatchBytes: 512, TotalBytes: 9 * seg, HangingFrom: -1, DeleteSegments: 2, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	full, err := loader.OpenPartition(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for _, s := range full.Segments {
		bases = append(bases, s.Log.BaseOffset)
	}
	l := full.Build()
	return st.Dir, bases, l.LogStartOffset, l.LogEndOffset
}

// fakeSnapshot is a snapshot holding a transaction of producer 4242 open
// since just before the log start: seeded, it pins the LSO at the log
// start, which no transaction of the log does.
func fakeSnapshot(logStart int64) []byte {
	return loader.AppendProducerSnapshot(nil, []loader.SnapshotEntry{{ProducerID: 4242, Epoch: 0, LastSequence: 0,
		LastOffset: logStart - 1, Timestamp: gen.Start, CoordinatorEpoch: 0, CurrentTxnFirstOffset: logStart - 1}})
}

func snapName(off int64) string { return fmt.Sprintf("%020d.snapshot", off) }

// diagnoseOf is the diagnosis of p, Replay left out, at a fixed clock.
func diagnoseOf(t *testing.T, p *loader.Partition) string {
	t.Helper()
	d := diagnosis.Diagnose(p.Build(), diagnosis.Options{Now: time.UnixMilli(gen.Start + 3_600_000*24), Position: -1})
	d.Replay, d.ClientDepartures = nil, nil // the clients' counts cover the batches read
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSnapshotsBrokerDeletes: a partition directory with a snapshot the
// broker deletes on startup, newer than every snapshot it keeps (so that
// taking the newest, as before, seeds from it): a stray one (no segment
// begins at its offset, below the last segment's base), one past the log
// end, one at the log start, one in the range a .swap replaces. The full
// load ignores it (its answer is the answer without the file), the seeded
// diagnose equals the full replay, and every segment window equals the
// full pass. The control case, a snapshot the broker keeps, does change
// the answer: the fake is one that would be seen.
func TestSnapshotsBrokerDeletes(t *testing.T) {
	cases := []struct {
		name string
		// at is the fake's offset from the partition's bases, log start
		// and end; keep are the genlog snapshots left (by index of
		// the base they sit at, negative from the end; nil: all).
		at   func(bases []int64, start, end int64) int64
		keep []int
		swap bool
		why  string // in the reason the fake is ignored with; "" when kept
		// seeds: a kept fake the seeded diagnose and the segment windows
		// must seed from too, and agree with the full load
		seeds bool
	}{
		{"stray below the last segment", func(b []int64, _, _ int64) int64 { return b[len(b)-2] + 1 }, []int{-3, -2}, false, "stray snapshot", false},
		{"past the log end", func(_ []int64, _, end int64) int64 { return end + 10 }, nil, false, "past the log end offset", false},
		// The running broker keeps a snapshot at the log start (only its
		// next start deletes it) and its state is the one consumers meet.
		{"kept: at the log start", func(_ []int64, start, _ int64) int64 { return start }, []int{}, false, "", true},
		{"in the range a swap replaces", func(b []int64, _, _ int64) int64 { return b[len(b)-2] }, []int{-3}, true, "which the interrupted cleaning's .swap replaces", false},
		{"kept: at the last segment's base", func(b []int64, _, _ int64) int64 { return b[len(b)-1] }, []int{-3, -2}, false, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, bases, start, end := strayPartition(t)
			if tc.keep != nil {
				keep := map[string]bool{}
				for _, i := range tc.keep {
					keep[snapName(bases[len(bases)+i])] = true
				}
				names, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
				for _, n := range names {
					if !keep[filepath.Base(n)] {
						if err := os.Remove(n); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if tc.swap {
				// An interrupted cleaning of the second-to-last
				// segment: its copy as a .log.swap, which replaces
				// the offsets [its base, its next offset).
				k := len(bases) - 2
				data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%020d.log", bases[k])))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.log.swap", bases[k])), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Before the fake: the answer the broker's replay gives.
			before, err := loader.OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			want := diagnoseOf(t, before)

			fake := snapName(tc.at(bases, start, end))
			if err := os.WriteFile(filepath.Join(dir, fake), fakeSnapshot(start), 0o644); err != nil {
				t.Fatal(err)
			}
			full, err := loader.OpenPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := diagnoseOf(t, full)
			if tc.why == "" {
				if full.Snapshot == nil || full.Snapshot.Name != fake || got == want {
					t.Fatalf("the kept snapshot %s did not seed the load (seeded from %v): the fake changes nothing", fake, full.Snapshot)
				}
				if !tc.seeds {
					return
				}
			} else {
				if full.Snapshot != nil && full.Snapshot.Name == fake {
					t.Fatalf("the full load seeded from %s, which the broker deletes", fake)
				}
				i := slices.IndexFunc(full.Ignored, func(f loader.IgnoredFile) bool { return f.Name == fake })
				if i < 0 || !strings.Contains(full.Ignored[i].Reason, tc.why) {
					t.Errorf("%s not listed as ignored with %q: %+v", fake, tc.why, full.Ignored)
				}
				if got != want {
					t.Errorf("full load with %s:\n%s\nwithout it:\n%s", fake, got, want)
				}
			}
			if !tc.swap {
				tail, err := loader.OpenPartitionTail(context.Background(), dir, loader.DefaultScanOptions, loader.TailOptions{Position: -1})
				if err != nil {
					t.Fatal(err)
				}
				if s := tail.Input.Replay; s != nil && s.Snapshot == fake && tc.why != "" {
					t.Errorf("the seeded diagnose read from %s", fake)
				}
				if d := diagnoseOf(t, tail); d != got {
					t.Errorf("seeded diagnose (%+v):\n%s\nfull replay:\n%s", tail.Input.Replay, d, got)
				}
			}
			if d := differ(t, dir, 3); d != "" {
				t.Error(d)
			}
		})
	}
}

// TestSnapshotsBrokerDeletesListed: the listing of a partition directory
// (inspect's ignored files, loader.ListSegments) names each snapshot the
// broker deletes on startup with why, in words, and keeps the others.
func TestSnapshotsBrokerDeletesListed(t *testing.T) {
	dir, bases, start, end := strayPartition(t)
	stray, past := snapName(bases[2]+1), snapName(end+5)
	for _, n := range []string{stray, past} {
		if err := os.WriteFile(filepath.Join(dir, n), fakeSnapshot(start), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The genlog snapshot at the log start (the first kept segment's
	// base) is kept: only the broker's next start deletes it.
	atStart := snapName(start)
	if _, err := os.Stat(filepath.Join(dir, atStart)); err != nil {
		t.Fatalf("genlog wrote no snapshot at the log start %d: %v", start, err)
	}
	want := map[string]string{
		stray: fmt.Sprintf("a stray snapshot, no segment begins at offset %d", bases[2]+1),
		past:  fmt.Sprintf("offset %d is past the log end offset %d", end+5, end),
	}
	in, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := inspect.New(in, inspect.Options{})
	if len(r.Partitions) != 1 {
		t.Fatalf("%d partitions", len(r.Partitions))
	}
	ip := r.Partitions[0]
	for n, why := range want {
		found := false
		for _, ig := range ip.Ignored {
			found = found || strings.HasPrefix(ig, n+": deleted by the broker on startup: ") && strings.Contains(ig, why)
		}
		if !found {
			t.Errorf("inspect does not list %s as ignored with %q: %q", n, why, ip.Ignored)
		}
		for _, s := range ip.Snapshots {
			if s.Name == n {
				t.Errorf("inspect lists %s among the loaded snapshots", n)
			}
		}
	}
	if !slices.ContainsFunc(ip.Snapshots, func(s inspect.Snapshot) bool { return s.Name == atStart }) {
		t.Errorf("inspect does not list %s, at the log start, among the loaded snapshots", atStart)
	}
	if len(ip.Snapshots) == 0 {
		t.Errorf("inspect lists no loaded snapshot: the ones at the other segments' bases are kept")
	}
	// loader.ListSegments (segsum's listing) leaves out the stray one;
	// the log start and end rules need the scan.
	l, err := loader.ListSegments(context.Background(), dir, loader.DefaultScanOptions)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(l.Snapshots, stray) || !slices.ContainsFunc(l.Ignored, func(f loader.IgnoredFile) bool {
		return f.Name == stray && strings.Contains(f.Reason, want[stray])
	}) {
		t.Errorf("ListSegments: snapshots %v, ignored %+v: want %s ignored as stray", l.Snapshots, l.Ignored, stray)
	}
}

// TestSummariesCachedSeed: the cached summaries hold while the producer
// snapshots seed the log as they did. A newest snapshot rewritten with a
// transaction open since before the log start (which every summary then
// starts from) makes a new Store summarise every segment again, as one
// without the cache does; one rewritten with the same state (its time
// moved) keeps the cache whole.
func TestSummariesCachedSeed(t *testing.T) {
	dir, _, start, _ := strayPartition(t)
	cache := t.TempDir()
	summaries := func(o Options) ([]Summary, int) {
		t.Helper()
		st, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		sums, _, err := st.Summaries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for i := range sums {
			sums[i].Aborted = nil // read back from the .txnindex when needed
		}
		return sums, st.Fresh()
	}
	sums, fresh := summaries(Options{CacheDir: cache})
	if fresh != len(sums) {
		t.Fatalf("first open computed %d of %d summaries", fresh, len(sums))
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
	slices.Sort(names)
	newest := names[len(names)-1]
	when := time.Now().Add(time.Hour)
	if err := os.Chtimes(newest, when, when); err != nil {
		t.Fatal(err)
	}
	if again, fresh := summaries(Options{CacheDir: cache}); fresh != 0 || fmt.Sprint(again) != fmt.Sprint(sums) {
		t.Fatalf("a snapshot touched, seeding the same: %d summaries computed again", fresh)
	}
	if err := os.WriteFile(newest, fakeSnapshot(start), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _ := summaries(Options{})
	got, fresh := summaries(Options{CacheDir: cache})
	if fresh != len(sums) || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the newest snapshot seeding a transaction open since before the log start: %d of %d summaries computed again, equal to the uncached ones: %v", fresh, len(sums), fmt.Sprint(got) == fmt.Sprint(want))
	}
	if fmt.Sprint(want) == fmt.Sprint(sums) {
		t.Fatal("the fake snapshot changes no summary: the test shows nothing")
	}
}
