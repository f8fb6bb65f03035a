package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/internal/testfixture"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/txnindex"
)

// compactedScenario is a compacted partition: the cleaner's gaps at
// segments' tails (the next segment begins after a hole), at their heads
// (the base offset is below the first batch), and inside them, with
// transactions (v1 and v2) open across the holes and boundaries.
const compactedScenario = `topic compacted
producer a transactional
producer b transactional tv2
plain 2
begin a
send a 2
begin b
send b
gap 3
roll
gap 2
send a
send b 2
gap 4
abort a
plain
gap 2
roll
send b
commit b
begin a
send a 3
gap 5
roll
gap 1
plain 2
abort a
gap 3
roll
begin b
send b
gap 2
roll
gap 2
commit b
plain
`

// TestSegmentWindowGapsEqualStream: on a compacted partition, …/window
// answers byte for byte what …/decisions answers from the fully loaded
// log for every single offset (each hole included, at segment tails and
// heads), across every segment boundary, and for the whole log, for both
// isolations: the gap at a segment's cleaned tail is labelled the same
// (gap_segment_boundary) by both.
func TestSegmentWindowGapsEqualStream(t *testing.T) {
	logDir, b := testfixture.WriteScenario(t, compactedScenario, "compacted.txn")
	dir := filepath.Join(logDir, b.Dir)
	boundary := 0
	for _, g := range b.Log.Gaps {
		if g.Cause == txnindex.GapSegmentBoundary {
			boundary++
		}
	}
	if boundary < 3 || len(b.Log.Segments) < 5 {
		t.Fatalf("%d gaps at segment boundaries in %d segments; the scenario wants several", boundary, len(b.Log.Segments))
	}
	ld, err := input.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cat := diagnosing(&catalog{})
	cat.add("load1", dir, ld)
	a := api.New(apiCatalog{cat}, nil, cat.diags)
	a.SetSegmented(newSegStores(cat, 1<<20, t.TempDir()))
	srv := httptest.NewServer(routes(cat, a))
	defer srv.Close()
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(srv.URL + "/api/v1/sources/load1/partitions/compacted/0/" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	leo := b.Log.LogEndOffset
	ranges := [][2]int64{{0, leo}}
	for off := range leo + 1 {
		ranges = append(ranges, [2]int64{off, off})
	}
	for _, s := range b.Log.Segments[1:] {
		ranges = append(ranges, [2]int64{max(s.BaseOffset-6, 0), s.BaseOffset + 6})
	}
	gapLines := 0
	for _, iso := range []string{"read_committed", "read_uncommitted"} {
		for _, r := range ranges {
			q := fmt.Sprintf("?from=%d&to=%d&isolation=%s", r[0], r[1], iso)
			w, d := get("window"+q), get("decisions"+q)
			if w != d {
				t.Fatalf("%s [%d,%d]:\nwindow    %s\ndecisions %s", iso, r[0], r[1], w, d)
			}
			if r[0] == 0 && r[1] == leo {
				gapLines += strings.Count(w, `"gap_segment_boundary"`)
			}
		}
	}
	if gapLines < 2*boundary {
		t.Fatalf("%d gap_segment_boundary decisions in the two passes, the log has %d such gaps", gapLines, boundary)
	}
}
