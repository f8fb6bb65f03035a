package segsum

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/txnscope/txnscope/internal/testfixture"
)

// writeScenario builds a scenario into a new log dir and returns the
// partition directory and the segments' base offsets.
func writeScenario(t *testing.T, text string) (string, []int64) {
	t.Helper()
	logDir, b := testfixture.WriteScenario(t, text, "t.txn")
	var bases []int64
	for _, s := range b.Log.Segments {
		bases = append(bases, s.BaseOffset)
	}
	return filepath.Join(logDir, b.Dir), bases
}

// emptiedScenario has five segments with holes at their heads and tails
// and a transaction of a from the first to the last.
const emptiedScenario = `topic e
producer a transactional
plain 2
begin a
send a
gap 2
roll
plain 3
gap 1
roll
gap 2
plain
roll
send a
plain
gap 3
roll
abort a
plain
`

// TestEmptiedSegmentsEqualFullPass: segments whose every batch the cleaner
// removed (their .log left empty) end no batch: a full pass's gap runs
// from the last batch before them to the next one, labelled a segment
// boundary, and its consumer enters the next segment at that last batch's
// next offset. The windows decide as it does, whichever segments are
// emptied, the first and the last included. Before, a window started at
// the emptied segment's base offset: the hole's offsets below it were
// decided by no window, and the fetch offsets after it differed.
func TestEmptiedSegmentsEqualFullPass(t *testing.T) {
	for _, empty := range [][]int{{1}, {1, 2}, {3}, {1, 3}, {0}, {0, 1}, {4}, {0, 1, 2, 3}, {3, 4}, {0, 2, 4}} {
		t.Run(fmt.Sprint(empty), func(t *testing.T) {
			dir, bases := writeScenario(t, emptiedScenario)
			if len(bases) != 5 {
				t.Fatalf("%d segments, the scenario has 5", len(bases))
			}
			for _, k := range empty {
				for _, ext := range []string{".log", ".index", ".timeindex"} {
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d%s", bases[k], ext)), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if d := differ(t, dir, 3); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// TestLogStartInHoleEqualFullPass: a log start moved (DeleteRecords) into
// the hole at a segment's cleaned tail: the gap from it to the next
// segment's first batch follows a batch of an earlier segment, and a full
// pass labels it a segment boundary; so does the window (it labelled it a
// gap before the first batch, having matched the gap's start against the
// earlier batch's next offset, below the log start). Found by
// FuzzWindowsEqualFullPass (seed 364419).
func TestLogStartInHoleEqualFullPass(t *testing.T) {
	dir, _ := writeScenario(t, `topic h
producer a transactional
plain 2
begin a
send a
gap 4
roll
plain
commit a
roll
plain
retain 5
`)
	if d := differ(t, dir, 5); d != "" {
		t.Fatal(d)
	}
}
