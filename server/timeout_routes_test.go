package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/scenario/gen"
)

// TestRequestTimeoutLongRoutes: the routes whose work grows with the log
// (a segment window's scan, the counts of a segment's window or of the
// whole log and a range of decisions, which need a pass of the algorithm
// over it, a segment's overview and diagnosis) answer 503 naming
// --request-timeout once it passes. They answered 200 after their whole
// pass (7 s with a 2 s timeout), a 500 or a 404 for the segment scan that
// stopped at the deadline.
func TestRequestTimeoutLongRoutes(t *testing.T) {
	// One 96 MiB segment of 256-byte batches: about 370,000 batches,
	// a pass of several hundred milliseconds here.
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: 96 << 20, BatchBytes: 256, TotalBytes: 96 << 20, HangingFrom: -1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	const d = 10 * time.Millisecond
	end := fmt.Sprint(st.NextOffset)
	tests := []struct{ name, path string }{
		{"window", "window?from=0&to=" + end},
		{"segment_counts", "segments/0/counts?from=0&to=" + end},
		{"counts", "counts?from=0&to=" + end},
		{"decisions_range", "decisions?from=0&to=100"},
		{"segment_overview", "segments"},
		{"segment_diagnosis", "segments/0/diagnosis"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A fresh load and server: nothing computed or cached yet
			// (a pass cut by an earlier deadline runs on in the
			// background and would be shared).
			ld, err := input.Open(st.Dir)
			if err != nil {
				t.Fatal(err)
			}
			cat := diagnosing(&catalog{})
			cat.add("load1", st.Dir, ld)
			a := api.New(apiCatalog{cat}, nil, cat.diags)
			a.SetSegmented(newSegStores(cat, 4<<30, t.TempDir()))
			srv := httptest.NewServer(routesWith(cat, a, routeOptions{sec: &security{requestTimeout: d}}))
			defer srv.Close()
			t0 := time.Now()
			resp, err := http.Get(srv.URL + "/api/v1/sources/load1/partitions/bench/0/" + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(t0)
			t.Logf("%s after %s", resp.Status, took)
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "--request-timeout 10ms") {
				t.Errorf("%s after %s: %.200s; want 503 naming --request-timeout", resp.Status, took, body)
			}
		})
	}
}
