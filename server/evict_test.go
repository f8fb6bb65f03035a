package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/txnscope/txnscope/internal/genlogdir"
	"github.com/txnscope/txnscope/loader/input"
	"github.com/txnscope/txnscope/loader/load"
	"github.com/txnscope/txnscope/loader/logindex"
)

// TestEvictOpenedPartitionsWithinMaxMemory: a log directory whose
// partitions, opened whole, take several times --max-memory is browsed
// partition by partition (each page, its diagnosis panel, the diagnosis,
// counts and decisions the API serves). The partitions opened are kept
// under the budget, least recently used evicted first: the bytes
// accounted never pass it, the heap after a collection stays within it
// and a margin, an evicted partition opened again answers exactly as it
// did, and /metrics counts the evictions.
func TestEvictOpenedPartitionsWithinMaxMemory(t *testing.T) {
	const (
		parts     = 24
		maxMemory = 8 << 20
		budget    = maxMemory / 2 // what the opened partitions and the segment windows hold together
	)
	dir := t.TempDir()
	var stuck []string
	for p := 1; p < parts; p += 5 {
		stuck = append(stuck, fmt.Sprintf("t0-%d", p)) // diagnoses that differ: hanging transactions here and there
	}
	// 2,500 committed transactions a segment: 10,000 batches, about
	// 1.1 MiB opened whole, a partition; 24 of them hold 3.3 times
	// --max-memory, 6.6 times the budget.
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: parts, Batches: 2500, Stuck: stuck}); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Addr, o.Big, o.SummaryCacheDir = "127.0.0.1:0", false, ""
	o.Loads, o.MaxMemory = []string{dir}, maxMemory
	o.Now = func() time.Time { return time.UnixMilli(genlogdir.Start).Add(48 * time.Hour) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	<-s.cat.index("load1").Done() // the ranking's tail scans are not what is measured
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	base := heapAfterGC()
	var peak uint64
	answers := func(p int) string {
		u := fmt.Sprintf("%s/api/v1/sources/load1/partitions/t0/%d", srv.URL, p)
		h := sha256.New()
		for _, path := range []string{
			fmt.Sprintf("%s/sources/load1/partitions/t0/%d/diagnosis?now=log", srv.URL, p),
			u + "/diagnosis?now=log", u + "/counts", u + "/decisions",
		} {
			fmt.Fprintf(h, "%s\n%s\n", path[len(srv.URL):], getPage(t, path))
		}
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	first := make([]string, parts)
	check := func(step string) {
		t.Helper()
		// The margin is what the server keeps beside what the budget
		// accounts, none of it a partition's log: the diagnoses cached
		// (view's cache, by weak pointer), the segment summaries of
		// the pages' strips, the index's rows and the HTTP buffers,
		// 0.6 MiB here. A partition kept alive past its eviction is
		// 1.1 MiB: one fails the second check.
		const margin = 1 << 20
		h := heapAfterGC()
		peak = max(peak, h)
		grown := int64(h) - int64(base)
		if grown > budget+margin {
			t.Fatalf("%s: the heap after a collection grew by %d bytes, over the budget %d and the margin %d", step, grown, budget, margin)
		}
		m := scrape(t, srv.URL+"/metrics")
		held, ok := m["txnscope_opened_partition_bytes"]
		if !ok {
			t.Fatalf("%s: /metrics has no txnscope_opened_partition_bytes", step)
		}
		if held > budget {
			t.Fatalf("%s: the opened partitions hold %.0f bytes, over the budget %d", step, held, budget)
		}
		// What the budget accounts: the partitions opened and the
		// stream's kept encodings (no segment windows here).
		if accounted := int64(held) + s.api.CacheBytes(); grown > accounted+margin {
			t.Fatalf("%s: the heap after a collection grew by %d bytes, more than the %d the budget accounts and the margin %d: something keeps an evicted partition alive",
				step, grown, accounted, margin)
		}
	}
	defer func() {
		t.Logf("%d partitions under --max-memory %d: the heap after a collection at most %d bytes above the %d the server started with",
			parts, maxMemory, int64(peak)-int64(base), base)
	}()
	for p := range parts {
		getPage(t, fmt.Sprintf("%s/sources/load1/partitions/t0/%d", srv.URL, p))
		first[p] = answers(p)
		check(fmt.Sprintf("t0-%d opened", p))
	}
	// Every partition again, in the same order: each was evicted since,
	// and answers as it did.
	for p := range parts {
		if got := answers(p); got != first[p] {
			t.Errorf("t0-%d reopened answers differently", p)
		}
		check(fmt.Sprintf("t0-%d reopened", p))
	}
	// The budget (4 MiB) holds at most 3 of them (1.1 MiB each) beside
	// the encodings, fewer while a load reserves twice its estimate: the
	// others were evicted once in each pass.
	if ev := scrape(t, srv.URL+"/metrics")["txnscope_opened_partition_evictions_total"]; ev < 2*(parts-3) {
		t.Errorf("evictions counted: %.0f, want at least %d", ev, 2*(parts-3))
	}
}

// heapAfterGC is the live heap: what a collection leaves.
func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// scrape reads the unlabelled series of a Prometheus text page.
func scrape(t *testing.T, u string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(getPage(t, u)))
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[name] = f
		}
	}
	return out
}

