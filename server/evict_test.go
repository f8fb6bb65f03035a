package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/genlogdir"
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
		// The margin is what the server keeps beside the opened
		// partitions and is not theirs to account: the decision
		// stream's encodings of the partitions still cached (api's
		// streamCache, a few hundred KiB each here), the diagnoses
		// cached, the segment summaries of the pages' strips and the
		// HTTP buffers. A partition kept past its eviction is 1.1 MiB:
		// two of them fail.
		const margin = 2 << 20
		h := heapAfterGC()
		peak = max(peak, h)
		if h > base+budget+margin {
			t.Fatalf("%s: the heap after a collection grew by %d bytes, over the budget %d and the margin %d", step, int64(h)-int64(base), budget, margin)
		}
		m := scrape(t, srv.URL+"/metrics")
		held, ok := m["txnscope_opened_partition_bytes"]
		if !ok {
			t.Fatalf("%s: /metrics has no txnscope_opened_partition_bytes", step)
		}
		if held > budget {
			t.Fatalf("%s: the opened partitions hold %.0f bytes, over the budget %d", step, held, budget)
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
	// Every partition again, in the same order: each was evicted since
	// (the budget holds 3), and answers as it did.
	for p := range parts {
		if got := answers(p); got != first[p] {
			t.Errorf("t0-%d reopened answers differently", p)
		}
		check(fmt.Sprintf("t0-%d reopened", p))
	}
	// The budget holds at most 4 of them (4 MiB, 1.1 MiB each): the
	// others were evicted once in each pass.
	if ev := scrape(t, srv.URL+"/metrics")["txnscope_opened_partition_evictions_total"]; ev < 2*parts-2*4 {
		t.Errorf("evictions counted: %.0f, want at least %d", ev, 2*parts-2*4)
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
