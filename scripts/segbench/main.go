// Command segbench times the timeline of a large partition drawn segment
// by segment (package segsum) against loading it whole, in one run on one
// generated partition, and prints the figures as ratios to that baseline:
//
//   - full: loader.OpenPartitionContext, txnindex.Build and one pass of
//     decisions (what a page of a fully loaded partition costs before its
//     first paint);
//   - cold: segsum.Open with an empty summary cache, the overview (every
//     segment summarised: what the timeline draws at "fit"), then the last
//     segment's window (the first view zoomed in on the tail);
//   - warm: the same with the summaries in the cache file (a restarted
//     server): the overview is the first paint; then a pan across the
//     boundary of the last two segments after both were visited, and a
//     sweep across every boundary under -max-memory.
//
// Each mode runs in its own process, so its peak RSS is its own. Both sides
// read headers only (loader.HeaderScanOptions), as serve's tail scans and
// segment routes do. The partition is written with gen.WriteLog (genlog's
// writer) into the system temp dir and removed afterwards unless -keep.
//
//	go run ./scripts/segbench -total-bytes 17179869184 -max-memory 2147483648
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/txnscope/txnscope/api"
	"github.com/txnscope/txnscope/loader"
	"github.com/txnscope/txnscope/loader/segsum"
	"github.com/txnscope/txnscope/scenario/gen"
	"github.com/txnscope/txnscope/txnindex"
	"github.com/txnscope/txnscope/view"
)

type result struct {
	Mode       string  `json:"mode"`
	OpenMS     float64 `json:"open_ms"`   // full: load+build+decide; cold/warm: the overview (first paint at fit)
	TailMS     float64 `json:"tail_ms"`   // cold/warm: then the last segment's window (first zoomed-in view)
	Segments   int     `json:"segments"`  // segments of the partition
	Decisions  int     `json:"decisions"` // full: every decision; warm/cold: those of the last segment
	FirstVisit float64 `json:"first_visit_ms,omitempty"`
	PanMedian  float64 `json:"pan_median_ms,omitempty"`
	PanMax     float64 `json:"pan_max_ms,omitempty"`
	HTTPMedian float64 `json:"http_median_ms,omitempty"` // the same pans as GET …/window over loopback
	HTTPMax    float64 `json:"http_max_ms,omitempty"`
	HTTPMaxAt  int     `json:"http_max_at,omitempty"` // which pan (1-based) took HTTPMax: the first opens the connection
	HTTPLines  int     `json:"http_lines,omitempty"`
	SweepMS    float64 `json:"sweep_ms,omitempty"`
	LRUPeak    int64   `json:"lru_peak,omitempty"`
	MaxRSS     int64   `json:"max_rss"` // bytes
}