// evictServer serves a log directory of parts partitions of genlogdir's
// shape, 2,500 transactions a segment (about 1.1 MiB opened whole, 1.3 MiB
// by the estimate made before), under maxMemory; set, if given, changes
// the options first (the directory is Loads[0]).
func evictServer(t *testing.T, parts int, maxMemory int64, set func(*Options)) (*Server, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	if _, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: parts, Batches: 2500}); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Addr, o.Big, o.SummaryCacheDir = "127.0.0.1:0", false, ""
	o.Loads, o.MaxMemory = []string{dir}, maxMemory
	if set != nil {
		set(&o)
	}
	s, err := New(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	<-s.cat.index("load1").Done()
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, srv
}

// TestEvictKeepsStreamedPartition: a partition whose stream is open is
// evicted from the catalog as any other, and the stream goes on from the
// log it holds: a change of options gets a new generation with every
// decision, computed for it alone (api's caches forgot the log).
func TestEvictKeepsStreamedPartition(t *testing.T) {
	s, srv := evictServer(t, 4, 8<<20, nil)
	conn, meta := streamMeta(t, srv, "/sources/load1/partitions/t0/0")
	if conn == nil {
		t.FailNow()
	}
	defer conn.Close()
	for p := 1; p < 4; p++ {
		getPage(t, fmt.Sprintf("%s/sources/load1/partitions/t0/%d", srv.URL, p))
	}
	if s.cat.find("load1", "t0", 0).built() != nil {
		t.Fatalf("t0-0 was not evicted")
	}
	if err := conn.WriteJSON(map[string]any{"type": "options", "isolation": "read_uncommitted"}); err != nil {
		t.Fatal(err)
	}
	next, err := nextMeta(conn)
	if err != nil {
		t.Fatalf("the stream of the evicted partition: %v", err)
	}
	if next.Generation <= meta.Generation || next.Totals != meta.Totals {
		t.Errorf("new generation %d with %+v, want > %d with %+v", next.Generation, next.Totals, meta.Generation, meta.Totals)
	}
	for {
		typ, b, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("before the generation's end: %v", err)
		}
		var m map[string]any
		if typ == websocket.TextMessage && json.Unmarshal(b, &m) == nil && m["type"] == "done" && m["generation"] == float64(next.Generation) {
			if m["decisions"] != float64(next.Totals.Decisions) {
				t.Errorf("done with %v decisions, want %d", m["decisions"], next.Totals.Decisions)
			}
			break
		}
	}
}

