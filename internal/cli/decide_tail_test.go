package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/scenario/gen"
)

// TestDecideFromSnapshot: `server decide --from N` of a partition directory
// reads it from a producer snapshot (the segment holding N on, and the
// spans of the transactions open in the snapshot), says so, and writes, in
// text and NDJSON, under every isolation and consumer's rules, exactly
// what --full-replay writes: the logs of loader's tail tests (a hanging
// transaction, one begun before the log start, retention-deleted
// segments), positions across every segment, at the LSO, past the end.
func TestDecideFromSnapshot(t *testing.T) {
	const seg = 64 << 10
	seeded, runs := 0, 0
	for _, o := range []gen.LogOptions{
		{Seed: 1, HangingFrom: seg / 2},
		{Seed: 2, HangingFrom: -1},
		{Seed: 3, HangingFrom: 3 * seg},
		{Seed: 4, OldTxn: true, OldTxnLateWrite: true, DeleteSegments: 2},
	} {
		o.SegmentBytes, o.BatchBytes, o.TotalBytes, o.Keyed = seg, 1024, 7*seg, true
		st, err := gen.WriteLog(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		second, _ := strconv.ParseInt(st.Segments[1][:20], 10, 64)
		positions := []int64{st.LogStartOffset + 1, second - 1, second, st.NextOffset - 1, st.NextOffset, st.NextOffset + 5}
		if st.HangingFirstOffset >= 0 {
			positions = append(positions, st.HangingFirstOffset, st.HangingFirstOffset+1)
		}
		for i := range 6 {
			positions = append(positions, second+(st.NextOffset-second)*int64(i)/6+int64(i%3))
		}
		for i, pos := range positions {
			args := append([]string{"--from", fmt.Sprint(pos)}, decideOptions[i%len(decideOptions)]...)
			what := fmt.Sprintf("seed %d, %v", o.Seed, args)
			text := decideOK(t, append(args, st.Dir)...)
			full := decideOK(t, append(args, "--full-replay", st.Dir)...)
			if uncommented(text) != uncommented(full) {
				t.Fatalf("%s: text differs from --full-replay:\n%s\nfull replay:\n%s", what, text, full)
			}
			if !strings.Contains(uncommented(text), "before_position: below the fetch position "+fmt.Sprint(pos)) {
				t.Errorf("%s: no before_position line:\n%s", what, text)
			}
			nd := decideOK(t, append(args, "--format", "ndjson", st.Dir)...)
			ndFull := decideOK(t, append(args, "--format", "ndjson", "--full-replay", st.Dir)...)
			if nd != ndFull {
				t.Fatalf("%s: NDJSON differs from --full-replay:\n%s\nfull replay:\n%s", what, nd, ndFull)
			}
			if first, _, _ := strings.Cut(nd, "\n"); !strings.Contains(first, fmt.Sprintf(`"from":%d,"to":%d,"decision":"before_position"`, st.LogStartOffset, min(pos, st.NextOffset)-1)) {
				t.Errorf("%s: first NDJSON line %s", what, first)
			}
			runs++
			read := regexp.MustCompile(`# read: (.*)`).FindStringSubmatch(text)
			if read == nil {
				t.Fatalf("%s: no read: line:\n%s", what, text)
			}
			if m := regexp.MustCompile(`seeded from (\d{20})\.snapshot`).FindStringSubmatch(read[1]); m != nil {
				seeded++
				// The transactions open at the position are named
				// with their first offsets: the seed is at or below it.
				if off, _ := strconv.ParseInt(m[1], 10, 64); off > pos {
					t.Errorf("%s: seeded from %s.snapshot, past the position", what, m[1])
				}
				if !strings.Contains(text, "batches read (from offset") {
					t.Errorf("%s: the header does not say the batches counted are those read:\n%s", what, text)
				}
			} else if !strings.Contains(read[1], "is in the first segment, so every segment is read") && !strings.HasSuffix(read[1], fmt.Sprintf("no producer snapshot at or below the position %d", pos)) {
				// Only a position below every snapshot, or a transaction
				// open at the snapshot that began in the first segment,
				// makes it read everything.
				t.Errorf("%s: read every segment: %s", what, read[1])
			}
		}
	}
	if seeded < runs/2 {
		t.Errorf("%d of %d runs read from a snapshot", seeded, runs)
	}
	t.Logf("%d of %d runs read from a snapshot", seeded, runs)
}

// TestDecideCountsRangeFromSnapshot: `server decide --counts --range F-T`
// of a partition directory reads it from a producer snapshot at or below F
// and prints, in text and NDJSON, exactly what --full-replay prints, for
// consumers at the log start, inside the range and past it, under each
// isolation and consumer's rules; --counts of the whole partition reads
// every segment as before.
func TestDecideCountsRangeFromSnapshot(t *testing.T) {
	const seg = 64 << 10
	runs, nonzero, seeded := 0, 0, 0
	for _, o := range []gen.LogOptions{
		{Seed: 5, HangingFrom: seg / 2},
		{Seed: 6, HangingFrom: 3 * seg},
		{Seed: 7, OldTxn: true, OldTxnLateWrite: true, DeleteSegments: 2},
	} {
		o.SegmentBytes, o.BatchBytes, o.TotalBytes, o.Keyed = seg, 1024, 6*seg, true
		st, err := gen.WriteLog(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		fourth, _ := strconv.ParseInt(st.Segments[3][:20], 10, 64)
		ranges := [][2]int64{
			{st.LogStartOffset, st.NextOffset - 1},
			{fourth - 3, fourth + 40},
			{st.NextOffset - 70, st.NextOffset + 10},
			{st.NextOffset + 1, st.NextOffset + 5},
		}
		if st.HangingFirstOffset >= 0 {
			ranges = append(ranges, [2]int64{st.HangingFirstOffset - 2, st.HangingFirstOffset + 30})
		}
		for i, r := range ranges {
			for j, from := range []string{"-1", fmt.Sprint(r[0] + 5), fmt.Sprint(r[1] + 3)} {
				args := append([]string{"--counts", "--range", fmt.Sprintf("%d-%d", r[0], r[1]), "--from", from}, decideOptions[(i+j)%len(decideOptions)]...)
				for _, format := range []string{"text", "ndjson"} {
					a := append(args, "--format", format)
					got, want := decideOK(t, append(a, st.Dir)...), decideOK(t, append(a, "--full-replay", st.Dir)...)
					if uncommented(got) != want {
						t.Fatalf("seed %d, %v: differs from --full-replay:\n%s\nfull replay:\n%s", o.Seed, a, got, want)
					}
					runs++
					// The text says what was read: from a snapshot at
					// or below the range, when one is.
					if format == "text" {
						read := regexp.MustCompile(`# read: (.*)`).FindStringSubmatch(got)
						if read == nil {
							t.Fatalf("seed %d, %v: no read: line:\n%s", o.Seed, a, got)
						}
						if m := regexp.MustCompile(`seeded from (\d{20})\.snapshot`).FindStringSubmatch(read[1]); m != nil {
							seeded++
							if off, _ := strconv.ParseInt(m[1], 10, 64); off > r[0] {
								t.Errorf("seed %d, %v: seeded from %s.snapshot, past the range", o.Seed, a, m[1])
							}
						}
					}
					if format == "ndjson" && !strings.Contains(got, `"records":0}`) {
						nonzero++
					}
				}
			}
		}
	}
	t.Logf("%d runs, %d counting records, %d text runs from a snapshot", runs, nonzero, seeded)
	if nonzero < runs/4 || seeded < runs/6 {
		t.Errorf("%d of %d NDJSON runs count a record, %d of %d text runs read from a snapshot", nonzero, runs/2, seeded, runs/2)
	}
}

// uncommented leaves out the text's # lines: the header counts what was
// read, and the read: line says what.
func uncommented(out string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if !strings.HasPrefix(l, "#") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// decideOptions are the consumers the decide tests rotate through: the
// Java rules at both isolation levels, librdkafka's, franz-go's with small
// fetches, and the clients that depart from Kafka's rule.
var decideOptions = [][]string{
	{},
	{"--isolation", "read_uncommitted"},
	{"--variant", "librdkafka"},
	{"--variant", "franz-go", "--max-bytes", "3000"},
	{"--variant", "kafkajs", "--max-bytes", "3000"},
	{"--variant", "kafka-go"},
}

// decideOK runs `server decide args...` and returns its stdout, failing
// the test on any other exit than success.
func decideOK(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runArgs(t, append([]string{"decide"}, args...)...)
	if code != exitOK {
		t.Fatalf("decide %v: exit %d\n%s", args, code, errOut)
	}
	return out
}