func main() {
	tmp := os.TempDir()
	dir := flag.String("dir", filepath.Join(tmp, "txnscope-segbench"), "log dir to generate into (inside the system temp dir)")
	total := flag.Int64("total-bytes", 16<<30, "bytes of .log data")
	batch := flag.Int("batch-bytes", 1024, "bytes of each data batch")
	segBytes := flag.Int64("segment-bytes", 1<<30, "segment size (log.segment.bytes)")
	maxMem := flag.Int64("max-memory", 2<<30, "segsum's --max-memory for the cold and warm modes")
	keep := flag.Bool("keep", false, "keep the generated partition")
	mode := flag.String("mode", "", "internal: the mode a child process runs")
	part := flag.String("part", "", "internal: the partition directory")
	cache := flag.String("cache", "", "internal: the summary cache directory")
	flag.Parse()
	if *mode != "" {
		r, err := child(*mode, *part, *cache, *maxMem)
		if err != nil {
			log.Fatal(err)
		}
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		log.Fatal(err)
	}
	if t, _ := filepath.Abs(tmp); !strings.HasPrefix(abs, t+string(filepath.Separator)) {
		log.Fatalf("segbench: -dir %s is not inside the system temp dir %s", abs, t)
	}
	p := filepath.Join(abs, "bench-0")
	if _, err := os.Stat(p); err != nil {
		start := time.Now()
		st, err := gen.WriteLog(abs, gen.LogOptions{BatchBytes: *batch, TotalBytes: *total, SegmentBytes: *segBytes})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("generated %s: %d segments, %d bytes, %d batches in %s\n", st.Dir, len(st.Segments), st.Bytes, st.Batches, time.Since(start).Round(time.Second))
	}
	if !*keep {
		defer os.RemoveAll(abs)
	}
	cacheDir, err := os.MkdirTemp(tmp, "txnscope-segbench-cache")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(cacheDir)
	var rs []result
	for _, m := range []string{"full", "cold", "warm"} {
		cmd := exec.Command(os.Args[0], "-mode", m, "-part", p, "-cache", cacheDir, "-max-memory", fmt.Sprint(*maxMem))
		cmd.Stderr = os.Stderr // GODEBUG=gctrace=1 and the like reach the terminal
		out, err := cmd.Output()
		if err != nil {
			log.Fatalf("%s: %v", m, err)
		}
		var r result
		if err := json.Unmarshal(out, &r); err != nil {
			log.Fatalf("%s: %v: %s", m, err, out)
		}
		rs = append(rs, r)
	}
	full, cold, warm := rs[0], rs[1], rs[2]
	ld, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("partition: %d segments, %.2f GiB of .log, batches of %d B; --max-memory %.2f GiB; load average %s",
		full.Segments, float64(*total)/(1<<30), *batch, float64(*maxMem)/(1<<30), ld)
	fmt.Printf("full load (baseline): %.0f ms to the first paint, %d decisions, peak RSS %.2f GiB\n", full.OpenMS, full.Decisions, gib(full.MaxRSS))
	fmt.Printf("segments, cold cache: overview (every segment summarised) %.0f ms = %.2f × full; with the last segment's window %.0f ms = %.2f × full; peak RSS %.2f GiB = %.2f × --max-memory\n",
		cold.OpenMS, cold.OpenMS/full.OpenMS, cold.TailMS, cold.TailMS/full.OpenMS, gib(cold.MaxRSS), float64(cold.MaxRSS)/float64(*maxMem))
	fmt.Printf("segments, warm cache: first paint (the overview, from the cached summaries) %.1f ms = %.5f × full; with the last segment's window %.0f ms = %.3f × full\n",
		warm.OpenMS, warm.OpenMS/full.OpenMS, warm.TailMS, warm.TailMS/full.OpenMS)
	fmt.Printf("  first visit of a segment %.0f ms = %.3f × full; pan across a boundary after it: median %.2f ms, max %.2f ms = %.5f × full\n",
		warm.FirstVisit, warm.FirstVisit/full.OpenMS, warm.PanMedian, warm.PanMax, warm.PanMax/full.OpenMS)
	fmt.Printf("  the same pans as GET …/window over loopback (NDJSON of %d decisions each): median %.2f ms, max %.2f ms (the %d. request) = %.5f × full\n",
		warm.HTTPLines, warm.HTTPMedian, warm.HTTPMax, warm.HTTPMaxAt, warm.HTTPMax/full.OpenMS)
	fmt.Printf("  sweep across all %d boundaries: %.0f ms; windows held at most %.2f GiB; peak RSS %.2f GiB = %.2f × --max-memory (full load: %.2f ×)\n",
		warm.Segments-1, warm.SweepMS, gib(warm.LRUPeak), gib(warm.MaxRSS), float64(warm.MaxRSS)/float64(*maxMem), float64(full.MaxRSS)/float64(*maxMem))
}

func gib(n int64) float64 { return float64(n) / (1 << 30) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func maxRSS() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss << 10 // KiB on Linux
}