// TestEvictRefusesPartitionOverItsShare: a partition whose whole load
// would take more than a quarter of --max-memory is not opened whole; its
// page is drawn one segment at a time and says why, naming it, the
// estimate and the budget. Its tail is kept within the budget, unless it
// alone is over the quarter too (t0-0, whose producer snapshots are gone:
// every segment is replayed), which is then scanned for each request and
// kept by none.
func TestEvictRefusesPartitionOverItsShare(t *testing.T) {
	const maxMemory = 4 << 20 // a partition may take 1 MiB; these take 1.3 MiB
	s, srv := evictServer(t, 2, maxMemory, func(o *Options) {
		snaps, _ := filepath.Glob(filepath.Join(o.Loads[0], "t0-0", "*.snapshot"))
		for _, f := range snaps {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	})
	for p := range 2 {
		page := getPage(t, fmt.Sprintf("%s/sources/load1/partitions/t0/%d", srv.URL, p))
		note := testidText(page, "segment-note")
		if !regexp.MustCompile(fmt.Sprintf(`^t0-%d holds \d+\.\d [KM]iB of segments, whose whole load would take about 1\.\d MiB, more than one partition opened whole may take \(1\.0 MiB, a quarter of --max-memory 4\.0 MiB\): not opened in full, so it is drawn one segment at a time`, p)).MatchString(note) {
			t.Errorf("t0-%d's note: %q", p, note)
		}
	}
	m := scrape(t, srv.URL+"/metrics")
	if m["txnscope_memory_budget_bytes"] != maxMemory/2 {
		t.Errorf("budget %.0f, want %d", m["txnscope_memory_budget_bytes"], maxMemory/2)
	}
	b := s.cat.mem
	// The window a page needs is kept even when it alone is more than
	// what is left beside the rest (segsum's Reserve evicts until it fits
	// or no other window is left): past the budget, one window at most.
	held := b.held.Load()
	if held != int64(m["txnscope_opened_partition_bytes"]) || held+b.windows()+b.encodings() > b.budget && b.windowCount() > 1 {
		t.Errorf("held %d (%.0f on /metrics), windows %d, encodings %d: over the budget %d", held, m["txnscope_opened_partition_bytes"], b.windows(), b.encodings(), b.budget)
	}
	lz := s.cat.find("load1", "t0", 0).lazy
	b.mu.Lock()
	lz.mu.Lock()
	tail, held := lz.tail != nil || lz.tailDone, lz.held
	lz.mu.Unlock()
	b.mu.Unlock()
	if tail || held != 0 {
		t.Errorf("t0-0's tail, over the quarter, is kept (%d bytes accounted)", held)
	}
}

// TestEvictWaitsForLoadsInFlight: a load reserves twice its estimate
// before it reads a byte (what is live while it reads); while the loads in
// flight hold the room another needs, it waits for them, and a partition
// being loaded is never evicted. The budget (3 MiB) holds one reservation
// of 2.6 MiB, not two.
func TestEvictWaitsForLoadsInFlight(t *testing.T) {
	var mu sync.Mutex
	release := map[string]chan struct{}{"t0-0": make(chan struct{}), "t0-1": make(chan struct{})}
	var started []string
	open := func(ctx context.Context, d *load.LogDir, e *logindex.Entry) (*input.Contents, error) {
		mu.Lock()
		started = append(started, e.Name)
		mu.Unlock()
		<-release[e.Name]
		return d.Open(ctx, e)
	}
	s, srv := evictServer(t, 2, 6<<20, func(o *Options) { o.OpenFull = open })
	releaseAll := func() {
		for _, c := range release {
			select {
			case <-c:
			default:
				close(c)
			}
		}
	}
	t.Cleanup(releaseAll) // before the server's: no load left hanging
	startedNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(started)
	}
	var wg sync.WaitGroup
	for p := range 2 {
		wg.Go(func() { getPage(t, fmt.Sprintf("%s/sources/load1/partitions/t0/%d", srv.URL, p)) })
		for len(startedNow()) < 1 {
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(100 * time.Millisecond) // the second load's admission, were it not waiting
	if got := startedNow(); len(got) != 1 {
		t.Fatalf("loads started while one is in flight: %v, want one", got)
	}
	close(release[startedNow()[0]])
	for len(startedNow()) < 2 {
		time.Sleep(time.Millisecond)
	}
	releaseAll()
	wg.Wait()
	if held := s.cat.mem.held.Load(); held > s.cat.mem.budget {
		t.Errorf("held %d, over the budget %d", held, s.cat.mem.budget)
	}
}

// TestEvictWindowsShareTheBudget: the segment windows and the partitions
// opened whole share one budget. With the budget full of opened partitions
// and kept encodings, scanning a partition's segment windows evicts opened
// partitions, least recently used first, until all three fit.
func TestEvictWindowsShareTheBudget(t *testing.T) {
	s, srv := evictServer(t, 6, 16<<20, nil)
	b := s.cat.mem
	for p := range 5 {
		getPage(t, fmt.Sprintf("%s/sources/load1/partitions/t0/%d", srv.URL, p))
	}
	full := b.held.Load() + b.encodingBytes() // the encodings are set aside at their cap
	if full < b.budget-2<<20 || b.windows() != 0 {
		t.Fatalf("before the windows: opened %d, encodings %d, windows %d; want the budget %d nearly full", b.held.Load(), b.encodings(), b.windows(), b.budget)
	}
	before := b.evictions.Load()
	getPage(t, srv.URL+"/api/v1/sources/load1/partitions/t0/5/window?from=0&to=20000")
	held, enc, win := b.held.Load(), b.encodings(), b.windows()
	if win == 0 || held+enc+win > b.budget || b.evictions.Load() == before {
		t.Errorf("after the windows: opened %d, encodings %d, windows %d, evictions %d (%d before); want windows, all within %d, and partitions evicted",
			held, enc, win, b.evictions.Load(), before, b.budget)
	}
}
