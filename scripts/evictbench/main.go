// Command evictbench measures what `serve --load DIR --max-memory M` keeps
// while someone browses every partition of a log directory: it writes the
// directory with internal/genlogdir into the system temp dir (or uses
// -dir), starts the server binary, opens each partition's page, its
// diagnosis panel and its counts in turn (each page also computes the
// stream's encoding, api.Prewarm), and reports the server's peak RSS
// (VmHWM), its RSS and heap at the end, and the memory budget's series.
//
//	go build -o /tmp/txnscope ./cmd/txnscope
//	go run ./scripts/evictbench -server /tmp/txnscope -partitions 60 -batches 25000 -max-memory 134217728
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/txnscope/txnscope/internal/genlogdir"
	"github.com/txnscope/txnscope/scripts/internal/benchproc"
)

func main() {
	server := flag.String("server", "", "the server binary (go build -o /tmp/txnscope ./cmd/txnscope)")
	dir := flag.String("dir", "", "log directory to serve, written there (and kept) if it does not exist; default: a new one in the temp dir, removed at the end")
	parts := flag.Int("partitions", 60, "partitions to generate, in topic t0")
	batches := flag.Int("batches", 25000, "committed transactions per segment (two segments, two batches each)")
	maxMemory := flag.Int64("max-memory", 128<<20, "serve --max-memory, in bytes")
	flag.Parse()
	if err := run(*server, *dir, *parts, *batches, *maxMemory); err != nil {
		fmt.Fprintln(os.Stderr, "evictbench:", err)
		os.Exit(1)
	}
}

func run(server, dir string, parts, batches int, maxMemory int64) error {
	if server == "" {
		return fmt.Errorf("-server is required")
	}
	_, statErr := os.Stat(dir)
	if dir == "" || os.IsNotExist(statErr) {
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "txnscope-evictbench-"); err != nil {
				return err
			}
			defer os.RemoveAll(dir)
		}
		st, err := genlogdir.Write(dir, genlogdir.Options{Topics: 1, Partitions: parts, Batches: batches})
		if err != nil {
			return err
		}
		fmt.Printf("wrote %d partitions, %d MB of segments, %d batches each\n", st.Partitions, st.Bytes>>20, 4*batches)
	}
	cache, err := os.MkdirTemp("", "txnscope-evictbench-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cache)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd, base, err := benchproc.Serve(ctx, server, "serve", "--addr", "127.0.0.1:0", "--big=false", "--summary-cache-dir", cache,
		"--max-memory", strconv.FormatInt(maxMemory, 10), "--load", dir)
	if err != nil {
		return err
	}
	defer cmd.Wait()
	defer cancel()
	if err := ranked(base); err != nil {
		return err
	}
	if hwm, rss, err := benchproc.Status(cmd.Process.Pid); err == nil {
		fmt.Printf("before browsing: peak RSS %d MiB, RSS %d MiB\n", hwm>>10, rss>>10)
	}
	start := time.Now()
	for p := range parts {
		u := fmt.Sprintf("%s/sources/load1/partitions/t0/%d", base, p)
		for _, path := range []string{u, u + "/diagnosis", fmt.Sprintf("%s/api/v1/sources/load1/partitions/t0/%d/counts", base, p)} {
			if _, err := get(path); err != nil {
				return err
			}
		}
	}
	fmt.Printf("opened %d partitions in %s under --max-memory %d MiB\n", parts, time.Since(start).Round(time.Millisecond), maxMemory>>20)
	hwm, rss, err := benchproc.Status(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("server peak RSS (VmHWM) %d MiB, RSS at the end %d MiB\n", hwm>>10, rss>>10)
	m, err := get(base + "/metrics")
	if err != nil {
		return err
	}
	for _, name := range []string{"go_memstats_heap_alloc_bytes", "txnscope_opened_partition_bytes", "txnscope_opened_partition_evictions_total", "txnscope_memory_budget_bytes"} {
		if v := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(m); v != nil {
			f, _ := strconv.ParseFloat(v[1], 64)
			fmt.Printf("%s %.0f\n", name, f)
		} else {
			fmt.Printf("%s absent\n", name)
		}
	}
	return nil
}

// ranked waits for the index's ranking, so that its tail scans are not
// what is measured.
func ranked(base string) error {
	live := regexp.MustCompile(`data-scanning="(\w*)"`)
	for range 600 {
		page, err := get(base + "/")
		if err != nil {
			return err
		}
		if m := live.FindStringSubmatch(page); m != nil && m[1] != "true" {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the ranking did not end in a minute")
}

func get(u string) (string, error) {
	resp, err := http.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return string(b), err
}