func child(mode, part, cache string, maxMem int64) (result, error) {
	ctx := context.Background()
	o := txnindex.ConsumeOptions{From: -1, Isolation: txnindex.ReadCommitted, MaxBytes: txnindex.DefaultMaxBytes}
	r := result{Mode: mode}
	start := time.Now()
	if mode == "full" {
		p, err := loader.OpenPartitionContext(ctx, part, loader.HeaderScanOptions)
		if err != nil {
			return r, err
		}
		l := p.Build()
		for range l.Decisions(o) {
			r.Decisions++
		}
		r.OpenMS, r.Segments, r.MaxRSS = ms(time.Since(start)), len(l.Segments), maxRSS()
		return r, nil
	}
	if mode == "cold" {
		if err := os.RemoveAll(cache); err != nil {
			return r, err
		}
	}
	st, err := segsum.Open(part, segsum.Options{Scan: loader.HeaderScanOptions, MaxMemory: maxMem, CacheDir: cache})
	if err != nil {
		return r, err
	}
	ov, err := st.Overview(ctx)
	if err != nil {
		return r, err
	}
	n := len(ov.Segments)
	r.OpenMS = ms(time.Since(start))
	w, err := st.Window(ctx, n-1, o)
	if err != nil {
		return r, err
	}
	r.TailMS, r.Segments, r.Decisions = ms(time.Since(start)), n, w.Len()
	if mode == "warm" && n > 1 {
		b := ov.Segments[n-1].BaseOffset
		t := time.Now()
		if _, err := st.Window(ctx, n-2, o); err != nil {
			return r, err
		}
		r.FirstVisit = ms(time.Since(t))
		// A viewport of 2,000 offsets panned across the boundary in
		// steps of 100, forth and back.
		var pans []float64
		for rep := 0; rep < 5; rep++ {
			for d := int64(-1000); d <= 1000; d += 100 {
				t := time.Now()
				k := 0
				st.Decisions(ctx, b+d-1000, b+d+1000, o, func(*segsum.Window, *txnindex.Decision) bool { k++; return true })
				pans = append(pans, ms(time.Since(t)))
			}
		}
		slices.Sort(pans)
		r.PanMedian, r.PanMax = pans[len(pans)/2], pans[len(pans)-1]
		if r.HTTPMedian, r.HTTPMax, r.HTTPMaxAt, r.HTTPLines, err = httpPans(st, b, o); err != nil {
			return r, err
		}
		t = time.Now()
		for k := 1; k < n; k++ {
			b := ov.Segments[k].BaseOffset
			st.Decisions(ctx, b-1000, b+1000, o, func(*segsum.Window, *txnindex.Decision) bool { return true })
			r.LRUPeak = max(r.LRUPeak, st.MemoryInUse())
		}
		r.SweepMS = ms(time.Since(t))
	}
	r.MaxRSS = maxRSS()
	return r, nil
}

// segmented serves the api's segment routes from one Store, as serve's
// segStores does for every partition directory.
type segmented struct{ st *segsum.Store }

func (s segmented) Overview(ctx context.Context, _, _ string, _ int32) (any, bool, error) {
	v, err := s.st.Overview(ctx)
	return v, true, err
}

func (s segmented) Decisions(ctx context.Context, _, _ string, _ int32, from, to int64, o txnindex.ConsumeOptions,
	f func(*txnindex.Log, *txnindex.Decision) bool) (bool, error) {
	return true, s.st.Decisions(ctx, from, to, o, func(w *segsum.Window, d *txnindex.Decision) bool { return f(w.Log, d) })
}

type noCatalog struct{}

func (noCatalog) Sources() []api.Source                           { return nil }
func (noCatalog) Log(string, string, int32) (*txnindex.Log, bool) { return nil, false }

// httpPans times the pans across the boundary at b as GET …/window
// requests to a server on loopback: the route, its NDJSON encoding and
// the client reading it all.
func httpPans(st *segsum.Store, b int64, o txnindex.ConsumeOptions) (median, worst float64, worstAt, lines int, err error) {
	a := api.New(noCatalog{}, nil, view.NewDiagnoser())
	a.SetSegmented(segmented{st})
	mux := http.NewServeMux()
	mux.Handle("GET /w/{id}/{topic}/{partition}", a.SegmentWindow())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer ln.Close()
	go http.Serve(ln, mux)
	var pans []float64
	for rep := 0; rep < 5; rep++ {
		for d := int64(-1000); d <= 1000; d += 100 {
			t := time.Now()
			resp, err := http.Get(fmt.Sprintf("http://%s/w/s/bench/0?from=%d&to=%d&isolation=%s", ln.Addr(), b+d-1000, b+d+1000, o.Isolation))
			if err != nil {
				return 0, 0, 0, 0, err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				return 0, 0, 0, 0, fmt.Errorf("GET window: %d %v %.200s", resp.StatusCode, err, body)
			}
			pans = append(pans, ms(time.Since(t)))
			lines = bytes.Count(body, []byte("\n"))
		}
	}
	worstAt = 1 + slices.Index(pans, slices.Max(pans))
	slices.Sort(pans)
	return pans[len(pans)/2], pans[len(pans)-1], worstAt, lines, nil
}
