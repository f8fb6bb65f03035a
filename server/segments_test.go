package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/scenario/gen"
)

// TestSegmentRoutes: a partition directory loaded with serve --load is also
// drawn segment by segment. …/segments lists every segment from its
// summary; …/window of offset ranges across segment boundaries answers,
// byte for byte, what …/decisions answers from the fully loaded log, for
// two consumers; the summaries go to the cache directory, not the log dir.
func TestSegmentRoutes(t *testing.T) {
	st, err := gen.WriteLog(t.TempDir(), gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 400 << 10, HangingFrom: -1, Seed: 21})
	if err != nil {
		t.Fatal(err)
	}
	ld, err := input.Open(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	cat := diagnosing(&catalog{})
	cat.add("load1", st.Dir, ld)
	a := api.New(apiCatalog{cat}, nil, cat.diags)
	cacheDir := t.TempDir()
	a.SetSegmented(newSegStores(cat, 1<<20, cacheDir))
	srv := httptest.NewServer(routes(cat, a))
	defer srv.Close()
	base := srv.URL + "/api/v1/sources/load1/partitions/bench/0/"
	get := func(path string) string {
		t.Helper()
		return getPage(t, base+path)
	}
	var ov segsum.Overview
	if err := json.Unmarshal([]byte(get("segments")), &ov); err != nil {
		t.Fatal(err)
	}
	if len(ov.Segments) != len(st.Segments) || ov.LogEndOffset != st.NextOffset {
		t.Fatalf("overview: %d segments ending at %d, generated %d ending at %d", len(ov.Segments), ov.LogEndOffset, len(st.Segments), st.NextOffset)
	}
	for _, iso := range []string{"read_committed", "read_uncommitted"} {
		for k := 1; k < len(ov.Segments); k += 3 {
			b := ov.Segments[k].BaseOffset
			q := fmt.Sprintf("?from=%d&to=%d&isolation=%s", b-40, b+40, iso)
			w, d := get("window"+q), get("decisions"+q)
			if w != d || len(w) == 0 {
				i := 0
				for i < len(w) && i < len(d) && w[i] == d[i] {
					i++
				}
				t.Fatalf("%s around offset %d: from byte %d:\nwindow    %.300s\ndecisions %.300s", iso, b, i, w[max(i-100, 0):], d[max(i-100, 0):])
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(cacheDir, "segsum-*.json")); len(m) != 1 {
		t.Fatalf("cache files %q", m)
	}
	if m, _ := filepath.Glob(filepath.Join(st.Dir, "*.json")); len(m) != 0 {
		t.Fatalf("written in the log dir: %q", m)
	}
	if got := get("window?from=0&to=0"); got == "" {
		t.Fatal("no decision at offset 0")
	}
	for path, code := range map[string]int{
		base + "window?from=9&to=3":                                            http.StatusBadRequest,
		base + "window?from=x&to=3":                                            http.StatusBadRequest,
		base + "window?to=3":                                                   http.StatusBadRequest,
		srv.URL + "/api/v1/sources/load1/partitions/bench/7/segments":          http.StatusNotFound,
		srv.URL + "/api/v1/sources/nope/partitions/bench/0/window?from=0&to=1": http.StatusNotFound,
	} {
		resp, err := http.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, code)
		}
	}
}

// TestSegStoresOpenNotGlobal: while one partition directory's Store is
// being opened (stopped in a hook), a request for another partition,
// whose Store is open, is answered: the open does not hold segStores'
// mutex.
func TestSegStoresOpenNotGlobal(t *testing.T) {
	logDir := t.TempDir()
	sts, err := gen.WriteLogDir(logDir, gen.LogOptions{SegmentBytes: 24 << 10, BatchBytes: 512, TotalBytes: 100 << 10, HangingFrom: -1, Seed: 5}, 2)
	if err != nil {
		t.Fatal(err)
	}
	cat := diagnosing(&catalog{})
	for i, st := range sts {
		ld, err := input.Open(st.Dir)
		if err != nil {
			t.Fatal(err)
		}
		cat.add(fmt.Sprintf("p%d", i), st.Dir, ld)
	}
	segs := newSegStores(cat, 1<<20, "")
	if st, err := segs.store("p0", "bench", 0); st == nil || err != nil {
		t.Fatalf("store of p0: %v %v", st, err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	open := segs.open
	segs.open = func(dir string, o segsum.Options) (*segsum.Store, error) {
		if dir == sts[1].Dir {
			close(entered)
			<-release
		}
		return open(dir, o)
	}
	opened := make(chan error, 1)
	go func() {
		_, err := segs.store("p1", "bench", 1)
		opened <- err
	}()
	<-entered
	done := make(chan struct{})
	go func() {
		segs.store("p0", "bench", 0)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // a hang guard, not a timing
		close(release)
		t.Fatal("the store of an open partition waited for another partition's open")
	}
	close(release)
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
}
