// Command loadbench measures `serve --load DIR` of a log directory of many
// partitions (the log-dir figures of docs/benchmarks.md): it writes the directory with
// internal/genlogdir into the system temp dir (or uses -dir), starts the
// server binary with default flags, and reports how long until the index
// lists every partition, how long until the LSO ranking is complete, that
// the stuck partitions rank first, and the server's peak RSS (VmHWM).
//
//	go build -o /tmp/server ./cmd/server
//	go run ./scripts/loadbench -server /tmp/server -partitions 2000
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/txnscope/txnscope/internal/genlogdir"
	"github.com/txnscope/txnscope/scripts/internal/benchproc"
)

func main() {
	server := flag.String("server", "", "the server binary (go build -o /tmp/server ./cmd/server)")
	dir := flag.String("dir", "", "log directory to serve (default: a new one of -partitions in the temp dir)")
	parts := flag.Int("partitions", 2000, "partitions to generate: 20 topics of partitions/20, plus 50+50 internal ones counted in")
	stuck := flag.Int("stuck", 6, "partitions left with an open transaction")
	batches := flag.Int("batches", 4, "data batches per segment")
	flag.Parse()
	if err := run(*server, *dir, *parts, *stuck, *batches); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func run(server, dir string, parts, nstuck, batches int) error {
	if server == "" {
		return fmt.Errorf("-server is required")
	}
	var want []string
	if dir == "" {
		var err error
		dir, err = os.MkdirTemp("", "txnscope-loadbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		topics, internal := 20, 50
		per := (parts - 2*internal) / topics
		for i := range nstuck {
			want = append(want, fmt.Sprintf("t%d-%d", (i*7)%topics, (i*13)%per))
		}
		t0 := time.Now()
		st, err := genlogdir.Write(dir, genlogdir.Options{Topics: topics, Partitions: per, Internal: internal, Metadata: true, Stuck: want, Batches: batches})
		if err != nil {
			return err
		}
		fmt.Printf("wrote %d partitions (%d MB of segments) in %s to %s\n", st.Partitions, st.Bytes>>20, time.Since(t0).Round(time.Millisecond), dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	cmd, base, err := benchproc.Serve(ctx, server, "--addr", "127.0.0.1:0", "--big=false", "--load", dir)
	if err != nil {
		return err
	}
	defer cmd.Wait()
	defer cancel()
	listening := time.Since(start)
	rows := regexp.MustCompile(`data-testid="partition-row-load1-`)
	scanned := regexp.MustCompile(`data-testid="index-live"[^>]*data-scanning="(true|false)"[^>]*data-scanned="(\d+)"[^>]*data-total="(\d+)"`)
	held := regexp.MustCompile(`data-testid="held-row-load1-([^"]+)"`)
	var listed, ranked time.Duration
	var page string
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		res, err := http.Get(base + "/")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		page = string(b)
		if listed == 0 && len(rows.FindAllString(page, -1)) > 0 {
			listed = time.Since(start)
			fmt.Printf("index lists %d partitions %s after start (listening after %s)\n", len(rows.FindAllString(page, -1)), listed.Round(time.Millisecond), listening.Round(time.Millisecond))
		}
		if m := scanned.FindStringSubmatch(page); m != nil && m[1] == "false" {
			ranked = time.Since(start)
			fmt.Printf("LSO ranking complete (%s of %s scanned) %s after start\n", m[2], m[3], ranked.Round(time.Millisecond))
			break
		}
	}
	if ranked == 0 {
		return fmt.Errorf("the ranking did not complete in 5 minutes")
	}
	var got []string
	for _, m := range held.FindAllStringSubmatch(page, -1) {
		got = append(got, m[1])
	}
	fmt.Printf("held back, in rank order: %s\n", strings.Join(got, " "))
	if want != nil {
		ok := len(got) == len(want)
		for _, w := range want {
			ok = ok && strings.Contains(" "+strings.Join(got, " ")+" ", " "+w+" ")
		}
		fmt.Printf("the %d stuck partitions rank first: %v\n", len(want), ok)
	}
	if hwm, _, err := benchproc.Status(cmd.Process.Pid); err == nil {
		fmt.Printf("server peak RSS (VmHWM): %d MB\n", hwm>>10)
	}
	// The baseline, in the same run: reading every segment of every
	// partition once with cat, the least a full load would cost.
	t1 := time.Now()
	n, err := catSegments(dir)
	if err != nil {
		return err
	}
	cat := time.Since(t1)
	fmt.Printf("baseline: cat of every .log (%d MB) took %s; ranking complete after %.2f× that, index listed after %.2f×\n",
		n>>20, cat.Round(time.Millisecond), float64(ranked)/float64(cat), float64(listed)/float64(cat))
	return nil
}

// catSegments runs cat over every .log file under dir, output discarded,
// and returns the bytes read.
func catSegments(dir string) (int64, error) {
	var files []string
	var total int64
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".log") {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// In chunks: 2,000 partitions' paths exceed no ARG_MAX, but 100,000 might.
	for i := 0; i < len(files); i += 1000 {
		c := exec.Command("cat", files[i:min(i+1000, len(files))]...)
		c.Stdout = io.Discard
		if err := c.Run(); err != nil {
			return 0, fmt.Errorf("cat: %w", err)
		}
	}
	return total, nil
}
